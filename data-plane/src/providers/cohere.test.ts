// Cohere adapter: resolve, prompt text and redaction, billed usage, completion redaction, error event.
import test from "ava";
import { CohereClientV2 } from "cohere-ai";
import { fetchWithAppendedEvent, startFakeProviders } from "../../../test/fakes/providers/index.js";
import { fakeStream } from "./testing/fake-stream.js";
import { cohereAdapter as adapter } from "./cohere.js";
import { parseSse } from "./sse-parser.js";

const body = {
  model: "command-a-03-2025",
  messages: [
    { role: "user", content: "Hello" },
    { role: "system", content: "System here" },
    { role: "assistant", tool_plan: "I will look it up.", tool_calls: [{ id: "lookup_1", type: "function", function: { name: "lookup", arguments: "{\"City\":\"Paris\"}" } }] },
    { role: "tool", tool_call_id: "lookup_1", content: [{ type: "document", document: { data: "{\"a\":1}" } }, { type: "text", text: "tool text" }] },
    { role: "user", content: [{ type: "text", text: "Thanks" }] },
  ],
};

test("resolve: /chat/completions and /v2/chat; the v1 chat API and other paths are not governed", (t) => {
  t.deepEqual(adapter.resolve("/chat/completions", "", { model: "command-r-08-2024", stream: true }), { path: "/v2/chat", model: "command-r-08-2024", stream: true });
  t.deepEqual(adapter.resolve("/v2/chat", "", { model: "command-a-03-2025" }), { path: "/v2/chat", model: "command-a-03-2025", stream: false });
  t.is(adapter.resolve("/v1/chat", "", { message: "hi" }), null);
  t.is(adapter.resolve("/v2/embed", "", {})?.adapter?.answersWithText, false, "embeddings resolve to their own adapter (embeddings/cohere.test.ts)");
  t.is(adapter.resolve("/v2/rerank", "", {}), null);
});

test("promptText / mapPromptText: system first, string and text items, tool plan and call arguments of the history, tool-result document data", (t) => {
  t.deepEqual(adapter.promptParts(body), ["System here", "Hello", "I will look it up.", "Paris", "{\"a\":1}", "tool text", "Thanks"]);
  const mapped = adapter.mapPromptText(body, (s) => s.toLowerCase()) as typeof body;
  t.deepEqual(adapter.promptParts(mapped), ["system here", "hello", "i will look it up.", "paris", "{\"a\":1}", "tool text", "thanks"]);
  t.is(mapped.messages[2]?.tool_calls?.[0]?.function.arguments, '{"City":"paris"}', "keys are not text");
  t.deepEqual(mapped.messages[3]?.content?.[0], body.messages[3]?.content?.[0]);
});

test("promptParts / mapPromptText: top-level documents after the system messages, tool documents in place, data leaves in key order", (t) => {
  const rag = {
    model: "command-a-03-2025",
    documents: [
      "plain string document",
      { id: "doc-1", data: { title: "Handbook", text: "chapter text", meta: { year: 2024, tags: ["hr", "policy"], draft: false } } },
      { data: { snippet: "third doc" } },
      { id: "no-data" },
    ],
    messages: [
      { role: "user", content: "Question" },
      { role: "system", content: "System" },
      { role: "assistant", tool_calls: [{ id: "c1", type: "function", function: { name: "lookup", arguments: "{}" } }] },
      {
        role: "tool",
        tool_call_id: "c1",
        content: [
          { type: "document", document: { id: "r1", data: { name: "Jo", nested: { note: "tool note" }, n: 3 } } },
          { type: "text", text: "tool text" },
        ],
      },
    ],
  };
  const original = structuredClone(rag);
  const parts = ["System", "plain string document", "Handbook", "chapter text", "hr", "policy", "third doc", "Question", "Jo", "tool note", "tool text"];
  t.deepEqual(adapter.promptParts(rag), parts);
  t.is(adapter.promptText(rag), parts.join("\n\n"));
  const seen: string[] = [];
  const mapped = adapter.mapPromptText(rag, (s) => {
    seen.push(s);
    return `<${s}>`;
  }) as typeof rag;
  t.deepEqual(seen, parts);
  t.deepEqual(adapter.promptParts(mapped), parts.map((s) => `<${s}>`));
  t.deepEqual(mapped.documents, [
    "<plain string document>",
    { id: "doc-1", data: { title: "<Handbook>", text: "<chapter text>", meta: { year: 2024, tags: ["<hr>", "<policy>"], draft: false } } },
    { data: { snippet: "<third doc>" } },
    { id: "no-data" },
  ]);
  t.deepEqual(mapped.messages[3]?.content?.[0], { type: "document", document: { id: "r1", data: { name: "<Jo>", nested: { note: "<tool note>" }, n: 3 } } });
  t.deepEqual(rag, original, "the original is untouched");
});

