// Anthropic adapter: resolve, prompt text and redaction, completion redaction, native error event.
import Anthropic from "@anthropic-ai/sdk";
import test from "ava";
import { fetchWithAppendedEvent, startFakeProviders } from "../../../test/fakes/providers/index.js";
import { fakeStream } from "./testing/fake-stream.js";
import { anthropicAdapter as adapter } from "./anthropic.js";
import { parseSse } from "./sse-parser.js";
import { mapSlots, readSlots } from "./text-slots.js";

const body = {
  model: "claude-sonnet-4-6",
  max_tokens: 100,
  system: [{ type: "text", text: "System A" }, { type: "text", text: "System B", cache_control: { type: "ephemeral" } }],
  messages: [
    { role: "user", content: "Plain question" },
    { role: "assistant", content: [{ type: "text", text: "Let me look." }, { type: "tool_use", id: "toolu_1", name: "lookup", input: { q: "x" } }] },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_1", content: "result text" },
        { type: "tool_result", tool_use_id: "toolu_2", content: [{ type: "text", text: "nested result" }] },
        { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
        { type: "document", source: { type: "text", media_type: "text/plain", data: "document body" } },
        { type: "text", text: "Follow-up" },
      ],
    },
  ],
};

test("resolve: spec and native paths map to /v1/messages (query kept); others are not governed", (t) => {
  t.deepEqual(adapter.resolve("/chat/completions", "", { model: "claude-haiku-4-5", stream: true }), { path: "/v1/messages", model: "claude-haiku-4-5", stream: true });
  t.deepEqual(adapter.resolve("/v1/messages", "?beta=true", { model: "claude-opus-4-7" }), { path: "/v1/messages?beta=true", model: "claude-opus-4-7", stream: false });
  t.is(adapter.resolve("/v1/messages/count_tokens", "", { model: "x" }), null);
  t.is(adapter.resolve("/v1/models", "", undefined), null);
});

test("promptText: system blocks first, then every text, tool_result and text document in order", (t) => {
  const parts = ["System A", "System B", "Plain question", "Let me look.", "x", "result text", "nested result", "document body", "Follow-up"]; // "x": the earlier tool_use input
  t.deepEqual(adapter.promptParts(body), parts);
  t.is(adapter.promptText(body), parts.join("\n\n"));
  t.deepEqual(adapter.promptParts({ system: "Just a string", messages: [] }), ["Just a string"]);
});

test("mapPromptText: redacted copy, same order, structure and non-text blocks preserved", (t) => {
  const seen: string[] = [];
  const mapped = adapter.mapPromptText(body, (s) => {
    seen.push(s);
    return `[${s}]`;
  }) as typeof body;
  t.deepEqual(seen, adapter.promptParts(body));
  t.deepEqual(adapter.promptParts(mapped), adapter.promptParts(body).map((s) => `[${s}]`));
  t.deepEqual(mapped.system[1], { type: "text", text: "[System B]", cache_control: { type: "ephemeral" } });
  t.deepEqual(mapped.messages[1]?.content[1], { type: "tool_use", id: "toolu_1", name: "lookup", input: { q: "[x]" } }, "only the input's string leaves are text");
  t.is(body.messages[0]?.content, "Plain question");
});

