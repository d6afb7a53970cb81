// Mistral adapter: resolve, chunk-array content, thinking chunks, prompt/completion redaction, error event.
import { HTTPClient, Mistral } from "@mistralai/mistralai";
import test from "ava";
import { fetchWithAppendedEvent, startFakeProviders } from "../../../test/fakes/providers/index.js";
import { fakeStream } from "./testing/fake-stream.js";
import { mistralAdapter as adapter } from "./mistral.js";
import { parseSse } from "./sse-parser.js";

const body = {
  model: "magistral-medium-latest",
  messages: [
    { role: "user", content: [{ type: "text", text: "Describe" }, { type: "image_url", image_url: "https://example.com/a.png" }] },
    { role: "system", content: "System prompt" },
    { role: "assistant", content: "", tool_calls: [{ id: "abc123XYZ", function: { name: "f", arguments: { greeting: "hi there", n: 1 } } }] },
    { role: "tool", tool_call_id: "abc123XYZ", name: "f", content: "tool says hi" },
  ],
};

test("resolve: /chat/completions and /v1/chat/completions; /v1/embeddings to its own adapter; nothing else", (t) => {
  t.deepEqual(adapter.resolve("/chat/completions", "", { model: "mistral-large-latest", stream: true }), { path: "/v1/chat/completions", model: "mistral-large-latest", stream: true });
  t.deepEqual(adapter.resolve("/v1/chat/completions", "", { model: "codestral-latest" }), { path: "/v1/chat/completions", model: "codestral-latest", stream: false });
  t.is(adapter.resolve("/v1/fim/completions", "", { model: "codestral-latest" }), null);
  t.is(adapter.resolve("/v1/agents/completions", "", {}), null);
  t.is(adapter.resolve("/v1/embeddings", "", { model: "mistral-embed", input: "x" })?.adapter?.answersWithText, false, "embeddings/openai-style.test.ts");
});

test("promptText and mapPromptText over string and chunk-array contents, system first", (t) => {
  t.deepEqual(adapter.promptParts(body), ["System prompt", "Describe", "hi there", "1", "tool says hi"]); // the empty assistant content is no part; object arguments are walked, numbers included
  const mapped = adapter.mapPromptText(body, (s) => s.replace(/hi/g, "**")) as typeof body;
  t.deepEqual(adapter.promptParts(mapped), ["System prompt", "Describe", "** there", "1", "tool says **"]);
  t.deepEqual(mapped.messages[2]?.tool_calls?.[0]?.function.arguments, { greeting: "** there", n: 1 });
  t.deepEqual(mapped.messages[0]?.content, [{ type: "text", text: "Describe" }, { type: "image_url", image_url: "https://example.com/a.png" }]);
});