test("parseResponse: billed units are the usage, tool calls, error bodies", (t) => {
  const json = {
    id: "x",
    message: { role: "assistant", content: [{ type: "text", text: "Part one" }, { type: "text", text: "Part two" }], tool_calls: [{ id: "t1", type: "function", function: { name: "lookup", arguments: "{}" } }] },
    finish_reason: "COMPLETE",
    usage: { billed_units: { input_tokens: 5, output_tokens: 26 }, tokens: { input_tokens: 71, output_tokens: 26 }, cached_tokens: 2 },
  };
  const facts = adapter.parseResponse(json);
  t.is(facts.completionText, "Part one\n\nPart two");
  t.deepEqual(facts.usage, { inputTokens: 5, outputTokens: 26, cachedInputTokens: 2, cacheWriteTokens: 0 });
  t.deepEqual(facts.toolCalls, [{ name: "lookup", id: "t1" }]);
  t.is(adapter.parseResponse({ id: "e", message: "invalid api token" }).errorMessage, "invalid api token");
  t.is(facts.errorMessage, undefined);
  // Cohere's own failed generation in a 200 answer.
  const failed = adapter.parseResponse({ ...json, finish_reason: "ERROR" });
  t.is(failed.errorMessage, "the answer ended with finish_reason ERROR");
  t.deepEqual(failed.usage, facts.usage);
  for (const finish of ["COMPLETE", "MAX_TOKENS", "TOOL_CALL", "STOP_SEQUENCE", "TIMEOUT"]) t.is(adapter.parseResponse({ ...json, finish_reason: finish }).errorMessage, undefined, finish);
  t.deepEqual(adapter.parseResponse({ message: { content: [] }, usage: { tokens: { input_tokens: 9, output_tokens: 1 } } }).usage, { inputTokens: 9, outputTokens: 1, cachedInputTokens: 0, cacheWriteTokens: 0 });
  const redacted = adapter.mapCompletionText(json, (s) => s.replace("one", "1"));
  t.is(adapter.parseResponse(redacted).completionText, "Part 1\n\nPart two");
});

test("errorEvent: message-end with finish_reason ERROR, seen as such by the cohere client", async (t) => {
  const text = adapter.errorEvent("Blocked by policy", "policy_violation");
  const { events } = parseSse(text);
  t.is(events[0]?.event, "message-end");
  t.like(JSON.parse(events[0]?.data ?? "{}"), { type: "message-end", delta: { finish_reason: "ERROR", error: "Blocked by policy", error_code: "policy_violation" } });
  const observer = adapter.streamObserver();
  observer.push(new TextEncoder().encode(text));
  t.is(observer.end().errorMessage, "Blocked by policy");

  const fake = await startFakeProviders({ text: "partial answer", truncate: { afterEvents: 4 } });
  try {
    const client = new CohereClientV2({ token: "k", environment: fake.urls.cohere, maxRetries: 0, fetch: fetchWithAppendedEvent(text) });
    let got = "";
    let finish: string | undefined;
    let error: string | undefined;
    for await (const event of await client.chatStream({ model: "command-a-03-2025", messages: [{ role: "user", content: "hi" }] })) {
      if (event.type === "content-delta") got += event.delta?.message?.content?.text ?? "";
      if (event.type === "message-end") {
        finish = event.delta?.finishReason;
        error = event.delta?.error;
      }
    }
    t.is(got, "partial ");
    t.is(finish, "ERROR");
    t.is(error, "Blocked by policy");
  } finally {
    await fake.close();
  }
});

test("stream observer: a stream that ends cleanly before message-end ended early; with message-end (ERROR included) or no event it did not", async (t) => {
  const fake = await startFakeProviders({ text: "A whole answer.", usage: { inputTokens: 30, outputTokens: 7 } });
  try {
    const { send, whole, events, observe } = await fakeStream(fake, "cohere", () => adapter.streamObserver());
    t.true(events.at(-2)!.startsWith("event: message-end\n"), "the provider's stream ends with its marker, then [DONE]");
    t.is(events.at(-1), "data: [DONE]\n\n");
    const complete = observe(whole);
    t.is(complete.endedEarly, undefined);
    t.is(complete.errorMessage, undefined);
    t.like(complete.usage, { inputTokens: 30, outputTokens: 7 });
    t.is(observe(events.slice(0, -1).join("")).endedEarly, undefined, "message-end is the marker: a stream cut before [DONE] is whole");

    // content-end came, message-end (and the usage it carries) did not.
    const cut = observe(events.slice(0, -2).join(""));
    t.true(cut.endedEarly);
    t.regex(cut.errorMessage ?? "", /ended before its end marker \(message-end\)/);
    t.is(cut.completionText, "A whole answer.");
    t.is(cut.usage, undefined);

    // Cohere's own failure is a message-end with finish_reason ERROR: its error stays.
    fake.script({ text: "A whole answer.", streamError: { afterEvents: 3, message: "backend went away" } });
    const failed = observe(await send());
    t.is(failed.errorMessage, "backend went away");
    t.is(failed.endedEarly, undefined);
    t.is(observe("").endedEarly, undefined);
    // A failure without a message is a failure still.
    const silent = observe('event: message-end\ndata: {"type":"message-end","delta":{"finish_reason":"ERROR"}}\n\n');
    t.regex(silent.errorMessage ?? "", /finish_reason ERROR/);
    t.is(silent.endedEarly, undefined);
  } finally {
    await fake.close();
  }
});

test("afterRedaction: a redacted answer's logprobs (the tokens of its text) are left out; the original keeps them (session 25, F3)", (t) => {
  const json = {
    id: "c1",
    finish_reason: "COMPLETE",
    message: { role: "assistant", content: [{ type: "text", text: "mail jo@x.io" }] },
    logprobs: [{ token_ids: [1, 2], text: "jo@x.io", logprobs: [-0.1, -0.2] }],
  };
  const redacted = adapter.mapCompletionText(json, (s) => s.replace("jo@x.io", "[E]")) as typeof json;
  adapter.afterRedaction!(json, redacted, (s) => s);
  t.false("logprobs" in redacted);
  t.is(adapter.parseResponse(redacted).completionText, "mail [E]");
  t.is(json.logprobs.length, 1);
});
