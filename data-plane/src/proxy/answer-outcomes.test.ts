// The handler's treatment of a provider's 2xx answer, in one process (real handler, governance state,
// stream governor, undici and an upstream HTTP server answering what each test sets):
// - an answer that cannot be parsed is refused (502 unreadable_answer, traced) when outbound block or
//   redact policies apply, and passed through byte for byte otherwise; a leading BOM is no obstacle;
// - the completion's PII scan is timed in the pii_scan span on every path (JSON, stream, governed stream);
// - a tool-only answer is scored non-empty.
import test from "ava";
import { performance } from "node:perf_hooks";
import { gzipSync } from "node:zlib";
import { create } from "@bufbuild/protobuf";
import { PolicyConditionsSchema, PolicySchema, type Policy, type Trace } from "@agentgov/proto";
import { detectPii } from "../policy/pii/index.js";
import { governStream } from "../policy/stream/index.js";
import { callProxy, governanceState, startInProcessProxy, type InProcessProxy } from "./testing/in-process-proxy.js";

const KEY = "sk_answer_test_key";
const AGENT = "agt_01ANSWER0000000000000000000";

function policy(id: string, action: "block" | "redact" | "log", direction: "inbound" | "outbound" | "both"): Policy {
  return create(PolicySchema, { id, name: id, status: "active", action, priority: 1, conditions: create(PolicyConditionsSchema, { direction, piiTypes: ["email"] }) });
}

interface Answer {
  status?: number;
  headers: Record<string, string>;
  body: Buffer | string;
}

interface Setup extends InProcessProxy {
  answer(a: Answer): void;
}

/** The real handler (with the stream governor) before an upstream that answers what the test last set. */
async function setup(policies: Policy[]): Promise<Setup> {
  let next: Answer = { headers: {}, body: "" };
  const proxy = await startInProcessProxy(
    governanceState({ tenant: "ten_answer", agent: AGENT, key: KEY }, policies),
    (_body, res) => {
      res.writeHead(next.status ?? 200, next.headers);
      res.end(next.body);
    },
    (deps) => {
      deps.streamGovernor = governStream;
    },
  );
  return { ...proxy, answer: (a) => (next = a) };
}

const call = (url: string, stream = false) => callProxy(url, { key: KEY, agent: AGENT }, stream);

async function traceOf(s: Setup, n = 1): Promise<Trace> {
  for (let i = 0; i < 200 && s.traces.length < n; i++) await new Promise((r) => setTimeout(r, 10));
  if (s.traces.length < n) throw new Error("no trace");
  return s.traces[n - 1]!;
}

const span = (tr: Trace, stage: string) => tr.spans.find((x) => x.stage === stage)?.durationMs;
const day = () => new Date().toISOString().slice(0, 10);

const completion = (content: string) =>
  JSON.stringify({ id: "c1", object: "chat.completion", created: 1, model: "gpt-4o-mini", choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
const chunk = (o: object) => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", ...o })}\n\n`;
const sse = (content: string) => chunk({ choices: [{ index: 0, delta: { content }, finish_reason: "stop" }] }) + chunk({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }) + "data: [DONE]\n\n";

const GARBAGE = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58, 0x61, 0x00, 0x00, 0xff, 0x7b]); // zstd-ish bytes, not JSON
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

// --- finding 5: unreadable 2xx answers ---

for (const action of ["redact", "block"] as const) {
  test(`an unreadable 2xx answer with an outbound ${action} policy: 502 unreadable_answer, traced error, budget charged`, async (t) => {
    const s = await setup([policy("pol_out", action, "outbound")]);
    try {
      const answers: Answer[] = [
        { headers: { "content-type": "text/plain" }, body: "jane.doe@example.com is the address" },
        { headers: { "content-type": "application/json", "content-encoding": "zstd" }, body: GARBAGE },
      ];
      for (const [n, answer] of answers.entries()) {
        s.answer(answer);
        const r = await call(s.url);
        t.is(r.status, 502);
        t.false(r.body.includes("jane.doe"));
        const err = (JSON.parse(r.body.toString()) as { error: { code: string; request_id: string; trace_id: string } }).error;
        t.is(err.code, "unreadable_answer");
        t.truthy(err.request_id);
        t.is(err.trace_id, String(r.headers["x-service-trace-id"]));
        const tr = await traceOf(s, n + 1);
        t.is(tr.id, String(r.headers["x-service-trace-id"]));
        t.is(tr.status, "error");
        t.is(tr.errorCode, "unreadable_answer");
        t.is(tr.httpStatus, 502);
        t.true(tr.tokensEstimated);
        t.true(tr.inputTokens > 0, "the provider answered: the prompt it billed is on the trace");
        t.is(s.budget.inFlight(AGENT, day()), 0);
      }
    } finally {
      await s.close();
    }
  });
}

