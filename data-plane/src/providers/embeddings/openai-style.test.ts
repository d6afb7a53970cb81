// OpenAI-style embeddings (OpenAI and Mistral POST /v1/embeddings): resolve through each provider's chat
// adapter, token arrays refused, input texts as prompt parts and their redaction, usage of the answer.
import test from "ava";
import { ProviderRequestError } from "../errors.js";
import { mistralAdapter, mistralEmbeddingsAdapter } from "../mistral.js";
import { openaiAdapter, openaiEmbeddingsAdapter } from "../openai.js";

const chats = [
  ["openai", openaiAdapter, openaiEmbeddingsAdapter],
  ["mistral", mistralAdapter, mistralEmbeddingsAdapter],
] as const;

test("resolve: /v1/embeddings (query kept) resolves to the provider's embeddings adapter (and openai's /embeddings); other paths stay ungoverned", (t) => {
  for (const [name, chat, embeddings] of chats) {
    const target = chat.resolve("/v1/embeddings", "?x=1", { model: "m-embed", input: "hello" });
    t.deepEqual(target, { path: "/v1/embeddings?x=1", model: "m-embed", stream: false, adapter: embeddings }, name);
    t.is(chat.resolve("//v1/embeddings/", "", { input: ["a"] })?.adapter, embeddings, `${name}: path normalised`);
    t.is(chat.resolve("/v1/embeddings", "", {})?.model, "", `${name}: no model named`);
    for (const path of ["/v1/embeddings/abc", "/v2/embeddings", "/v1/embedding"]) t.is(chat.resolve(path, "", { input: "x" }), null, `${name} ${path}`);
    // An openai SDK whose base URL lacks /v1 calls /embeddings: the same endpoint. Mistral's SDK names /v1 itself.
    t.is(chat.resolve("/embeddings", "", { input: "x" })?.path, name === "openai" ? "/v1/embeddings" : undefined, `${name} /embeddings`);
    t.is(chat.resolve("/v1/chat/completions", "", { model: "c" })?.adapter, undefined, `${name}: chat stays the chat adapter's`);
  }
});

test("the embeddings adapter is its provider's: name, chat wire, base URL, credential; no text in its answers", (t) => {
  for (const [name, chat, embeddings] of chats) {
    t.is(embeddings.name, chat.name, name);
    t.is(embeddings.wire, chat.wire, name);
    t.is(embeddings.defaultBaseUrl, chat.defaultBaseUrl, name);
    t.deepEqual(embeddings.authHeaders, chat.authHeaders, name);
    t.is(embeddings.answersWithText, false, name);
    t.is(chat.answersWithText, undefined, `${name}: the chat adapter answers with text`);
    t.is(embeddings.errorEvent("stop", "policy_violation"), chat.errorEvent("stop", "policy_violation"), name);
  }
});

test("token arrays (integers) cannot be judged by text policies: refused with ProviderRequestError (400)", (t) => {
  for (const [name, chat] of chats) {
    for (const input of [[1, 2, 3], [[1, 2], [3]], ["text", 42], { text: "x" }, 7, null]) {
      const err = t.throws(() => chat.resolve("/v1/embeddings", "", { model: "text-embedding-3-small", input }), { instanceOf: ProviderRequestError }, `${name} ${JSON.stringify(input)}`);
      t.is((err as ProviderRequestError).code, "invalid_body");
      t.regex((err as Error).message, /token arrays cannot be judged/);
    }
    t.truthy(chat.resolve("/v1/embeddings", "", { model: "m", input: [] }), `${name}: an empty list is the provider's to refuse`);
  }
});

test("promptParts: `input` as a string or each string of the array, in order; mapPromptText rewrites exactly those", (t) => {
  const adapter = openaiEmbeddingsAdapter;
  const body = { model: "text-embedding-3-small", input: ["Contract of jane@example.com", "", "Second document"], encoding_format: "base64", dimensions: 256, user: "user-42" };
  t.deepEqual(adapter.promptParts(body), ["Contract of jane@example.com", "Second document"]);
  t.is(adapter.promptText(body), "Contract of jane@example.com\n\nSecond document");
  t.is(adapter.systemText(body), "");
  const seen: string[] = [];
  const mapped = adapter.mapPromptText(body, (s) => {
    seen.push(s);
    return s.replace("jane@example.com", "[REDACTED:email]");
  });
  t.deepEqual(seen, adapter.promptParts(body));
  t.deepEqual(mapped, { ...body, input: ["Contract of [REDACTED:email]", "", "Second document"] });
  t.deepEqual(body.input, ["Contract of jane@example.com", "", "Second document"], "the original is untouched");
  const single = { model: "mistral-embed", input: "one text" };
  t.deepEqual(mistralEmbeddingsAdapter.promptParts(single), ["one text"]);
  t.deepEqual(mistralEmbeddingsAdapter.mapPromptText(single, (s) => s.toUpperCase()), { model: "mistral-embed", input: "ONE TEXT" });
  t.deepEqual(adapter.promptParts({}), []);
  t.deepEqual(adapter.promptParts("not json"), []);
});

test("parseResponse: usage.prompt_tokens as input (no output), the answering model, no completion or tool calls; error bodies", (t) => {
  const answer = {
    object: "list",
    data: [{ object: "embedding", index: 0, embedding: [0.1, -0.2] }],
    model: "text-embedding-3-small",
    usage: { prompt_tokens: 12, total_tokens: 12 },
  };
  t.deepEqual(openaiEmbeddingsAdapter.parseResponse(answer), {
    completionText: "",
    toolCalls: [],
    usage: { inputTokens: 12, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0 },
    model: "text-embedding-3-small",
  });
  t.is(mistralEmbeddingsAdapter.parseResponse({ id: "e1", object: "list", data: [], model: "mistral-embed", usage: { total_tokens: 9 } }).usage?.inputTokens, 9, "total_tokens when prompt_tokens is absent");
  t.is(openaiEmbeddingsAdapter.parseResponse({ object: "list", data: [] }).usage, undefined);
  t.is(openaiEmbeddingsAdapter.parseResponse({ error: { message: "bad model", type: "invalid_request_error" } }).errorMessage, "bad model");
  t.is(mistralEmbeddingsAdapter.parseResponse({ object: "error", message: "Invalid model", type: "invalid_model" }).errorMessage, "Invalid model");
  const copy = openaiEmbeddingsAdapter.mapCompletionText(answer, () => "changed");
  t.deepEqual(copy, answer, "no text to rewrite");
  t.not(copy, answer, "a copy");
  t.deepEqual(openaiEmbeddingsAdapter.mapReasoningText(answer, () => "changed"), answer);
});
