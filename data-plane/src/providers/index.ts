// Public API of the provider layer: adapters for the five providers, the SSE parser and the token estimator.
export type {
  ErrorEventOptions,
  ProviderAdapter,
  ProviderName,
  ResponseFacts,
  StreamObserver,
  ToolCallFact,
  UpstreamTarget,
  Usage,
  WireFormat,
} from "./types.js";
export { PROVIDERS, getProvider, isProviderName } from "./registry.js";
export { SseParser, parseSse } from "./sse-parser.js";
export type { SseEvent, SseHandlers } from "./sse-parser.js";
export { estimateTokens } from "./estimate-tokens.js";
export { ProviderRequestError } from "./errors.js";
export type { ProviderErrorCode } from "./errors.js";
export { openaiAdapter, openaiEmbeddingsAdapter } from "./openai.js";
export { openaiResponsesAdapter } from "./openai-responses.js";
export { anthropicAdapter } from "./anthropic.js";
export { googleAdapter, googleEmbeddingsAdapter, stripModelsPrefix } from "./google.js";
export { mistralAdapter, mistralEmbeddingsAdapter } from "./mistral.js";
export { cohereAdapter, cohereEmbeddingsAdapter } from "./cohere.js";
