// The stream governor over OpenAI Responses API streams (responses-format.ts): the fake's native events
// and hand-made ones. Every repeat of a text (its *.done event, content_part.done, output_item.done, the
// final response) carries what the deltas carried, redacted alike; a held tail leaves in an inserted
// delta of the channel's own kind before its done event; a repeat that is not what the deltas carried
// (or whose text never streamed) is judged and redacted on its own, and can block; reasoning summaries
// and function-call arguments are governed the same way.
import test from "ava";
import type { Policy } from "@agentgov/proto";
import { rawRequest, startFakeProviders, type FakeProviders, type FakeScript } from "../../../../test/fakes/providers/index.js";
import { openaiResponsesAdapter as adapter, parseSse } from "../../providers/index.js";
import { createStreamGovernor, type StreamGovernor } from "./governor.js";
import { outboundPolicy } from "./testing/outbound-policy.js";

let fake: FakeProviders;
test.before(async () => {
  fake = await startFakeProviders();
});
test.after.always(async () => {
  await fake?.close();
});

function policy(action: "block" | "redact", piiTypes: string[]): Policy {
  return outboundPolicy(action, { piiTypes });
}

function governor(policies: Policy[]): StreamGovernor {
  const g = createStreamGovernor({
    wire: "openai-responses",
    policies,
    piiDetection: true,
    model: "gpt-5",
    inputTokens: 10,
    injectionScore: 0,
    errorEvent: (p) => adapter.errorEvent(`response blocked by policy "${p.name}"`, "policy_violation", { details: { policy_id: p.id } }),
  });
  if (!g) throw new Error("expected a governor");
  return g;
}

async function upstream(script: FakeScript): Promise<Buffer> {
  fake.script(script);
  const res = await rawRequest(`${fake.urls.openai}/v1/responses`, { headers: { authorization: "Bearer k" }, body: { model: "gpt-5", input: "hi", stream: true } });
  return res.bytes;
}

function run(g: StreamGovernor, bytes: Buffer, size = 5): string {
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length && !g.stopped; i += size) {
    const o = g.transform(bytes.subarray(i, i + size));
    if (o) out.push(o);
  }
  const { extra } = g.end();
  if (extra) out.push(extra);
  return Buffer.concat(out).toString("utf8");
}

type Event = { event: string; json: Record<string, unknown> };
const events = (text: string): Event[] => parseSse(text).events.map((e) => ({ event: e.event, json: JSON.parse(e.data) as Record<string, unknown> }));
const sse = (list: Record<string, unknown>[]): Buffer => Buffer.from(list.map((j) => `event: ${String(j.type)}\ndata: ${JSON.stringify(j)}\n\n`).join(""), "utf8");

/** What the openai SDK ends with: the final response's texts, else the deltas. */
function finalTexts(out: string): { deltas: string; message: string[]; summary: string[]; args: string[] } {
  let deltas = "";
  const message: string[] = [];
  const summary: string[] = [];
  const args: string[] = [];
  for (const { json } of events(out)) {
    if (json.type === "response.output_text.delta") deltas += String(json.delta);
    if (json.type !== "response.completed") continue;
    for (const item of (json.response as { output: Record<string, unknown>[] }).output) {
      if (item.type === "message") for (const c of item.content as { text: string }[]) message.push(c.text);
      if (item.type === "reasoning") for (const s of item.summary as { text: string }[]) summary.push(s.text);
      if (item.type === "function_call") args.push(String(item.arguments));
    }
  }
  return { deltas, message, summary, args };
}

const SECRET = "Card 4111 1111 1111 1111 and SSN 536-22-8726, noted.";
const REDACTED = "Card [REDACTED:credit_card] and SSN [REDACTED:ssn], noted.";

