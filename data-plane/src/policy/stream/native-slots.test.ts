// Session 25 QA (F3, F8): output the client gets outside the answer's text parts is governed in streams
// as in JSON answers: Gemini code execution (executableCode code, codeExecutionResult output), a text
// file in the answer (inlineData text/*, base64) and snake_case function_call args; Anthropic code
// execution results (stdout/stderr, whole in content_block_start) and a tool call's input sent whole in
// content_block_start; log probabilities (Gemini logprobsResult, Cohere logprobs), which spell the text
// token by token, are dropped from governed events. SSE through governStream (the proxy's factory), and
// Gemini's JSON-array stream held whole.
import test from "ava";
import { create } from "@bufbuild/protobuf";
import { AgentSchema, type Policy } from "@agentgov/proto";
import { getProvider, parseSse, type ProviderName } from "../../providers/index.js";
import type { TraceDraft } from "../../trace/builder.js";
import { governStream } from "./index.js";
import { outboundPolicy, streamDraft } from "./testing/stream-fixtures.js";

const EMAIL = "jo.smith@example.com";
const KEYWORD = "zorblaxquux";

const policy = outboundPolicy;
const REDACT = [policy("redact", { piiTypes: ["email"] })];
const BLOCK = [policy("block", { keywords: [KEYWORD] })];

const draft = (provider: ProviderName): TraceDraft => streamDraft(provider, "m");

/** governStream over `body` (SSE, or Gemini's JSON array with `json`), written in `size`-byte chunks. */
function governed(provider: ProviderName, body: string, policies: Policy[], size = body.length, json = false): { out: string; d: TraceDraft; stopped: boolean } {
  const d = draft(provider);
  const agent = create(AgentSchema, { id: "agt_test", name: "test", status: "active", provider, model: "m", environment: "test", piiDetection: true });
  const g = governStream({ adapter: getProvider(provider)!, agent, policies, draft: d, contentType: json ? "application/json; charset=UTF-8" : "text/event-stream" });
  if (!g) throw new Error("expected a governor");
  const bytes = Buffer.from(body, "utf8");
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length && !g.stopped; i += size) out.push(g.transform(bytes.subarray(i, i + size)));
  if (!g.stopped) out.push(g.end());
  return { out: Buffer.concat(out).toString("utf8"), d, stopped: g.stopped };
}

const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");
const gChunk = (parts: unknown[], extra: Record<string, unknown> = {}, finish = false) =>
  `data: ${JSON.stringify({ candidates: [{ index: 0, content: { role: "model", parts }, ...extra, ...(finish ? { finishReason: "STOP" } : {}) }], modelVersion: "gemini-2.5-flash" })}\r\n\r\n`;
const gLast = gChunk([{ text: "done" }], {}, true) + "";

test("gemini SSE: code execution code and output are judged and redacted on their own; a block ends the stream before they leave; clean ones pass byte for byte", (t) => {
  const stream = (x: string) => gChunk([{ executableCode: { language: "PYTHON", code: `print("${x}")` } }]) + gChunk([{ codeExecutionResult: { outcome: "OUTCOME_OK", output: `${x}\n` } }]) + gLast;
  for (const size of [3, 1000]) {
    const { out, d } = governed("google", stream(EMAIL), REDACT, size);
    t.false(out.includes(EMAIL), out);
    const events = parseSse(out).events.map((e) => JSON.parse(e.data) as { candidates: { content: { parts: Record<string, { code?: string; output?: string }>[] } }[] });
    t.is(events[0]!.candidates[0]!.content.parts[0]!.executableCode!.code, 'print("[REDACTED:email]")');
    t.is(events[1]!.candidates[0]!.content.parts[0]!.codeExecutionResult!.output, "[REDACTED:email]\n");
    t.deepEqual(d.fired, ["redact"], "the final judgement sees them too");
  }
  const blocked = governed("google", stream(`x ${KEYWORD} y`), BLOCK);
  t.true(blocked.stopped);
  t.false(blocked.out.includes(KEYWORD));
  t.is(blocked.d.status, "blocked");
  const clean = stream("nothing here");
  t.is(governed("google", clean, REDACT).out, clean);
});