for (const action of ["redact", "block"] as const) {
  test(`a 2xx stream in an encoding the sidecar cannot decode, with an outbound ${action} policy: 502 unreadable_answer, not passed through altered`, async (t) => {
    const s = await setup([policy("pol_out", action, "outbound")]);
    try {
      for (const [n, encoding] of ["zstd", "gzip, br", "br,identity,zstd"].entries()) {
        s.answer({ headers: { "content-type": "text/event-stream", "content-encoding": encoding }, body: GARBAGE });
        const r = await call(s.url, true);
        t.is(r.status, 502, encoding);
        t.is((JSON.parse(r.body.toString()) as { error: { code: string } }).error.code, "unreadable_answer");
        const tr = await traceOf(s, n + 1);
        t.is(tr.errorCode, "unreadable_answer");
        t.true(tr.streamed);
        t.true(tr.inputTokens > 0, "the prompt the provider billed is on the trace");
        t.is(s.budget.inFlight(AGENT, day()), 0);
      }
      // `identity` beside a coding the sidecar decodes is no obstacle.
      s.answer({ headers: { "content-type": "text/event-stream", "content-encoding": "gzip, identity" }, body: gzipSync(sse("Write to jane.doe@example.com please.")) });
      const r = await call(s.url, true);
      t.is(r.status, 200);
      if (action === "redact") t.true(r.text.includes("[REDACTED:email]"));
      t.false(r.text.includes("jane.doe"));
    } finally {
      await s.close();
    }
  });
}

test("a 2xx answer whose gzip body is damaged: 502 unreadable_answer with the prompt charged (not 'unreachable'), with or without policies", async (t) => {
  for (const policies of [[], [policy("pol_out", "redact", "outbound")]]) {
    const s = await setup(policies);
    try {
      const whole = gzipSync(completion("fine"));
      s.answer({ headers: { "content-type": "application/json", "content-encoding": "gzip" }, body: Buffer.concat([whole.subarray(0, 12), Buffer.alloc(20, 0x41)]) });
      const r = await call(s.url);
      t.is(r.status, 502);
      t.is((JSON.parse(r.body.toString()) as { error: { code: string } }).error.code, "unreadable_answer");
      const tr = await traceOf(s);
      t.is(tr.errorCode, "unreadable_answer");
      t.true(tr.inputTokens > 0);
    } finally {
      await s.close();
    }
  }
});

test("an unreadable 2xx answer without outbound block/redact policies (none, log only, inbound only) is passed through byte for byte", async (t) => {
  for (const policies of [[], [policy("pol_log", "log", "outbound")], [policy("pol_in", "redact", "inbound")]]) {
    const s = await setup(policies);
    try {
      s.answer({ headers: { "content-type": "text/plain" }, body: "jane.doe@example.com is the address" });
      let r = await call(s.url);
      t.is(r.status, 200);
      t.is(r.body.toString(), "jane.doe@example.com is the address");
      t.is((await traceOf(s)).status, "success");
      s.answer({ headers: { "content-type": "application/octet-stream" }, body: GARBAGE });
      r = await call(s.url);
      t.is(r.status, 200);
      t.deepEqual(r.body, GARBAGE);
    } finally {
      await s.close();
    }
  }
});

test("an empty 2xx body is passed through even with outbound policies (nothing to judge)", async (t) => {
  const s = await setup([policy("pol_out", "redact", "outbound")]);
  try {
    s.answer({ headers: { "content-type": "application/json" }, body: "" });
    const r = await call(s.url);
    t.is(r.status, 200);
    t.is(r.body.length, 0);
  } finally {
    await s.close();
  }
});

test("a JSON answer with a leading UTF-8 BOM is parsed: outbound redaction applies, usage is the provider's", async (t) => {
  const s = await setup([policy("pol_out", "redact", "outbound")]);
  try {
    s.answer({ headers: { "content-type": "application/json" }, body: Buffer.concat([BOM, Buffer.from(completion("Write to jane.doe@example.com please."))]) });
    const r = await call(s.url);
    t.is(r.status, 200);
    const json = JSON.parse(r.body.toString()) as { choices: { message: { content: string } }[] };
    t.is(json.choices[0]!.message.content, "Write to [REDACTED:email] please.");
    const tr = await traceOf(s);
    t.is(tr.status, "success");
    t.false(tr.tokensEstimated);
    t.is(tr.outputTokens, 5);
  } finally {
    await s.close();
  }
});