test("promptParts / mapPromptText: content documents and search results (top level and inside tool_result), where they stand", (t) => {
  const searchResult = (n: number) => ({
    type: "search_result",
    source: `https://kb.example/${n}`,
    title: `Result ${n}`,
    content: [{ type: "text", text: `snippet ${n}a` }, { type: "text", text: `snippet ${n}b` }],
    citations: { enabled: true },
  });
  const image = { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } };
  const docs = {
    model: "claude-sonnet-4-6",
    max_tokens: 100,
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "Before" },
          {
            type: "document",
            title: "Doc",
            source: { type: "content", content: [{ type: "text", text: "chunk one" }, image, { type: "text", text: "chunk two" }] },
          },
          { type: "document", source: { type: "content", content: "string content" } },
          searchResult(1),
          { type: "tool_result", tool_use_id: "toolu_1", content: [searchResult(2), { type: "text", text: "tool text" }] },
          { type: "document", source: { type: "url", url: "https://example.com/a.pdf" } },
          { type: "text", text: "After" },
        ],
      },
    ],
  };
  const original = structuredClone(docs);
  // A document's title and a search result's source are read by the model too (session 25, F1).
  const parts = ["Before", "Doc", "chunk one", "chunk two", "string content", "Result 1", "https://kb.example/1", "snippet 1a", "snippet 1b", "Result 2", "https://kb.example/2", "snippet 2a", "snippet 2b", "tool text", "After"];
  t.deepEqual(adapter.promptParts(docs), parts);
  const seen: string[] = [];
  const mapped = adapter.mapPromptText(docs, (s) => {
    seen.push(s);
    return s.toUpperCase();
  }) as typeof docs;
  t.deepEqual(seen, parts);
  t.deepEqual(adapter.promptParts(mapped), parts.map((s) => s.toUpperCase()));
  const content = mapped.messages[0]!.content;
  t.deepEqual(content[1], { type: "document", title: "DOC", source: { type: "content", content: [{ type: "text", text: "CHUNK ONE" }, image, { type: "text", text: "CHUNK TWO" }] } });
  t.deepEqual(content[3], { ...searchResult(1), title: "RESULT 1", source: "HTTPS://KB.EXAMPLE/1", content: [{ type: "text", text: "SNIPPET 1A" }, { type: "text", text: "SNIPPET 1B" }] }, "citations untouched");
  t.deepEqual(content[5], docs.messages[0]!.content[5]);
  t.deepEqual(docs, original, "the original is untouched");
});

test("parseResponse and mapCompletionText: text blocks joined by a blank line, tool_use counted", (t) => {
  const json = {
    id: "msg_1",
    type: "message",
    model: "claude-sonnet-4-6",
    content: [
      { type: "text", text: "Email me at a@b.c" },
      { type: "tool_use", id: "toolu_9", name: "send_mail", input: {} },
      { type: "text", text: "Done." },
    ],
    stop_reason: "tool_use",
    usage: { input_tokens: 10, cache_read_input_tokens: 5, cache_creation_input_tokens: 0, output_tokens: 7 },
  };
  const facts = adapter.parseResponse(json);
  t.is(facts.completionText, "Email me at a@b.c\n\nDone.");
  t.deepEqual(facts.toolCalls, [{ name: "send_mail", id: "toolu_9" }]);
  t.deepEqual(facts.usage, { inputTokens: 15, outputTokens: 7, cachedInputTokens: 5, cacheWriteTokens: 0 });
  const redacted = adapter.mapCompletionText(json, (s) => s.replace("a@b.c", "*****"));
  t.is(adapter.parseResponse(redacted).completionText, "Email me at *****\n\nDone.");
});

test("stream usage: message_delta usage (cumulative) replaces message_start fields", (t) => {
  const observer = adapter.streamObserver();
  const events =
    'event: message_start\ndata: {"type":"message_start","message":{"model":"claude-x","usage":{"input_tokens":100,"cache_read_input_tokens":0,"output_tokens":1}}}\n\n' +
    'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":100,"cache_read_input_tokens":50,"output_tokens":12}}\n\n';
  observer.push(new TextEncoder().encode(events));
  t.deepEqual(observer.end().usage, { inputTokens: 150, outputTokens: 12, cachedInputTokens: 50, cacheWriteTokens: 0 });
});

test("errorEvent: a native `event: error`, parsed by our parser and thrown by the Anthropic SDK", async (t) => {
  const text = adapter.errorEvent("Blocked by policy", "policy_violation", { details: { trace_id: "tr_2" } });
  const { events } = parseSse(text);
  t.is(events[0]?.event, "error");
  t.like(JSON.parse(events[0]?.data ?? "{}"), { type: "error", error: { type: "policy_violation", message: "Blocked by policy", trace_id: "tr_2" } });
  const observer = adapter.streamObserver();
  observer.push(new TextEncoder().encode(text));
  t.is(observer.end().errorMessage, "Blocked by policy");

  const fake = await startFakeProviders({ text: "partial answer", truncate: { afterEvents: 5 } });
  try {
    const client = new Anthropic({ apiKey: "k", baseURL: fake.urls.anthropic, maxRetries: 0, fetch: fetchWithAppendedEvent(text) });
    const stream = await client.messages.create({ model: "claude-haiku-4-5", max_tokens: 10, messages: [{ role: "user", content: "hi" }], stream: true });
    const err = await t.throwsAsync(async () => {
      for await (const _event of stream) {
        // consume
      }
    });
    t.true(err instanceof Anthropic.APIError);
    t.regex(err?.message ?? "", /Blocked by policy/);
    t.is(((err as InstanceType<typeof Anthropic.APIError>).error as { error: { type: string } }).error.type, "policy_violation");
  } finally {
    await fake.close();
  }
});

