// Gemini embeddings (:embedContent, :batchEmbedContents): resolve through the chat adapter with the
// model segment checked as on the chat paths, a batch naming another model refused, titles and text parts
// as the prompt, usage only from a usageMetadata.
import test from "ava";
import { ProviderRequestError } from "../errors.js";
import { googleAdapter, googleEmbeddingsAdapter as adapter } from "../google.js";

const content = { parts: [{ text: "doc" }] };

test("resolve: embedContent and batchEmbedContents on v1, v1beta, v1alpha (query kept) resolve to the embeddings adapter", (t) => {
  t.deepEqual(googleAdapter.resolve("/v1beta/models/gemini-embedding-001:embedContent", "?key=k", { content }), {
    path: "/v1beta/models/gemini-embedding-001:embedContent?key=k",
    model: "gemini-embedding-001",
    stream: false,
    adapter,
  });
  t.deepEqual(googleAdapter.resolve("/v1/models/gemini-embedding-001:batchEmbedContents", "", { requests: [{ model: "models/gemini-embedding-001", content }] }), {
    path: "/v1/models/gemini-embedding-001:batchEmbedContents",
    model: "gemini-embedding-001",
    stream: false,
    adapter,
  });
  t.is(googleAdapter.resolve("/v1alpha/models/gemini-embedding-2-preview:embedContent", "", { content })?.adapter, adapter);
  t.is(adapter.name, "google");
  t.is(adapter.wire, "google");
  t.is(adapter.answersWithText, false);
});

test("resolve: other embedding paths and model segments that decode to a path are not governed (404)", (t) => {
  for (const path of [
    "/v1beta/models/gemini-embedding-001:asyncBatchEmbedContent",
    "/v1beta/models/gemini-embedding-001:predict",
    "/v1beta/tunedModels/x:embedContent",
    "/v2/models/gemini-embedding-001:embedContent",
    "/v1beta/models/..%2f..%2ffiles:embedContent",
    "/v1beta/models/%2e%2e:embedContent",
    "/v1beta/models/a%5Cb:batchEmbedContents",
    "/v1beta/models/%E0%A4%A:embedContent",
  ]) {
    t.is(googleAdapter.resolve(path, "", { content }), null, path);
  }
  t.is(googleAdapter.resolve("/v1beta/models/gemini%2Dembedding-001:embedContent", "", { content })?.path, "/v1beta/models/gemini-embedding-001:embedContent", "re-encoded from the decoded name");
});

test("resolve: a batch request naming another model than the path's is refused (400); models/ prefix or none is the same model", (t) => {
  const err = t.throws(() => googleAdapter.resolve("/v1beta/models/gemini-embedding-001:batchEmbedContents", "", { requests: [{ model: "models/gemini-embedding-001", content }, { model: "models/gemini-embedding-2-preview", content }] }), {
    instanceOf: ProviderRequestError,
  });
  t.is((err as ProviderRequestError).code, "invalid_body");
  t.truthy(googleAdapter.resolve("/v1beta/models/gemini-embedding-001:batchEmbedContents", "", { requests: [{ model: "gemini-embedding-001", content }, { content }] }));
});

test("promptParts / mapPromptText: title then text parts, per request of a batch; other parts untouched", (t) => {
  const single = { content: { parts: [{ text: "Patient jane@example.com" }, { inlineData: { mimeType: "image/png", data: "AAAA" } }, { text: "page 2" }] }, title: "Record", taskType: "RETRIEVAL_DOCUMENT" };
  t.deepEqual(adapter.promptParts(single), ["Record", "Patient jane@example.com", "page 2"]);
  const batch = {
    requests: [
      { model: "models/gemini-embedding-001", content: { role: "user", parts: [{ text: "first" }] } },
      { model: "models/gemini-embedding-001", content: { role: "user", parts: [{ text: "second" }] }, title: "T2" },
    ],
  };
  t.deepEqual(adapter.promptParts(batch), ["first", "T2", "second"]);
  t.is(adapter.promptText(batch), "first\n\nT2\n\nsecond");
  const seen: string[] = [];
  const mapped = adapter.mapPromptText(single, (s) => {
    seen.push(s);
    return `<${s}>`;
  }) as typeof single;
  t.deepEqual(seen, adapter.promptParts(single));
  t.deepEqual(mapped, { ...single, title: "<Record>", content: { parts: [{ text: "<Patient jane@example.com>" }, single.content.parts[1]!, { text: "<page 2>" }] } });
  t.deepEqual(adapter.promptParts(adapter.mapPromptText(batch, (s) => s.toUpperCase())), ["FIRST", "T2", "SECOND"]);
});

test("parseResponse: no usage in a Gemini API answer (counted locally); a usageMetadata's promptTokenCount when present; errors", (t) => {
  const answer = { embeddings: [{ values: [0.1, 0.2] }, { values: [0.3, 0.4] }] };
  t.deepEqual(adapter.parseResponse(answer), { completionText: "", toolCalls: [] });
  t.deepEqual(adapter.parseResponse({ embedding: { values: [1] }, usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 } }).usage, { inputTokens: 5, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0 });
  t.is(adapter.parseResponse({ embedding: { values: [1] }, usageMetadata: { totalTokenCount: 3 } }).usage?.inputTokens, 3);
  t.is(adapter.parseResponse({ error: { code: 400, message: "API key not valid.", status: "INVALID_ARGUMENT" } }).errorMessage, "API key not valid.");
  t.deepEqual(adapter.mapCompletionText(answer, () => "x"), answer);
});