test.serial("redaction: deltas and every repeat of the text (done, part, item, final response) carry the same redacted text", async (t) => {
  const bytes = await upstream({ text: SECRET, reasoning: "User 536-22-8726 asked.", textChunkSize: 3 });
  const out = run(governor([policy("redact", ["credit_card", "ssn"])]), bytes);
  t.false(out.includes("8726") || out.includes("1111 1111"));
  const f = finalTexts(out);
  t.is(f.deltas, REDACTED);
  t.deepEqual(f.message, [REDACTED]);
  t.deepEqual(f.summary, ["User [REDACTED:ssn] asked."]);
  const repeats = events(out).flatMap(({ json }) => (json.type === "response.output_text.done" ? [json.text] : json.type === "response.content_part.done" ? [(json.part as { text: string }).text] : []));
  t.deepEqual(repeats, [REDACTED, REDACTED]);
  // The observer (the trace's view) and the SDK agree on the governed output.
  const o = adapter.streamObserver();
  o.push(Buffer.from(out, "utf8"));
  t.is(o.end().completionText, REDACTED);
});

test.serial("a held tail leaves in an inserted delta of the channel's own kind, before its done event", async (t) => {
  const bytes = await upstream({ text: "The number is 536-22-8726", textChunkSize: 25 });
  const out = events(run(governor([policy("redact", ["ssn"])]), bytes, 4096));
  const i = out.findIndex((e) => e.json.type === "response.output_text.done");
  const inserted = out[i - 1]!;
  t.is(inserted.event, "response.output_text.delta");
  t.like(inserted.json, { type: "response.output_text.delta", output_index: 0, content_index: 0 });
  t.is(typeof inserted.json.item_id, "string");
  t.is(inserted.json.item_id, out[i]!.json.item_id);
  const deltas = out.filter((e) => e.json.type === "response.output_text.delta").map((e) => e.json.delta).join("");
  t.is(deltas, "The number is [REDACTED:ssn]");
  t.is(out[i]!.json.text, "The number is [REDACTED:ssn]");
});

test.serial("function-call arguments: held until complete, redacted in the deltas and in every repeat", async (t) => {
  const bytes = await upstream({ text: "", toolCalls: [{ name: "mail", arguments: { to: "eve@example.com", n: 2 } }], argsChunkSize: 4 });
  const out = run(governor([policy("redact", ["email"])]), bytes);
  const expected = '{"to":"[REDACTED:email]","n":2}';
  const list = events(out);
  t.is(list.filter((e) => e.json.type === "response.function_call_arguments.delta").map((e) => e.json.delta).join(""), expected);
  t.is(list.find((e) => e.json.type === "response.function_call_arguments.done")!.json.arguments, expected);
  t.is((list.find((e) => e.json.type === "response.output_item.done")!.json.item as { arguments: string }).arguments, expected);
  t.deepEqual(finalTexts(out).args, [expected]);
});

const item = { id: "msg_1", type: "message", status: "completed", role: "assistant" };
const created = { type: "response.created", sequence_number: 0, response: { id: "resp_1", status: "in_progress", output: [] } };

test("a repeat that is not what the deltas carried is redacted on its own; one whose text never streamed too", (t) => {
  const stream = sse([
    created,
    { type: "response.output_text.delta", sequence_number: 1, item_id: "msg_1", output_index: 0, content_index: 0, delta: "Hello there." },
    // The done event differs from the deltas (a faulty or hostile upstream): its SSN must not pass.
    { type: "response.output_text.done", sequence_number: 2, item_id: "msg_1", output_index: 0, content_index: 0, text: "Hello there. SSN 536-22-8726" },
    // A final response with an item that never streamed.
    { type: "response.completed", sequence_number: 3, response: { id: "resp_1", status: "completed", output: [{ ...item, content: [{ type: "output_text", text: "Hello there.", annotations: [] }] }, { ...item, id: "msg_2", content: [{ type: "output_text", text: "Mail zed@example.com", annotations: [] }] }] } },
  ]);
  const out = events(run(governor([policy("redact", ["ssn", "email"])]), stream));
  t.is(out.find((e) => e.json.type === "response.output_text.done")!.json.text, "Hello there. SSN [REDACTED:ssn]");
  const final = (out.find((e) => e.json.type === "response.completed")!.json.response as { output: { content: { text: string }[] }[] }).output;
  t.deepEqual(final.map((i) => i.content[0]!.text), ["Hello there.", "Mail [REDACTED:email]"]);
});