test("reasoning models: thinking chunks are not completion text, in JSON and in a stream", (t) => {
  const content = [{ type: "thinking", thinking: [{ type: "text", text: "secret plan" }] }, { type: "text", text: "Final answer" }];
  const json = { model: "magistral-medium-2509", choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }], usage: { prompt_tokens: 3, completion_tokens: 9, total_tokens: 12 } };
  t.is(adapter.parseResponse(json).completionText, "Final answer");
  const redacted = adapter.mapCompletionText(json, (s) => s.toUpperCase()) as typeof json;
  t.deepEqual(redacted.choices[0]?.message.content, [{ type: "thinking", thinking: [{ type: "text", text: "secret plan" }] }, { type: "text", text: "FINAL ANSWER" }]);
  const observer = adapter.streamObserver();
  const chunk = (delta: unknown, extra = {}) => `data: ${JSON.stringify({ id: "1", model: "m", choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;
  observer.push(new TextEncoder().encode(chunk({ content: [{ type: "thinking", thinking: [{ type: "text", text: "hmm" }] }] }) + chunk({ content: [{ type: "text", text: "Final " }] }) + chunk({ content: "answer" }, { usage: { prompt_tokens: 3, completion_tokens: 9 } }) + "data: [DONE]\n\n"));
  const facts = observer.end();
  t.is(facts.completionText, "Final answer");
  t.deepEqual(facts.usage, { inputTokens: 3, outputTokens: 9, cachedInputTokens: 0, cacheWriteTokens: 0 });
});

test("error bodies in Mistral's shapes give errorMessage", (t) => {
  t.is(adapter.parseResponse({ message: "Unauthorized", request_id: "r" }).errorMessage, "Unauthorized");
  t.is(adapter.parseResponse({ object: "error", message: "Invalid model", type: "invalid_model", param: null, code: "1500" }).errorMessage, "Invalid model");
  t.regex(adapter.parseResponse({ detail: [{ loc: ["body", "model"], msg: "Field required" }] }).errorMessage ?? "", /Field required/);
});

test("a 200 answer with a choice finishing \"error\" (Mistral's failed generation) gives errorMessage; other finishes do not", (t) => {
  const answer = (finishes: string[], extra: Record<string, unknown> = {}) => ({
    id: "a", object: "chat.completion", model: "mistral-small-latest",
    choices: finishes.map((f, index) => ({ index, message: { role: "assistant", content: "Half" }, finish_reason: f, ...extra })),
    usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
  });
  const failed = adapter.parseResponse(answer(["error"]));
  t.is(failed.errorMessage, 'the answer ended with finish_reason "error"');
  t.is(failed.finishReason, "error");
  t.deepEqual(failed.usage, { inputTokens: 3, outputTokens: 1, cachedInputTokens: 0, cacheWriteTokens: 0 });
  t.is(adapter.parseResponse(answer(["stop", "error"])).errorMessage, 'the answer ended with finish_reason "error"', "any failed choice");
  t.is(adapter.parseResponse(answer(["error"], { error: { message: "backend went away" } })).errorMessage, "backend went away");
  for (const finish of ["stop", "length", "tool_calls", "model_length"]) t.is(adapter.parseResponse(answer([finish])).errorMessage, undefined, finish);
});

test("errorEvent: Mistral's own failure chunk (finish_reason \"error\"), the message beside the choices, no [DONE]; the SDK yields it, the observer reads the message", async (t) => {
  const text = adapter.errorEvent("Blocked by policy", "policy_violation", { details: { trace_id: "trc_1", policy_id: "pol_1" } });
  const { events } = parseSse(text);
  t.is(events.length, 1, "no end marker is made up");
  t.like(JSON.parse(events[0]?.data ?? "{}"), {
    id: "trc_1",
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta: { content: "" }, finish_reason: "error" }],
    error: { object: "error", message: "Blocked by policy", code: "policy_violation", trace_id: "trc_1", policy_id: "pol_1" },
  });
  const observer = adapter.streamObserver();
  observer.push(new TextEncoder().encode(text));
  const facts = observer.end();
  t.is(facts.errorMessage, "Blocked by policy");
  t.is(facts.endedEarly, undefined);
  t.is(facts.finishReason, "error");

  const fake = await startFakeProviders({ text: "partial answer", truncate: { afterEvents: 2 } });
  try {
    const appended = fetchWithAppendedEvent(text);
    const httpClient = new HTTPClient({ fetcher: (input, init) => appended(input, init) });
    const client = new Mistral({ apiKey: "k", serverURL: fake.urls.mistral, httpClient });
    const stream = await client.chat.stream({ model: "mistral-small-latest", messages: [{ role: "user", content: "hi" }] });
    let got = "";
    const finishes: unknown[] = [];
    for await (const event of stream) {
      const choice = event.data.choices[0];
      if (typeof choice?.delta.content === "string") got += choice.delta.content;
      if (choice?.finishReason) finishes.push(choice.finishReason);
    }
    t.is(got, "part");
    t.deepEqual(finishes, ["error"], "the SDK hands the failure to the caller as Mistral's own finish reason, and raises no validation error");
  } finally {
    await fake.close();
  }
});

test("stream observer: Mistral's own failure (a chunk finishing with \"error\", then [DONE]) is an error with the text before it; not a stream that ended early", async (t) => {
  const fake = await startFakeProviders({ text: "Half an answer.", finishReason: "error", usage: { inputTokens: 30, outputTokens: 7 } });
  try {
    const { whole, observe } = await fakeStream(fake, "mistral", () => adapter.streamObserver());
    const facts = observe(whole);
    t.is(facts.errorMessage, 'the stream ended with finish_reason "error"');
    t.is(facts.endedEarly, undefined);
    t.is(facts.completionText, "Half an answer.");
    t.like(facts.usage, { inputTokens: 30, outputTokens: 7 });
    // Without [DONE] after it, too: the provider told the client itself.
    t.is(observe(whole.replace("data: [DONE]\n\n", "")).endedEarly, undefined);
  } finally {
    await fake.close();
  }
});

test("stream observer: a stream that ends cleanly before data: [DONE] ended early, even after its finish chunk with usage; with [DONE] or Mistral's own error it did not", async (t) => {
  const fake = await startFakeProviders({ text: "A whole answer.", usage: { inputTokens: 30, outputTokens: 7 } });
  try {
    const { send, whole, events, observe } = await fakeStream(fake, "mistral", () => adapter.streamObserver());
    t.is(events.at(-1), "data: [DONE]\n\n", "Mistral's stream ends with [DONE] too");
    t.is(observe(whole).endedEarly, undefined);
    t.is(observe(whole).errorMessage, undefined);

    // The finish chunk (which carries Mistral's usage) came, [DONE] did not.
    const cut = observe(events.slice(0, -1).join(""));
    t.true(cut.endedEarly);
    t.regex(cut.errorMessage ?? "", /data: \[DONE\]/);
    t.is(cut.finishReason, "stop");
    t.like(cut.usage, { inputTokens: 30, outputTokens: 7 });
    t.is(cut.completionText, "A whole answer.");
    const mid = observe(events.slice(0, 3).join(""));
    t.true(mid.endedEarly);
    t.is(mid.usage, undefined);

    fake.script({ text: "A whole answer.", streamError: { afterEvents: 2, message: "backend went away" } });
    const failed = observe(await send());
    t.is(failed.errorMessage, "backend went away");
    t.is(failed.endedEarly, undefined);
    t.is(observe("").endedEarly, undefined);
  } finally {
    await fake.close();
  }
});

test("a reasoning model's thinking chunks sent back in the history are input text, in content order, rewritten in place (session 25, F1)", (t) => {
  const history = {
    model: "magistral-medium-latest",
    messages: [
      { role: "system", content: [{ type: "thinking", thinking: "system thought" }, { type: "text", text: "Be brief" }] },
      { role: "user", content: "Question" },
      { role: "assistant", content: [{ type: "thinking", thinking: [{ type: "text", text: "earlier plan" }, { type: "reference", reference_ids: [1] }], closed: true }, { type: "text", text: "Answer" }] },
      { role: "user", content: "go on" },
    ],
  };
  const parts = ["system thought", "Be brief", "Question", "earlier plan", "Answer", "go on"];
  t.deepEqual(adapter.promptParts(history), parts);
  t.is(adapter.systemText(history), "system thought\n\nBe brief", "promptText starts with systemText");
  const mapped = adapter.mapPromptText(history, (s) => s.toUpperCase()) as typeof history;
  t.deepEqual(adapter.promptParts(mapped), parts.map((s) => s.toUpperCase()));
  t.deepEqual(mapped.messages[2]!.content, [{ type: "thinking", thinking: [{ type: "text", text: "EARLIER PLAN" }, { type: "reference", reference_ids: [1] }], closed: true }, { type: "text", text: "ANSWER" }]);
});