test("stream observer: a stream that ends cleanly before message_stop ended early (message_delta's usage kept); with message_stop, an error event or no event it did not", async (t) => {
  const fake = await startFakeProviders({ text: "A whole answer.", usage: { inputTokens: 300, outputTokens: 7, cachedInputTokens: 200 } });
  try {
    const { send, whole, events, observe } = await fakeStream(fake, "anthropic", () => adapter.streamObserver());
    t.true(events.at(-1)!.startsWith("event: message_stop\n"), "the provider's stream ends with its marker");
    t.is(observe(whole).endedEarly, undefined);
    t.is(observe(whole).errorMessage, undefined);

    // message_delta (final usage, stop reason) came, message_stop did not.
    const cut = observe(events.slice(0, -1).join(""));
    t.true(cut.endedEarly);
    t.regex(cut.errorMessage ?? "", /ended before its end marker \(message_stop\)/);
    t.is(cut.finishReason, "end_turn");
    t.like(cut.usage, { inputTokens: 300, outputTokens: 7, cachedInputTokens: 200 });
    t.is(cut.completionText, "A whole answer.");
    // Cut before message_delta: message_start's input side is kept, the output is counted later.
    const early = observe(events.slice(0, 4).join(""));
    t.true(early.endedEarly);
    t.is(early.usage, undefined);
    t.like(early.partialUsage, { inputTokens: 300, cachedInputTokens: 200 });

    fake.script({ text: "A whole answer.", streamError: { afterEvents: 4, message: "Overloaded" } });
    const failed = observe(await send());
    t.is(failed.errorMessage, "Overloaded");
    t.is(failed.endedEarly, undefined);
    t.is(observe("").endedEarly, undefined);
  } finally {
    await fake.close();
  }
});

// --- session 25 QA (F1, F3, F8): native slots that were never scanned ---

test("promptParts / mapPromptText: server tool results sent back (MCP, code execution, bash, web search titles, fetched pages) and a document's title and context are input text, rewritten in place", (t) => {
  const body = {
    model: "claude-sonnet-4-6",
    max_tokens: 100,
    messages: [
      {
        role: "assistant",
        content: [
          { type: "mcp_tool_use", id: "m1", name: "fetch", server_name: "web", input: {} },
          { type: "mcp_tool_result", tool_use_id: "m1", is_error: false, content: [{ type: "text", text: "mcp text" }] },
          { type: "mcp_tool_result", tool_use_id: "m2", content: "mcp string" },
          { type: "server_tool_use", id: "s1", name: "code_execution", input: {} },
          { type: "code_execution_tool_result", tool_use_id: "s1", content: { type: "code_execution_result", stdout: "py out", stderr: "py err", return_code: 0, content: [] } },
          { type: "bash_code_execution_tool_result", tool_use_id: "s2", content: { type: "bash_code_execution_result", stdout: "sh out", stderr: "", return_code: 1, content: [] } },
          { type: "code_execution_tool_result", tool_use_id: "s3", content: { type: "code_execution_tool_result_error", error_code: "unavailable" } },
          { type: "web_search_tool_result", tool_use_id: "s4", content: [{ type: "web_search_result", url: "https://a.example", title: "page title", encrypted_content: "enc" }] },
          { type: "web_fetch_tool_result", tool_use_id: "s5", content: { type: "web_fetch_result", url: "https://b.example", content: { type: "document", title: "fetched", source: { type: "text", media_type: "text/plain", data: "fetched body" } } } },
        ],
      },
      { role: "user", content: [{ type: "document", title: "doc title", context: "doc context", source: { type: "text", media_type: "text/plain", data: "doc body" } }] },
    ],
  };
  const parts = ["mcp text", "mcp string", "py out", "py err", "sh out", "page title", "fetched", "fetched body", "doc title", "doc context", "doc body"];
  t.deepEqual(adapter.promptParts(body), parts);
  const mapped = adapter.mapPromptText(body, (s) => s.toUpperCase()) as typeof body;
  t.deepEqual(adapter.promptParts(mapped), parts.map((s) => s.toUpperCase()));
  const blocks = mapped.messages[0]!.content as Record<string, unknown>[];
  t.deepEqual(blocks[4], { type: "code_execution_tool_result", tool_use_id: "s1", content: { type: "code_execution_result", stdout: "PY OUT", stderr: "PY ERR", return_code: 0, content: [] } });
  t.deepEqual(blocks[7], { type: "web_search_tool_result", tool_use_id: "s4", content: [{ type: "web_search_result", url: "https://a.example", title: "PAGE TITLE", encrypted_content: "enc" }] }, "only the title changes");
  t.deepEqual(mapped.messages[1]!.content[0], { type: "document", title: "DOC TITLE", context: "DOC CONTEXT", source: { type: "text", media_type: "text/plain", data: "DOC BODY" } });
});