test("gemini SSE: a text file in the answer (inlineData text/plain) is redacted as text and re-encoded; snake_case function_call args are judged like functionCall's", (t) => {
  const body = gChunk([{ inlineData: { mimeType: "text/plain", data: b64(`mail ${EMAIL}`) } }]) + gChunk([{ function_call: { name: "send", args: { to: EMAIL } } }]) + gLast;
  const { out } = governed("google", body, REDACT);
  const events = parseSse(out).events.map((e) => JSON.parse(e.data) as { candidates: { content: { parts: Record<string, { data?: string; args?: unknown }>[] } }[] });
  t.is(Buffer.from(events[0]!.candidates[0]!.content.parts[0]!.inlineData!.data!, "base64").toString("utf8"), "mail [REDACTED:email]");
  t.deepEqual(events[1]!.candidates[0]!.content.parts[0]!.function_call!.args, { to: "[REDACTED:email]" });
  const blocked = governed("google", gChunk([{ inlineData: { mimeType: "text/markdown", data: b64(KEYWORD) } }]) + gLast, BLOCK);
  t.true(blocked.stopped);
  t.false(blocked.out.includes(b64(KEYWORD)));
});

test("gemini SSE: a candidate's logprobsResult is dropped from every governed chunk, so tokens cannot rebuild a redacted value", (t) => {
  const pieces = [`Write to ${EMAIL.slice(0, 6)}`, EMAIL.slice(6), " today."];
  const body = pieces.map((p, i) => gChunk([{ text: p }], { logprobsResult: { chosenCandidates: [{ token: p, logProbability: -0.1 }], topCandidates: [{ candidates: [{ token: p, logProbability: -0.1 }] }] } }, i === pieces.length - 1)).join("");
  const { out } = governed("google", body, REDACT);
  t.false(out.includes("logprobsResult"), out);
  t.false(out.includes("example.com"));
  const facts = getProvider("google")!.streamObserver();
  facts.push(Buffer.from(out));
  t.is(facts.end().completionText, "Write to [REDACTED:email] today.");
});

test("gemini JSON-array stream held whole: code execution code and output are judged (block) and redacted like the tool calls' arguments", (t) => {
  const element = (parts: unknown[], finish = false) => JSON.stringify({ candidates: [{ index: 0, content: { role: "model", parts }, ...(finish ? { finishReason: "STOP" } : {}) }] });
  const array = (x: string) => `[${element([{ executableCode: { language: "PYTHON", code: `print("${x}")` } }])},\r\n${element([{ codeExecutionResult: { outcome: "OUTCOME_OK", output: x } }, { text: "done" }], true)}]`;
  const { out, d } = governed("google", array(EMAIL), REDACT, 7, true);
  t.false(out.includes(EMAIL), out);
  const parsed = JSON.parse(out) as { candidates: { content: { parts: Record<string, { code?: string; output?: string }>[] } }[] }[];
  t.is(parsed[0]!.candidates[0]!.content.parts[0]!.executableCode!.code, 'print("[REDACTED:email]")');
  t.is(parsed[1]!.candidates[0]!.content.parts[0]!.codeExecutionResult!.output, "[REDACTED:email]");
  t.deepEqual(d.fired, ["redact"]);
  const blocked = governed("google", array(KEYWORD), BLOCK, 7, true);
  t.false(blocked.out.includes(KEYWORD));
  t.is(blocked.d.status, "blocked");
});