test("a JSON answer with a BOM and no outbound policies: passed through byte for byte, BOM included, usage parsed", async (t) => {
  const s = await setup([]);
  try {
    const body = Buffer.concat([BOM, Buffer.from(completion("fine"))]);
    s.answer({ headers: { "content-type": "application/json" }, body });
    const r = await call(s.url);
    t.deepEqual(r.body, body);
    const tr = await traceOf(s);
    t.false(tr.tokensEstimated);
    t.is(tr.outputTokens, 5);
  } finally {
    await s.close();
  }
});

// --- finding 8: the completion's PII scan is in the pii_scan span ---

/** A long completion whose PII scan takes measurable time (many digit runs, no finding). */
const LONG = "Order 12 shipped to the depot near 4th street, ref 88 and 91. ".repeat(6000);
/**
 * The fastest of a few PII scans of LONG here (the trace's pii_scan must hold at least about that).
 * Measured after the calls, warm as the handler's scans were: measured cold, under a loaded CI the
 * reference once came out at 7.3 ms against 2 ms scans in the calls.
 */
function scanMs(): number {
  let best = Infinity;
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    detectPii(LONG);
    best = Math.min(best, performance.now() - t);
  }
  return best;
}

test("pii_scan includes the completion's scan: JSON answer (not counted in policy_eval)", async (t) => {
  const s = await setup([]);
  try {
    s.answer({ headers: { "content-type": "application/json" }, body: completion(LONG) });
    // A GC pause or a lost CPU slice can land inside the (empty) policy evaluation of one call and make it
    // look as long as a scan (CI saw 2.6 ms once): up to three calls, and one whose spans split the time
    // right is the proof. If the scan were counted in policy_eval, every call would show it.
    const calls: { scan: number; evaluation: number }[] = [];
    for (let i = 1; i <= 3; i++) {
      await call(s.url);
      const tr = await traceOf(s, i);
      calls.push({ scan: span(tr, "pii_scan")!, evaluation: span(tr, "policy_eval")! });
    }
    const min = scanMs() / 2;
    const seen = calls.map((c) => `pii_scan ${c.scan} ms, policy_eval ${c.evaluation} ms`);
    t.true(
      calls.some((c) => c.scan >= min && c.evaluation < min),
      `a scan of the completion takes ~${2 * min} ms; the calls showed ${seen.join("; ")}`,
    );
  } finally {
    await s.close();
  }
});

test("pii_scan includes the completion's scan: stream without a governor (not counted in quality_score)", async (t) => {
  const s = await setup([]);
  try {
    s.answer({ headers: { "content-type": "text/event-stream" }, body: sse(LONG) });
    await call(s.url, true);
    const tr = await traceOf(s);
    t.true(tr.streamed);
    t.true(span(tr, "pii_scan")! >= scanMs() / 2, `pii_scan ${span(tr, "pii_scan")} ms`);
  } finally {
    await s.close();
  }
});

for (const action of ["redact", "log"] as const) {
  test(`pii_scan includes the completion's scans: stream governed by an outbound ${action} policy (not counted in policy_eval)`, async (t) => {
    const s = await setup([policy("pol_out", action, "outbound")]);
    try {
      s.answer({ headers: { "content-type": "text/event-stream" }, body: sse(LONG) });
      await call(s.url, true);
      const tr = await traceOf(s);
      const min = scanMs() / 2;
      t.true(span(tr, "pii_scan")! >= min, `pii_scan ${span(tr, "pii_scan")} ms, a scan of the completion takes ~${2 * min} ms`);
      t.true(tr.policyEvaluations.length > 0);
    } finally {
      await s.close();
    }
  });
}

// --- finding 6, end to end through the handler ---