test("answerToolSlots: the output of the code Anthropic ran (stdout, stderr) is judged and redacted with the tool inputs, in block order", (t) => {
  const json = {
    type: "message",
    content: [
      { type: "server_tool_use", id: "s1", name: "bash_code_execution", input: { command: "cat notes" } },
      { type: "bash_code_execution_tool_result", tool_use_id: "s1", content: { type: "bash_code_execution_result", stdout: "mail jo@x.io", stderr: "warn", return_code: 0, content: [] } },
      { type: "code_execution_tool_result", tool_use_id: "s2", content: { type: "code_execution_result", stdout: "42", stderr: "", return_code: 0, content: [] } },
      { type: "text", text: "done" },
    ],
  };
  t.deepEqual(readSlots(json, adapter.answerToolSlots!), ["cat notes", "mail jo@x.io", "warn", "42"]);
  const out = mapSlots(json, adapter.answerToolSlots!, (s) => s.replace("jo@x.io", "[REDACTED:email]")) as typeof json;
  t.deepEqual(out.content[1], { ...json.content[1], content: { ...(json.content[1]!.content as object), stdout: "mail [REDACTED:email]" } });
  t.is(adapter.parseResponse(out).completionText, "done");
});

test("answerToolSlots: an MCP server's answer (mcp_tool_result content, string or text blocks) is judged and redacted like the Responses API's mcp_call output; web search results pass", (t) => {
  const json = {
    type: "message",
    content: [
      { type: "mcp_tool_use", id: "m1", name: "lookup", server_name: "crm", input: { who: "jo" } },
      { type: "mcp_tool_result", tool_use_id: "m1", is_error: false, content: [{ type: "text", text: "jo@x.io" }] },
      { type: "mcp_tool_result", tool_use_id: "m2", content: "plain jo@x.io" },
      { type: "web_search_tool_result", tool_use_id: "s", content: [{ type: "web_search_result", url: "https://a.example", title: "page", encrypted_content: "e" }] },
      { type: "text", text: "found" },
    ],
  };
  t.deepEqual(readSlots(json, adapter.answerToolSlots!), ["jo", "jo@x.io", "plain jo@x.io"]);
  const out = mapSlots(json, adapter.answerToolSlots!, (s) => s.replace("jo@x.io", "[E]")) as typeof json;
  t.deepEqual(out.content[1], { ...json.content[1], content: [{ type: "text", text: "[E]" }] });
  t.deepEqual(out.content[2], { ...json.content[2], content: "plain [E]" });
});

test("stream observer: a tool call's input sent whole in content_block_start and a code execution result's output are judged with the tool inputs; Anthropic's empty {} adds nothing", (t) => {
  const ev = (o: object) => `event: ${(o as { type: string }).type}\ndata: ${JSON.stringify(o)}\n\n`;
  const observer = adapter.streamObserver();
  observer.push(
    new TextEncoder().encode(
      ev({ type: "message_start", message: { model: "m", usage: { input_tokens: 1, output_tokens: 1 } } }) +
        ev({ type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "t", name: "f", input: {} } }) +
        ev({ type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '{"a":"streamed"}' } }) +
        ev({ type: "content_block_stop", index: 0 }) +
        ev({ type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "u", name: "g", input: { to: "whole" } } }) +
        ev({ type: "content_block_stop", index: 1 }) +
        ev({ type: "content_block_start", index: 2, content_block: { type: "code_execution_tool_result", tool_use_id: "s", content: { type: "code_execution_result", stdout: "out", stderr: "", return_code: 0, content: [] } } }) +
        ev({ type: "content_block_stop", index: 2 }) +
        ev({ type: "message_stop" }),
    ),
  );
  t.deepEqual(observer.end().toolArguments, ['{"a":"streamed"}', { to: "whole" }, { text: "out" }]);
});