test("a block on a repeat the deltas never carried ends the stream with the error event, before it leaves", (t) => {
  const stream = sse([
    created,
    { type: "response.output_text.delta", sequence_number: 1, item_id: "msg_1", output_index: 0, content_index: 0, delta: "Fine." },
    { type: "response.output_text.done", sequence_number: 2, item_id: "msg_1", output_index: 0, content_index: 0, text: "Fine. 536-22-8726 is the SSN" },
  ]);
  const g = governor([policy("block", ["ssn"])]);
  const out = run(g, stream);
  t.true(g.stopped);
  t.false(out.includes("8726"));
  const last = events(out).at(-1)!;
  t.is(last.event, "error");
  t.like(last.json, { type: "error", code: "policy_violation", error: { code: "policy_violation" } });
});

/** One output_text part streamed whole, with one annotation: its delta, annotation.added, the done events and the final response. */
function annotatedStream(text: string, annotation: Record<string, unknown>): Buffer {
  const part = { type: "output_text", text, annotations: [annotation] };
  return sse([
    created,
    { type: "response.output_text.delta", sequence_number: 1, item_id: "msg_1", output_index: 0, content_index: 0, delta: text },
    { type: "response.output_text.annotation.added", sequence_number: 2, item_id: "msg_1", output_index: 0, content_index: 0, annotation_index: 0, annotation },
    { type: "response.output_text.done", sequence_number: 3, item_id: "msg_1", output_index: 0, content_index: 0, text },
    { type: "response.content_part.done", sequence_number: 4, item_id: "msg_1", output_index: 0, content_index: 0, part },
    { type: "response.completed", sequence_number: 5, response: { id: "resp_1", status: "completed", output: [{ ...item, content: [part] }] } },
  ]);
}

test("a url_citation follows the redaction in annotation.added, content_part.done and the final response", (t) => {
  const text = "Ask bob@example.com or read [the docs](https://example.com/d).";
  const start = text.indexOf("[the docs]");
  const annotation = { type: "url_citation", start_index: start, end_index: text.length - 1, url: "https://example.com/d", title: "Docs" };
  const stream = annotatedStream(text, annotation);
  const out = events(run(governor([policy("redact", ["email"])]), stream));
  const redacted = "Ask [REDACTED:email] or read [the docs](https://example.com/d).";
  const placed = (a: { start_index: number; end_index: number }, where: string) => t.is(redacted.slice(a.start_index, a.end_index), "[the docs](https://example.com/d)", where);
  placed(out.find((e) => e.json.type === "response.output_text.annotation.added")!.json.annotation as { start_index: number; end_index: number }, "annotation.added");
  const donePart = out.find((e) => e.json.type === "response.content_part.done")!.json.part as { text: string; annotations: { start_index: number; end_index: number }[] };
  t.is(donePart.text, redacted);
  placed(donePart.annotations[0]!, "content_part.done");
  const finalPart = (out.find((e) => e.json.type === "response.completed")!.json.response as { output: { content: { text: string; annotations: { start_index: number; end_index: number }[] }[] }[] }).output[0]!.content[0]!;
  t.is(finalPart.text, redacted);
  placed(finalPart.annotations[0]!, "response.completed");
});

