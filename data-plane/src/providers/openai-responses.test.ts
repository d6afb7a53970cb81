// OpenAI Responses API adapter: resolve, prompt slots (instructions, input string or items), answer
// facts (text, refusal, reasoning summary, tool calls of every kind, usage, finish), redaction of an
// answer with url_citation annotations, and the stream observer over the fake's native events.
import test from "ava";
import { rawRequest, startFakeProviders } from "../../../test/fakes/providers/index.js";
import { ProviderRequestError } from "./errors.js";
import { openaiAdapter } from "./openai.js";
import { openaiResponsesAdapter as adapter } from "./openai-responses.js";

const body = {
  model: "gpt-5",
  instructions: "Be terse.",
  input: [
    { role: "user", content: "What is the weather?" },
    { role: "developer", content: [{ type: "input_text", text: "Use metric units." }] },
    { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Need the weather tool." }] },
    { type: "function_call", call_id: "call_1", name: "weather", arguments: '{"city": "Paris", "days": 2}' },
    { type: "function_call_output", call_id: "call_1", output: "18 degrees" },
    { role: "assistant", content: [{ type: "output_text", text: "It is 18 degrees." }] },
    { type: "message", role: "user", content: [{ type: "input_text", text: "And tomorrow?" }, { type: "input_image", image_url: "https://example.com/a.png" }] },
  ],
  tools: [{ type: "function", name: "weather", parameters: { type: "object" } }],
};

test("resolve: POST /v1/responses through the openai adapter, with this adapter; background refused", (t) => {
  const target = openaiAdapter.resolve("/v1/responses", "?x=1", { model: "gpt-5", stream: true });
  t.like(target, { path: "/v1/responses?x=1", model: "gpt-5", stream: true });
  t.is(target?.adapter, adapter);
  t.is(adapter.name, "openai", "same provider: prices, auth, base URL");
  t.like(openaiAdapter.resolve("//v1/responses/", "", {}), { path: "/v1/responses", model: "", stream: false });
  t.is(openaiAdapter.resolve("/v1/responses/resp_1/cancel", "", {}), null);
  const e = t.throws(() => openaiAdapter.resolve("/v1/responses", "", { model: "gpt-5", background: true }), { instanceOf: ProviderRequestError });
  t.regex(e.message, /background/);
});

test("prompt: instructions and system/developer items first, then the input in order (earlier calls, outputs, reasoning)", (t) => {
  t.deepEqual(adapter.promptParts(body), ["Be terse.", "Use metric units.", "What is the weather?", "Need the weather tool.", "Paris", "2", "18 degrees", "It is 18 degrees.", "And tomorrow?"]);
  t.is(adapter.systemText(body), "Be terse.\n\nUse metric units.");
  t.deepEqual(adapter.promptParts({ model: "gpt-5", input: "Just a string", instructions: "Sys" }), ["Sys", "Just a string"]);
  t.is(adapter.promptText("not json"), "");
  t.regex(adapter.inputExtrasText!(body), /"name":"weather"/);
});

test("mapPromptText: every part once, in order; only the changed argument literal is rewritten; the original untouched", (t) => {
  const seen: string[] = [];
  const mapped = adapter.mapPromptText(body, (s) => {
    seen.push(s);
    return s === "Paris" ? "[REDACTED:city]" : s.toUpperCase();
  }) as typeof body;
  t.deepEqual(seen, adapter.promptParts(body));
  t.is(mapped.instructions, "BE TERSE.");
  t.is((mapped.input[3] as { arguments: string }).arguments, '{"city": "[REDACTED:city]", "days": 2}');
  t.is((mapped.input[4] as { output: string }).output, "18 DEGREES");
  t.deepEqual((mapped.input[6] as { content: unknown[] }).content[1], { type: "input_image", image_url: "https://example.com/a.png" });
  t.is((body.input[0] as { content: string }).content, "What is the weather?");
  const s = adapter.mapPromptText({ input: "call me at 555" }, (x) => x.replace("555", "[REDACTED:phone]")) as { input: string };
  t.is(s.input, "call me at [REDACTED:phone]");
});

const answer = {
  id: "resp_1",
  object: "response",
  status: "completed",
  model: "gpt-5-2025-08-07",
  output: [
    { id: "rs_1", type: "reasoning", summary: [{ type: "summary_text", text: "Thinking about Bob" }] },
    {
      id: "msg_1",
      type: "message",
      role: "assistant",
      content: [
        { type: "output_text", text: "Mail bob@example.com or see [docs](https://example.com/docs).", annotations: [{ type: "url_citation", start_index: 28, end_index: 60, url: "https://example.com/docs", title: "Docs for bob@example.com" }] },
        { type: "refusal", refusal: "No more." },
      ],
    },
    { id: "fc_1", type: "function_call", call_id: "call_9", name: "send_mail", arguments: '{"to":"bob@example.com"}' },
    { id: "ctc_1", type: "custom_tool_call", call_id: "call_10", name: "shell", input: "echo hi" },
    { id: "ws_1", type: "web_search_call", status: "completed" },
    { id: "mcp_1", type: "mcp_call", name: "lookup", server_label: "crm", arguments: "{}" },
  ],
  usage: { input_tokens: 120, input_tokens_details: { cached_tokens: 100, cache_write_tokens: 12 }, output_tokens: 50, output_tokens_details: { reasoning_tokens: 30 }, total_tokens: 170 },
};

test("parseResponse: text then refusal, reasoning summary, every tool call, usage with cached input, model, finish", (t) => {
  const facts = adapter.parseResponse(answer);
  t.is(facts.completionText, "Mail bob@example.com or see [docs](https://example.com/docs).\n\nNo more.");
  t.is(facts.reasoningText, "Thinking about Bob");
  t.deepEqual(facts.toolCalls, [
    { name: "send_mail", id: "call_9" },
    { name: "shell", id: "call_10" },
    { name: "web_search", id: "ws_1" },
    { name: "lookup", id: "mcp_1" },
  ]);
  t.deepEqual(facts.usage, { inputTokens: 120, outputTokens: 50, cachedInputTokens: 100, cacheWriteTokens: 12 }, "cache writes read from input_tokens_details");
  t.is(facts.model, "gpt-5-2025-08-07");
  t.is(facts.finishReason, "completed");
  t.is(facts.uncountedOutputText, undefined, "usage reported: nothing to count");
  t.is(adapter.parseResponse({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, output: [] }).finishReason, "max_output_tokens");
  t.is(adapter.parseResponse({ error: { message: "Invalid model", type: "invalid_request_error" } }).errorMessage, "Invalid model");
  t.is(adapter.parseResponse({ status: "failed", error: { code: "server_error", message: "boom" }, output: [] }).errorMessage, "boom");
  const noUsage = adapter.parseResponse({ ...answer, usage: undefined });
  t.is(noUsage.uncountedOutputText, 'Thinking about Bob{"to":"bob@example.com"}echo hi');
});

test("redaction of an answer: text, reasoning, tool arguments leaf by leaf; the url_citation moves, its title redacted", (t) => {
  const redact = (s: string) => s.replaceAll("bob@example.com", "[REDACTED:email]");
  const redacted = adapter.mapReasoningText(adapter.mapCompletionText(answer, redact), redact) as typeof answer;
  adapter.afterRedaction!(answer, redacted, redact);
  const part = redacted.output[1]!.content![0] as { text: string; annotations: { start_index: number; end_index: number; title: string; url: string }[] };
  t.is(part.text, "Mail [REDACTED:email] or see [docs](https://example.com/docs).");
  const a = part.annotations[0]!;
  t.is(part.text.slice(a.start_index, a.end_index), "[docs](https://example.com/docs)");
  t.is(a.title, "Docs for [REDACTED:email]");
  t.is((redacted.output[0]!.summary![0] as { text: string }).text, "Thinking about Bob", "no email in the reasoning");
  t.is(answer.output[1]!.content![0]!.text, "Mail bob@example.com or see [docs](https://example.com/docs).", "the original untouched");
  const slots = adapter.answerToolSlots!(answer).map((s) => s.get());
  t.deepEqual(slots, ["bob@example.com", "echo hi"]);
  t.is(adapter.quotedText!(answer), "https://example.com/docs\n\nDocs for bob@example.com");
});

test("errorEvent: the API's error event, with an error object the SDK throws on", (t) => {
  const e = adapter.errorEvent("blocked", "policy_violation", { details: { trace_id: "tr_1" } });
  t.true(e.startsWith("event: error\ndata: "));
  t.true(e.endsWith("\n\n"));
  const data = JSON.parse(e.split("\n")[1]!.slice("data: ".length)) as { type: string; code: string; error: { code: string; message: string; trace_id: string } };
  t.like(data, { type: "error", code: "policy_violation", error: { code: "policy_violation", message: "blocked", trace_id: "tr_1" } });
});

test("stream observer over the fake's native stream: text, reasoning, tool arguments, usage, as the SDK builds them", async (t) => {
  const fakes = await startFakeProviders();
  t.teardown(() => fakes.close());
  fakes.script({ text: "Hello there, friend.", reasoning: "Short thought.", toolCalls: [{ name: "weather", arguments: { city: "Paris" } }], usage: { inputTokens: 40, outputTokens: 12, cachedInputTokens: 8 } });
  const send = () => rawRequest(`${fakes.urls.openai}/v1/responses`, { headers: { authorization: "Bearer k" }, body: { model: "gpt-5", input: "hi", stream: true } });
  const res = await send();
  const observer = adapter.streamObserver();
  for (let i = 0; i < res.bytes.length; i += 7) observer.push(res.bytes.subarray(i, i + 7));
  const facts = observer.end();
  t.is(facts.completionText, "Hello there, friend.");
  t.is(facts.reasoningText, "Short thought.");
  t.deepEqual(facts.toolCalls.map((c) => c.name), ["weather"]);
  t.deepEqual(facts.toolArguments, ['{"city":"Paris"}']);
  t.deepEqual(facts.usage, { inputTokens: 40, outputTokens: 12, cachedInputTokens: 8, cacheWriteTokens: 0 });
  t.is(facts.finishReason, "completed");

  // Cut before the final response: the deltas (and done events) still give the text; no usage.
  fakes.script({ text: "Partial answer here.", truncate: { afterEvents: 8 } });
  const cut = await send();
  const o2 = adapter.streamObserver();
  o2.push(cut.bytes);
  const f2 = o2.end();
  t.true("Partial answer here.".startsWith(f2.completionText) && f2.completionText.length > 0, f2.completionText);
  t.is(f2.usage, undefined);
});

test("prompt: a stored prompt's variables, the outputs of agent-run calls and hosted tools' items sent back are input text", (t) => {
  const b = {
    model: "gpt-5",
    prompt: { id: "pmpt_1", variables: { city: "Paris", note: { type: "input_text", text: "call 555" } } },
    input: [
      { type: "shell_call", call_id: "s1", action: { commands: ["ls /home/ann"] } },
      { type: "shell_call_output", call_id: "s1", output: [{ stdout: "ann.txt", stderr: "warn" }] },
      { type: "local_shell_call_output", call_id: "l1", output: "done" },
      { type: "apply_patch_call_output", call_id: "a1", output: "patched" },
      { type: "mcp_call", id: "m1", name: "crm", server_label: "crm", arguments: '{"q":"ann"}', output: "Ann, 42" },
      { type: "mcp_approval_response", approval_request_id: "r1", approve: false, reason: "not ann" },
      { type: "web_search_call", id: "w1", status: "completed", action: { type: "search", query: "ann smith" } },
    ],
  };
  t.deepEqual(adapter.promptParts(b), ["Paris", "call 555", "ls /home/ann", "ann.txt", "warn", "done", "patched", "ann", "Ann, 42", "not ann", "ann smith"]);
  const mapped = adapter.mapPromptText(b, (s) => s.toUpperCase()) as { prompt: { variables: { city: string } }; input: { output?: unknown }[] };
  t.is(mapped.prompt.variables.city, "PARIS");
  t.deepEqual(mapped.input[1]!.output, [{ stdout: "ANN.TXT", stderr: "WARN" }]);
});

test("answer: agent-run calls' actions are tool arguments; hosted tools' texts are judged and redacted; logprobs dropped", (t) => {
  const json = {
    status: "completed",
    output: [
      { id: "cu_1", type: "computer_call", call_id: "c1", action: { type: "type", text: "SSN 536-22-8726" } },
      { id: "ws_1", type: "web_search_call", status: "completed", action: { type: "search", query: "owner of 536-22-8726" } },
      { id: "msg_1", type: "message", role: "assistant", content: [{ type: "output_text", text: "SSN 536-22-8726", annotations: [], logprobs: [{ token: "536", logprob: -1 }] }] },
    ],
  };
  t.deepEqual(adapter.answerToolSlots!(json).map((s) => s.get()), ["type", "SSN 536-22-8726"]);
  t.regex(adapter.quotedText!(json), /owner of 536-22-8726/);
  const redact = (s: string) => s.replaceAll("536-22-8726", "[REDACTED:ssn]");
  const out = adapter.mapCompletionText(json, redact) as typeof json;
  adapter.afterRedaction!(json, out, redact);
  t.is((out.output[1]!.action as { query: string }).query, "owner of [REDACTED:ssn]");
  t.deepEqual(out.output[2]!.content![0]!.logprobs, []);
  t.is(json.output[2]!.content![0]!.logprobs.length, 1, "the original untouched");
  const facts = adapter.parseResponse(json);
  t.deepEqual(facts.toolCalls.map((c) => c.name), ["computer", "web_search"]);
});

test("stream observer: a stream that ends cleanly before its final response is an error (endedEarly)", (t) => {
  const o = adapter.streamObserver();
  o.push(Buffer.from('event: response.created\ndata: {"type":"response.created","response":{"id":"r","status":"in_progress","output":[]}}\n\nevent: response.output_text.delta\ndata: {"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"Hi"}\n\n'));
  const f = o.end();
  t.true(f.endedEarly);
  t.regex(f.errorMessage ?? "", /ended before/);
  const complete = adapter.streamObserver();
  complete.push(Buffer.from('event: response.completed\ndata: {"type":"response.completed","response":{"id":"r","status":"completed","output":[]}}\n\n'));
  t.is(complete.end().endedEarly, undefined);
});

test("file citations: their file names are judged with the answer and redacted on their own; offsets and ids kept", (t) => {
  const cited = {
    id: "resp_2",
    object: "response",
    status: "completed",
    output: [
      {
        id: "msg_2",
        type: "message",
        role: "assistant",
        content: [
          {
            type: "output_text",
            text: "The invoice says 40 EUR.",
            annotations: [
              { type: "file_citation", index: 23, file_id: "file-1", filename: "invoice for bob@example.com.pdf" },
              { type: "container_file_citation", container_id: "cntr_1", file_id: "cfile_1", filename: "bob@example.com totals.csv", start_index: 0, end_index: 10 },
              { type: "file_path", index: 5, file_id: "file-2" },
            ],
          },
        ],
      },
    ],
  };
  t.is(adapter.quotedText!(cited), "invoice for bob@example.com.pdf\n\nbob@example.com totals.csv");
  const redact = (s: string) => s.replaceAll("bob@example.com", "[REDACTED:email]");
  const redacted = adapter.mapCompletionText(cited, redact) as typeof cited;
  adapter.afterRedaction!(cited, redacted, redact);
  t.deepEqual(redacted.output[0]!.content[0]!.annotations, [
    { type: "file_citation", index: 23, file_id: "file-1", filename: "invoice for [REDACTED:email].pdf" },
    { type: "container_file_citation", container_id: "cntr_1", file_id: "cfile_1", filename: "[REDACTED:email] totals.csv", start_index: 0, end_index: 10 },
    { type: "file_path", index: 5, file_id: "file-2" },
  ]);
  t.is(cited.output[0]!.content[0]!.annotations[0]!.filename, "invoice for bob@example.com.pdf", "the original untouched");
});
