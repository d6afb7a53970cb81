// Cohere embeddings (POST /v2/embed): resolve through the chat adapter, texts and text parts of inputs as
// the prompt (images are not text), billed usage incl. image tokens, error bodies.
import test from "ava";
import { cohereAdapter, cohereEmbeddingsAdapter as adapter } from "../cohere.js";

test("resolve: /v2/embed resolves to the embeddings adapter; /v1/embed and other paths are not governed", (t) => {
  t.deepEqual(cohereAdapter.resolve("/v2/embed", "", { model: "embed-v4.0", texts: ["a"] }), { path: "/v2/embed", model: "embed-v4.0", stream: false, adapter });
  t.deepEqual(cohereAdapter.resolve("/v2/embed/", "?q=1", {}), { path: "/v2/embed?q=1", model: "", stream: false, adapter });
  for (const path of ["/v1/embed", "/embed", "/v2/embed-jobs", "/v2/rerank"]) t.is(cohereAdapter.resolve(path, "", { texts: ["a"] }), null, path);
  t.is(adapter.name, "cohere");
  t.is(adapter.wire, "cohere");
  t.is(adapter.answersWithText, false);
});

test("promptParts / mapPromptText: each of `texts`, then the text parts of `inputs`; image parts and `images` untouched", (t) => {
  const body = {
    model: "embed-v4.0",
    input_type: "search_document",
    texts: ["Invoice for jane@example.com", "second"],
    images: ["data:image/png;base64,iVBORw0KGgo="],
    inputs: [{ content: [{ type: "text", text: "caption" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] }, { content: [{ type: "text", text: "" }] }],
    max_tokens: 512,
  };
  t.deepEqual(adapter.promptParts(body), ["Invoice for jane@example.com", "second", "caption"]);
  t.is(adapter.promptText(body), "Invoice for jane@example.com\n\nsecond\n\ncaption");
  const seen: string[] = [];
  const mapped = adapter.mapPromptText(body, (s) => {
    seen.push(s);
    return s.toUpperCase();
  }) as typeof body;
  t.deepEqual(seen, adapter.promptParts(body));
  t.deepEqual(mapped.texts, ["INVOICE FOR JANE@EXAMPLE.COM", "SECOND"]);
  t.deepEqual(mapped.inputs[0]?.content, [{ type: "text", text: "CAPTION" }, body.inputs[0]!.content[1]]);
  t.deepEqual(mapped.images, body.images);
  t.is(body.texts[0], "Invoice for jane@example.com", "the original is untouched");
});

test("parseResponse: billed input tokens (with image tokens), else raw tokens; no completion, no model; {id, message} errors", (t) => {
  const answer = { id: "e-1", embeddings: { float: [[0.1, 0.2]] }, texts: ["a"], meta: { api_version: { version: "2" }, billed_units: { input_tokens: 6 } }, response_type: "embeddings_by_type" };
  t.deepEqual(adapter.parseResponse(answer), { completionText: "", toolCalls: [], usage: { inputTokens: 6, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0 } });
  t.is(adapter.parseResponse({ ...answer, meta: { billed_units: { input_tokens: 4, image_tokens: 1000 } } }).usage?.inputTokens, 1004);
  t.is(adapter.parseResponse({ ...answer, meta: { billed_units: { images: 1 } } }).usage, undefined, "per-image billing is no token count");
  t.is(adapter.parseResponse({ ...answer, meta: { tokens: { input_tokens: 8 } } }).usage?.inputTokens, 8);
  t.is(adapter.parseResponse({ id: "e-2", embeddings: {} }).usage, undefined);
  t.is(adapter.parseResponse({ id: "x", message: "invalid api token" }).errorMessage, "invalid api token");
  t.deepEqual(adapter.mapCompletionText(answer, () => "z"), answer);
});