test("cohere: a content-delta's logprobs are dropped from every governed event", (t) => {
  const ev = (type: string, o: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`;
  const pieces = [`Write to ${EMAIL.slice(0, 6)}`, EMAIL.slice(6), " today."];
  const body =
    ev("message-start", { id: "m", delta: { message: { role: "assistant" } } }) +
    ev("content-start", { index: 0, delta: { message: { content: { type: "text", text: "" } } } }) +
    pieces.map((p) => ev("content-delta", { index: 0, delta: { message: { content: { text: p } } }, logprobs: { text: p, token_ids: [1], logprobs: [-0.1] } })).join("") +
    ev("content-end", { index: 0 }) +
    ev("message-end", { delta: { finish_reason: "COMPLETE", usage: { billed_units: { input_tokens: 1, output_tokens: 3 } } } });
  const { out } = governed("cohere", body, REDACT, 5);
  t.false(out.includes("logprobs"), out);
  t.false(out.includes("example.com"));
  const facts = getProvider("cohere")!.streamObserver();
  facts.push(Buffer.from(out));
  t.is(facts.end().completionText, "Write to [REDACTED:email] today.");
});

const aev = (type: string, o: object = {}) => `event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`;
const aStart = aev("message_start", { message: { id: "msg", type: "message", role: "assistant", model: "claude", content: [], usage: { input_tokens: 5, output_tokens: 1 } } });
const aEnd = aev("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 9 } }) + aev("message_stop");
const aText = (i: number, text: string) => aev("content_block_start", { index: i, content_block: { type: "text", text: "" } }) + aev("content_block_delta", { index: i, delta: { type: "text_delta", text } }) + aev("content_block_stop", { index: i });

test("anthropic: a code execution result's stdout and stderr (whole in content_block_start) are judged and redacted on their own; a block ends the stream before they leave", (t) => {
  const body = (x: string) =>
    aStart +
    aev("content_block_start", { index: 0, content_block: { type: "server_tool_use", id: "s", name: "bash_code_execution", input: {} } }) +
    aev("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: '{"command":"cat f"}' } }) +
    aev("content_block_stop", { index: 0 }) +
    aev("content_block_start", { index: 1, content_block: { type: "bash_code_execution_tool_result", tool_use_id: "s", content: { type: "bash_code_execution_result", stdout: `out ${x}`, stderr: `err ${x}`, return_code: 0, content: [] } } }) +
    aev("content_block_stop", { index: 1 }) +
    aText(2, "done") +
    aEnd;
  const { out, d } = governed("anthropic", body(EMAIL), REDACT, 11);
  t.false(out.includes(EMAIL), out);
  const start = parseSse(out).events.map((e) => JSON.parse(e.data) as { type: string; index?: number; content_block?: { content?: { stdout: string; stderr: string } } }).find((e) => e.type === "content_block_start" && e.index === 1)!;
  t.like(start.content_block!.content, { stdout: "out [REDACTED:email]", stderr: "err [REDACTED:email]" });
  t.deepEqual(d.fired, ["redact"]);
  const blocked = governed("anthropic", body(KEYWORD), BLOCK);
  t.true(blocked.stopped);
  t.false(blocked.out.includes(KEYWORD));
  const clean = body("nothing");
  const result = clean.slice(clean.indexOf('event: content_block_start\ndata: {"type":"content_block_start","index":1'), clean.indexOf('event: content_block_stop\ndata: {"type":"content_block_stop","index":1'));
  t.true(result.includes("out nothing"));
  t.true(governed("anthropic", clean, REDACT).out.includes(result), "a result with nothing to change leaves byte for byte");
});

test("anthropic (F8): a tool call's input sent whole in content_block_start is judged as a call (redacted, or blocked before it leaves); Anthropic's own input {} passes untouched", (t) => {
  const body = (input: object) => aStart + aev("content_block_start", { index: 0, content_block: { type: "tool_use", id: "t", name: "send", input } }) + aev("content_block_stop", { index: 0 }) + aEnd;
  const { out } = governed("anthropic", body({ to: EMAIL, n: 1 }), REDACT);
  t.false(out.includes(EMAIL), out);
  const start = parseSse(out).events.map((e) => JSON.parse(e.data) as { type: string; content_block?: { input: unknown } }).find((e) => e.type === "content_block_start")!;
  t.deepEqual(start.content_block!.input, { to: "[REDACTED:email]", n: 1 });
  const blocked = governed("anthropic", body({ note: KEYWORD }), BLOCK);
  t.true(blocked.stopped);
  t.false(blocked.out.includes(KEYWORD));
  const empty = body({});
  t.is(governed("anthropic", empty, REDACT).out, empty);
});

test("anthropic: an MCP tool result (whole in content_block_start) is judged and redacted on its own, as the Responses API's mcp_call output", (t) => {
  const body = (x: string) =>
    aStart +
    aev("content_block_start", { index: 0, content_block: { type: "mcp_tool_result", tool_use_id: "m", is_error: false, content: [{ type: "text", text: `crm says ${x}` }] } }) +
    aev("content_block_stop", { index: 0 }) +
    aText(1, "done") +
    aEnd;
  const { out } = governed("anthropic", body(EMAIL), REDACT, 9);
  t.false(out.includes(EMAIL), out);
  t.true(out.includes("crm says [REDACTED:email]"));
  const blocked = governed("anthropic", body(KEYWORD), BLOCK);
  t.true(blocked.stopped);
  t.false(blocked.out.includes(KEYWORD));
});