test.serial("without findings, every event but the deltas (whose text may move between them) leaves byte for byte", async (t) => {
  const bytes = await upstream({ text: "Nothing sensitive in this answer at all.", reasoning: "Just thinking.", toolCalls: [{ name: "f", arguments: { a: "b" } }] });
  const blocks = (s: string) => s.split("\n\n").filter((b) => b !== "" && !/^event: response\.[a-z_.]*\.delta\n/.test(b));
  const out = run(governor([policy("redact", ["ssn"])]), bytes);
  t.deepEqual(blocks(out), blocks(bytes.toString("utf8")));
  t.is(finalTexts(out).deltas, "Nothing sensitive in this answer at all.");
});

const SSN = "536-22-8726";
const done = (o: number, item: Record<string, unknown>) => ({ type: "response.output_item.done", sequence_number: 5, output_index: o, item });
const completed = (output: Record<string, unknown>[]) => ({ type: "response.completed", sequence_number: 9, response: { id: "resp_1", status: "completed", output } });

test("the action of a call the agent runs (computer, shell, local shell, apply patch) is redacted in its item and the final response, or blocks", (t) => {
  const items = [
    { id: "cu_1", type: "computer_call", call_id: "c1", status: "completed", action: { type: "type", text: `SSN ${SSN}` } },
    { id: "sh_1", type: "shell_call", call_id: "c2", status: "completed", action: { commands: [`echo ${SSN} > /tmp/x`] } },
    { id: "ls_1", type: "local_shell_call", call_id: "c3", status: "completed", action: { type: "exec", command: ["bash", "-c", `echo ${SSN}`], env: {} } },
    { id: "ap_1", type: "apply_patch_call", call_id: "c4", status: "completed", operation: { type: "create_file", path: "a.txt", diff: `+SSN ${SSN}` } },
  ];
  const stream = sse([created, ...items.map((item, o) => ({ type: "response.output_item.added", sequence_number: 1, output_index: o, item: { ...item, status: "in_progress" } })), ...items.map((item, o) => done(o, item)), completed(items)]);
  const out = run(governor([policy("redact", ["ssn"])]), stream);
  t.false(out.includes(SSN), "no copy of the value left");
  const final = (events(out).find((e) => e.json.type === "response.completed")!.json.response as { output: Record<string, unknown>[] }).output;
  t.deepEqual((final[0]!.action as { text: string }).text, "SSN [REDACTED:ssn]");
  t.deepEqual((final[1]!.action as { commands: string[] }).commands, ["echo [REDACTED:ssn] > /tmp/x"]);
  t.deepEqual((final[3]!.operation as { diff: string }).diff, "+SSN [REDACTED:ssn]");
  const g = governor([policy("block", ["ssn"])]);
  const blocked = run(g, stream);
  t.true(g.stopped);
  t.false(blocked.includes(SSN));
});

test("hosted tools' texts (search queries, results, code and its logs, MCP arguments) are judged and redacted", (t) => {
  const code = `print("${SSN}")`;
  const stream = sse([
    created,
    { type: "response.output_item.added", sequence_number: 1, output_index: 0, item: { id: "ws_1", type: "web_search_call", status: "in_progress" } },
    done(0, { id: "ws_1", type: "web_search_call", status: "completed", action: { type: "search", query: `owner of ${SSN}` } }),
    { type: "response.output_item.added", sequence_number: 2, output_index: 1, item: { id: "ci_1", type: "code_interpreter_call", status: "in_progress", code: "" } },
    ...[code.slice(0, 9), code.slice(9)].map((delta) => ({ type: "response.code_interpreter_call_code.delta", sequence_number: 3, item_id: "ci_1", output_index: 1, delta })),
    { type: "response.code_interpreter_call_code.done", sequence_number: 4, item_id: "ci_1", output_index: 1, code },
    done(1, { id: "ci_1", type: "code_interpreter_call", status: "completed", code, outputs: [{ type: "logs", logs: SSN }] }),
    done(2, { id: "fs_1", type: "file_search_call", status: "completed", queries: [`SSN ${SSN}`], results: [{ file_id: "f", text: `row ${SSN}` }] }),
    done(3, { id: "mr_1", type: "mcp_approval_request", name: "lookup", server_label: "crm", arguments: JSON.stringify({ ssn: SSN }) }),
  ]);
  const out = run(governor([policy("redact", ["ssn"])]), stream);
  t.false(out.includes(SSN), out);
  const list = events(out);
  t.is(list.filter((e) => e.json.type === "response.code_interpreter_call_code.delta").map((e) => e.json.delta).join(""), 'print("[REDACTED:ssn]")');
  t.is(list.find((e) => e.json.type === "response.code_interpreter_call_code.done")!.json.code, 'print("[REDACTED:ssn]")');
  t.is(((list.find((e) => e.json.type === "response.output_item.done")!.json.item as { action: { query: string } }).action.query), "owner of [REDACTED:ssn]");
});