test("a tool-only JSON answer is scored non_empty 1 and relevance 1", async (t) => {
  const s = await setup([]);
  try {
    const body = JSON.stringify({
      id: "c1",
      object: "chat.completion",
      created: 1,
      model: "gpt-4o-mini",
      choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup_customer", arguments: "{}" } }] }, finish_reason: "tool_calls" }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    });
    s.answer({ headers: { "content-type": "application/json" }, body });
    await call(s.url);
    const tr = await traceOf(s);
    const scores = Object.fromEntries(tr.qualityScores.map((q) => [q.scorer, q.score]));
    t.is(scores.non_empty, 1);
    t.is(scores.relevance, 1);
  } finally {
    await s.close();
  }
});

test("a provider that read the request and reset the connection: 502, the prompt it may have billed charged (estimated); one never reached: nothing charged, its address in the log only", async (t) => {
  const reset = await startInProcessProxy(governanceState({ tenant: "ten_answer", agent: AGENT, key: KEY }), (_body, res) => res.socket?.destroy());
  try {
    const r = await call(reset.url);
    t.is(r.status, 502);
    t.is((JSON.parse(r.body.toString()) as { error: { code: string } }).error.code, "upstream_unavailable");
    const tr = await traceOf({ ...reset, answer: () => undefined });
    t.true(tr.inputTokens > 0, "the provider had the whole prompt");
    t.true(tr.tokensEstimated);
    t.true(tr.costUsd > 0);
  } finally {
    await reset.close();
  }
  const logged: string[] = [];
  const refused = await startInProcessProxy(
    governanceState({ tenant: "ten_answer", agent: AGENT, key: KEY }),
    () => undefined,
    (deps) => {
      deps.baseUrls = { openai: "http://127.0.0.1:9" }; // discard port: nothing listens, the connection is refused
      deps.onError = (e, where) => logged.push(`${where} ${String(e)}`);
    },
  );
  try {
    const r = await call(refused.url);
    t.is(r.status, 502);
    // The provider's internal address is for the sidecar's log, not the client.
    t.is((JSON.parse(r.text) as { error: { message: string } }).error.message, "openai is unreachable (ECONNREFUSED)");
    t.false(r.text.includes("127.0.0.1"));
    t.deepEqual(logged, ["proxy.upstream Error: openai is unreachable: ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9"]);
    const tr = await traceOf({ ...refused, answer: () => undefined });
    t.is(tr.inputTokens, 0, "never connected: the provider billed nothing");
    t.is(tr.costUsd, 0);
  } finally {
    await refused.close();
  }
});

// --- review (session 16): a block that only the whole output shows ended the stream after [DONE] ---

test("a block policy that only the whole streamed answer matches ends the stream with its error before [DONE], not after it", async (t) => {
  // The regex spans more text than the governor's window: only the end-of-stream judgement sees it whole.
  const wide = create(PolicySchema, { id: "pol_wide", name: "wide", status: "active", action: "block", priority: 1, conditions: create(PolicyConditionsSchema, { direction: "outbound", regex: "alpha.{200,400}omega" }) });
  const s = await setup([wide]);
  try {
    const text = `alpha ${"filler words ".repeat(20)} omega and then some closing words.`;
    let body = "";
    for (let i = 0; i < text.length; i += 5) body += chunk({ choices: [{ index: 0, delta: { content: text.slice(i, i + 5) }, finish_reason: null }] });
    body += chunk({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) + chunk({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 50, total_tokens: 60 } }) + "data: [DONE]\n\n";
    s.answer({ headers: { "content-type": "text/event-stream" }, body });
    const r = await call(s.url, true);
    const out = r.body.toString();
    // The answer's tail left with its finish chunk (a channel's end releases it, in order); the verdict
    // comes at the end marker, before it, where every SDK still reads and raises it.
    t.false(out.includes("[DONE]"), "the end marker never left: the error event ended the stream");
    t.regex(out, /blocked by policy \\"wide\\"/);
    t.true(out.trimEnd().endsWith("}"), "the error event is the last thing sent");
    const tr = await traceOf(s);
    t.is(tr.status, "blocked");
  } finally {
    await s.close();
  }
});

test("a streamed event too deeply nested for the governor to rewrite stops the stream there, fail closed: an error event, trace unreadable_answer, nothing of it sent", async (t) => {
  const s = await setup([policy("pol_out", "redact", "outbound")]);
  try {
    // Written by hand: JSON.stringify cannot write it either.
    const deep = `${"[".repeat(20000)}1${"]".repeat(20000)}`;
    const nested = chunk({ choices: [{ index: 0, delta: { content: "write to jane.doe@example.com please" }, finish_reason: null }] }).replace(/}\n\n$/, `,"deep":${deep}}\n\n`);
    const body =
      chunk({ choices: [{ index: 0, delta: { content: "Hello, " }, finish_reason: null }] }) +
      nested +
      chunk({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }) +
      "data: [DONE]\n\n";
    s.answer({ headers: { "content-type": "text/event-stream" }, body });
    const r = await call(s.url, true);
    const out = r.body.toString();
    t.false(out.includes("jane"), "nothing of the event left");
    t.false(out.includes("[DONE]"));
    t.regex(out, /could not be governed/);
    const tr = await traceOf(s);
    t.is(tr.status, "error");
    t.is(tr.errorCode, "unreadable_answer");
  } finally {
    await s.close();
  }
});
