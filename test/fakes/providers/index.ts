// Fake model providers for tests: one local server imitating the OpenAI, Anthropic, Gemini, Mistral and Cohere APIs.
export { startFakeProviders } from "./server.js";
export { rawRequest } from "./raw-client.js";
export type { RawResponse } from "./raw-client.js";
export type { FakeError, FakeProviderName, FakeProviders, FakeScript, FakeToolCall, FakeUsage, RecordedRequest } from "./types.js";
export { nativeRequest } from "./native-requests.js";
export type { NativeRequest } from "./native-requests.js";
export { fetchWithAppendedEvent } from "./error-splice.js";
export { base64Vector, fakeVector } from "./embeddings-fake.js";