test("log probabilities are dropped from governed events: the tokens of held or redacted text never leave", (t) => {
  const lp = (token: string) => [{ token, bytes: [...Buffer.from(token)], logprob: -0.1, top_logprobs: [] }];
  const text = `SSN ${SSN}.`;
  const stream = sse([
    created,
    { type: "response.output_text.delta", sequence_number: 1, item_id: "msg_1", output_index: 0, content_index: 0, delta: text, logprobs: lp(text) },
    { type: "response.output_text.done", sequence_number: 2, item_id: "msg_1", output_index: 0, content_index: 0, text, logprobs: lp(text) },
    { type: "response.content_part.done", sequence_number: 3, item_id: "msg_1", output_index: 0, content_index: 0, part: { type: "output_text", text, annotations: [], logprobs: lp(text) } },
    completed([{ ...item, content: [{ type: "output_text", text, annotations: [], logprobs: lp(text) }] }]),
  ]);
  const out = run(governor([policy("redact", ["ssn"])]), stream);
  t.false(out.includes("8726"), out);
  t.false(out.includes(JSON.stringify([...Buffer.from("8726")]).slice(1, -1)));
  t.is(finalTexts(out).message[0], "SSN [REDACTED:ssn].");
});

test("a file citation's name is redacted in annotation.added, content_part.done and the final response, or blocks", (t) => {
  const text = "The case file lists the amount.";
  const annotation = { type: "file_citation", index: text.length, file_id: "file-9", filename: `case ${SSN}.pdf` };
  const stream = annotatedStream(text, annotation);
  const out = run(governor([policy("redact", ["ssn"])]), stream);
  t.false(out.includes(SSN));
  const evs = events(out);
  const added = evs.find((e) => e.json.type === "response.output_text.annotation.added")!.json.annotation as { filename: string; index: number };
  t.deepEqual(added, { ...annotation, filename: "case [REDACTED:ssn].pdf" });
  const donePart = evs.find((e) => e.json.type === "response.content_part.done")!.json.part as { text: string; annotations: { filename: string }[] };
  t.is(donePart.text, text);
  t.is(donePart.annotations[0]!.filename, "case [REDACTED:ssn].pdf");
  const final = (evs.find((e) => e.json.type === "response.completed")!.json.response as { output: { content: { annotations: { filename: string }[] }[] }[] }).output[0]!.content[0]!;
  t.is(final.annotations[0]!.filename, "case [REDACTED:ssn].pdf");
  const blocked = events(run(governor([policy("block", ["ssn"])]), stream));
  t.false(JSON.stringify(blocked).includes(SSN));
  t.is(blocked.at(-1)!.event, "error");
});

/** The fake's stream cut after the first `k` events, ended by a `response.failed` that repeats `output` (the partial output). */
function failedAfter(bytes: Buffer, k: number, output: Record<string, unknown>[]): Buffer {
  const kept = parseSse(bytes.toString("utf8")).events.slice(0, k).map((e) => `event: ${e.event}\ndata: ${e.data}\n\n`).join("");
  const failed = { type: "response.failed", sequence_number: k, response: { id: "resp_1", object: "response", status: "failed", error: { code: "server_error", message: "The model failed." }, output, usage: null } };
  return Buffer.concat([Buffer.from(kept, "utf8"), sse([failed])]);
}

/** The number of events until the deltas of `type` carry `wanted`, and what they carried by then. */
function eventsUntil(bytes: Buffer, type: string, wanted: string): { k: number; carried: string } {
  const all = parseSse(bytes.toString("utf8")).events;
  let k = 0;
  let carried = "";
  while (!carried.includes(wanted)) {
    const j = JSON.parse(all[k]!.data) as Record<string, unknown>;
    if (j.type === type) carried += String(j.delta);
    k++;
  }
  return { k, carried };
}

test.serial("response.failed that repeats the partial output: the held tail is dropped, and the repeat carries what the client got", async (t) => {
  const text = "Thanks for waiting: here is the record you asked for earlier today, checked twice. Your SSN is 536-22-8726, keep it.";
  const bytes = await upstream({ text, textChunkSize: 3 });
  // The events up to the delta after which the answer reads "…536-22-87" (the failure splits the SSN).
  const { k, carried } = eventsUntil(bytes, "response.output_text.delta", "536-22-8");
  const partial = [{ id: "msg_1", type: "message", status: "incomplete", role: "assistant", content: [{ type: "output_text", annotations: [], text: carried }] }];
  const out = run(governor([policy("redact", ["ssn"])]), failedAfter(bytes, k, partial));
  t.false(out.includes("536-22"), out);
  const list = events(out);
  const last = list.at(-1)!;
  t.is(last.json.type, "response.failed", "the provider's failure leaves last");
  const deltas = list.filter((e) => e.json.type === "response.output_text.delta").map((e) => String(e.json.delta)).join("");
  t.true(text.startsWith(deltas) && deltas.length > 0, deltas);
  const repeated = (last.json.response as { output: { content: { text: string }[] }[] }).output[0]!.content[0]!.text;
  t.is(repeated, deltas, "the failed response repeats what the client got, not the held tail");
  t.like(last.json.response, { status: "failed", error: { message: "The model failed." } });
  const o = adapter.streamObserver();
  o.push(Buffer.from(out, "utf8"));
  t.is(o.end().errorMessage, "The model failed.");
});

test.serial("response.failed that repeats a call whose arguments were held: the repeat carries none of them", async (t) => {
  const bytes = await upstream({ text: "", toolCalls: [{ name: "file", arguments: { ssn: "536-22-8726", note: "x" } }], argsChunkSize: 4 });
  const { k, carried: args } = eventsUntil(bytes, "response.function_call_arguments.delta", "536-22");
  const partial = [{ id: "fc_1", type: "function_call", status: "incomplete", arguments: args, call_id: "call_1", name: "file" }];
  const out = run(governor([policy("redact", ["ssn"])]), failedAfter(bytes, k, partial));
  t.false(out.includes("536"), out);
  const last = events(out).at(-1)!;
  t.is(last.json.type, "response.failed");
  t.is((last.json.response as { output: { arguments: string }[] }).output[0]!.arguments, "");
});

test.serial("response.failed whose repeat the governor cannot place is judged on its own: a block ends the stream with the error event", async (t) => {
  const bytes = await upstream({ text: "Hello there.", textChunkSize: 4 });
  const k = parseSse(bytes.toString("utf8")).events.findIndex((e) => e.data.includes("response.output_text.done"));
  const partial = [{ id: "msg_2", type: "message", status: "incomplete", role: "assistant", content: [{ type: "output_text", annotations: [], text: "SSN 536-22-8726" }] }];
  const out = run(governor([policy("block", ["ssn"])]), failedAfter(bytes, k, partial));
  t.false(out.includes("536-22"), out);
  t.regex(events(out).at(-1)!.event, /error/);
});
