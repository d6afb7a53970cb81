// The trace endpoints of both groups against a known set of traces delivered through Ingest.Upload:
// GET /v1/traces (defaults, inclusive bounds, every filter, limits, cursor walk), GET /v1/traces/{id}
// (every detail item of DESIGN.md §8), GET /api/traces (every filter, exact total, blocked as error),
// GET /api/traces/:id (qualityScores, spans), GET /api/traces/stats (period, agentId, every groupBy),
// validation (400) and scopes. Runs on chDB, or on the ClickHouse server when CLICKHOUSE_URL is set.
// Every response is checked against the OpenAPI document by the harness.
import test from "ava";
import type { Trace } from "@agentgov/proto";
import { startStack, type Stack } from "../harness/stack.js";
import { DAY, HOUR, MINUTE, makeTrace, uploadTraces } from "./traces-helpers.js";

interface SummaryA { id: string; agent_id: string; model: string; status: string; input_tokens: number; output_tokens: number; cost: number; latency_ms: number; pii_detected: boolean; policies_evaluated: number; policies_blocked: number; timestamp: string }
interface ListA { data: SummaryA[]; has_more: boolean; next_cursor?: string }
interface TraceB { id: string; agentId: string; agentName: string; status: string; environment: string; sessionId: string | null; modelProvider: string; modelName: string; inputTokens: number; outputTokens: number; costUsd: number; durationMs: number; injectionScore: number; piiDetected: { entityType: string; start: number; end: number; source: string; score: number }[]; policiesFired: string[]; createdAt: string }
interface ListB { data: TraceB[]; total: number; limit: number; offset: number }
interface Measures { traceCount: number; totalCostUsd: number; errorRatePercent: number; avgDurationMs: number }
interface Stats {
  period: string;
  summary: { totalTraces: number; successCount: number; errorCount: number; errorRatePercent: number; totalInputTokens: number; totalOutputTokens: number; totalCostUsd: number; avgDurationMs: number; p50DurationMs: number; p95DurationMs: number; p99DurationMs: number };
  groups: (Measures & Record<string, unknown>)[];
}

let stack: Stack;
const T = Date.now() - 1000; // every trace is at least a second old, so "until now" includes it
const agents: Record<"support" | "billing" | "bulk", string> = { support: "", billing: "", bulk: "" };
const tr: Record<string, Trace> = {};
const all: Trace[] = [];

const iso = (ms: number) => new Date(ms).toISOString();
const enc = encodeURIComponent;

test.before(async () => {
  stack = await startStack();
  const mk = async (name: string, environment: string) =>
    (await stack.api.post<{ data: { id: string } }>("/api/agents", { name, environment, modelProvider: "openai", modelName: "gpt-4o-mini" })).body.data.id;
  agents.support = await mk("support-bot", "production");
  agents.billing = await mk("billing-bot", "staging");
  agents.bulk = await mk("bulk-bot", "dev");
  const tenantId = stack.cp.tenantId;
  const a = (k: string, t: Trace) => {
    tr[k] = t;
    all.push(t);
  };
  a("a1", makeTrace({ tenantId, agentId: agents.support, agentName: "old-support-name", atMs: T - 10 * MINUTE, pii: true, sessionId: "sess-1", tools: ["search"], costUsd: 0.002, injectionScore: 0.1, latencyMs: 300 }));
  a("a2", makeTrace({ tenantId, agentId: agents.support, atMs: T - 20 * MINUTE, status: "error", costUsd: 0.0005, injectionScore: 0.7, latencyMs: 900 }));
  a("a3", makeTrace({ tenantId, agentId: agents.support, atMs: T - 30 * MINUTE, status: "blocked", pii: true, costUsd: 0, injectionScore: 0.95, latencyMs: 12 }));
  a("b1", makeTrace({ tenantId, agentId: agents.billing, environment: "staging", provider: "anthropic", model: "claude-3-5-haiku", atMs: T - 5 * MINUTE, costUsd: 0.01, latencyMs: 1200 }));
  a("b2", makeTrace({ tenantId, agentId: agents.billing, environment: "staging", atMs: T - 2 * HOUR, costUsd: 0.003, latencyMs: 400 }));
  a("b3", makeTrace({ tenantId, agentId: agents.billing, environment: "staging", atMs: T - 3 * DAY, costUsd: 0.004, latencyMs: 500 }));
  // an agent created without an environment (its traces carry ""), older than the stats' periods
  a("c1", makeTrace({ tenantId, agentId: agents.bulk, environment: "", atMs: T - 10 * DAY, costUsd: 0.001, latencyMs: 200 }));
  for (let i = 0; i < 70; i++) {
    a(`bulk${i}`, makeTrace({ tenantId, agentId: agents.bulk, environment: "dev", atMs: T - 40 * MINUTE - i * 1000, costUsd: 0.00011 * (i + 1), latencyMs: 100 + i }));
  }
  const out = await uploadTraces(stack.cp.grpcUrl, stack.adminKey, all, { batch: 25 });
  if (out.acked.size !== all.length) throw new Error(`only ${out.acked.size} of ${all.length} traces acknowledged: ${JSON.stringify([...out.rejected])}`);
  // Another tenant's trace on the same agent id must never show.
  await stack.cp.traces.insert([makeTrace({ tenantId: "ten_01JD3Z6Q4W8X9Y0Z1A2B3C4D5X", agentId: agents.support, atMs: T - 15 * MINUTE })]);
});
test.after.always(async () => {
  await stack?.stop();
});

const byTimeDesc = (xs: Trace[]) => [...xs].sort((x, y) => Number(y.timestampMs - x.timestampMs) || (x.id < y.id ? 1 : -1));
const ids = (xs: { id: string }[]) => xs.map((x) => x.id);
const inWindow = (from: number, to: number) => byTimeDesc(all.filter((t) => Number(t.timestampMs) >= from && Number(t.timestampMs) <= to));

test("GET /v1/traces: the last hour by default, newest first, 50 per page, summary fields as stored", async (t) => {
  const r = await stack.api.get<ListA>("/v1/traces");
  t.is(r.status, 200);
  const expected = inWindow(Date.now() - HOUR, Date.now());
  t.true(expected.length > 50);
  t.deepEqual(ids(r.body.data), ids(expected.slice(0, 50)));
  t.true(r.body.has_more);
  t.is(typeof r.body.next_cursor, "string");
  const a1 = r.body.data.find((x) => x.id === tr.a1!.id)!;
  t.deepEqual(a1, {
    id: tr.a1!.id, agent_id: agents.support, model: "gpt-4o-mini", status: "success", input_tokens: 120, output_tokens: 40, cost: 0.002,
    latency_ms: 300, pii_detected: true, policies_evaluated: 1, policies_blocked: 0, timestamp: iso(Number(tr.a1!.timestampMs)),
  });
  const a3 = r.body.data.find((x) => x.id === tr.a3!.id)!;
  t.is(a3.status, "blocked");
  t.is(a3.policies_blocked, 1);
});

test("GET /v1/traces: since/until are inclusive to the millisecond; a date alone as until means the end of that day", async (t) => {
  const at = Number(tr.a1!.timestampMs);
  const exact = await stack.api.get<ListA>(`/v1/traces?since=${enc(iso(at))}&until=${enc(iso(at))}`);
  t.deepEqual(ids(exact.body.data), [tr.a1!.id]);
  const before = await stack.api.get<ListA>(`/v1/traces?since=${enc(iso(at + 1))}&until=${enc(iso(at + 1000))}`);
  t.false(ids(before.body.data).includes(tr.a1!.id));
  const threeDays = await stack.api.get<ListA>(`/v1/traces?agent_id=${agents.billing}&since=${enc(iso(T - 4 * DAY))}&limit=200`);
  t.deepEqual(ids(threeDays.body.data), ids([tr.b1!, tr.b2!, tr.b3!]));
  const day = iso(Number(tr.b3!.timestampMs)).slice(0, 10);
  const wholeDay = await stack.api.get<ListA>(`/v1/traces?agent_id=${agents.billing}&since=${day}&until=${day}`);
  t.deepEqual(ids(wholeDay.body.data), [tr.b3!.id]);
  // An offset without a colon, and no offset at all (= UTC), are both understood.
  const noZone = await stack.api.get<ListA>(`/v1/traces?since=${enc(iso(at).slice(0, -1))}&until=${enc(iso(at).replace("Z", "+0000"))}`);
  t.deepEqual(ids(noZone.body.data), [tr.a1!.id]);
});

test("GET /v1/traces: agent_id, status and has_pii filter (has_pii=false = only traces without PII)", async (t) => {
  const q = (s: string) => stack.api.get<ListA>(`/v1/traces?limit=200&${s}`).then((r) => ids(r.body.data));
  const window = inWindow(Date.now() - HOUR, Date.now());
  t.deepEqual(await q(`agent_id=${agents.support}`), ids([tr.a1!, tr.a2!, tr.a3!]));
  t.deepEqual(await q("status=blocked"), [tr.a3!.id]);
  t.deepEqual(await q("status=error"), [tr.a2!.id]);
  t.deepEqual(await q("status=success"), ids(window.filter((x) => x.status === "success")));
  t.deepEqual(await q("has_pii=true"), ids([tr.a1!, tr.a3!]));
  t.deepEqual(await q("has_pii=false"), ids(window.filter((x) => x.piiDetections.length === 0)));
  t.deepEqual(await q(`agent_id=${agents.support}&status=success&has_pii=true`), [tr.a1!.id]);
  t.deepEqual(await q("agent_id=agt_01JD3Z6Q4W8X9Y0Z1A2B3C4D5E"), []);
});

test("GET /v1/traces: the cursor walks every trace of the window once, in order; limits are enforced", async (t) => {
  const since = iso(T - 4 * DAY);
  const seen: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const r = await stack.api.get<ListA>(`/v1/traces?since=${enc(since)}&limit=7${cursor ? `&cursor=${cursor}` : ""}`);
    t.is(r.status, 200);
    t.true(r.body.data.length <= 7);
    seen.push(...ids(r.body.data));
    t.is(r.body.has_more, r.body.next_cursor !== undefined);
    cursor = r.body.next_cursor;
    pages++;
  } while (cursor && pages < 100);
  t.deepEqual(seen, ids(inWindow(T - 4 * DAY, Date.now())));
  t.is((await stack.api.get<ListA>("/v1/traces?limit=200")).status, 200);
  // A window reaching back to year 1 pages like any other.
  const early = await stack.api.get<ListA>(`/v1/traces?since=0001-01-01&limit=50`);
  t.true(early.body.has_more);
  const earlyNext = await stack.api.get<ListA>(`/v1/traces?limit=50&cursor=${early.body.next_cursor!}`);
  t.is(earlyNext.status, 200);
  t.deepEqual([...ids(early.body.data), ...ids(earlyNext.body.data)], ids(byTimeDesc(all)).slice(0, 100));
  for (const bad of ["limit=201", "limit=0", "limit=abc", "limit=-1", "limit=1.5", "status=ok", "status=", "has_pii=yes", "since=yesterday", "since=2026-02-30", "until=2026-13-01T00:00:00Z", "cursor=%%%", "cursor=bm90LWEtY3Vyc29y"]) {
    const r = await stack.api.get<{ error: { code: string; message: string; request_id: string } }>(`/v1/traces?${bad}`);
    t.is(r.status, 400, bad);
    t.is(r.body.error.code, "bad_request", bad);
  }
  const inverted = await stack.api.get(`/v1/traces?since=${enc(iso(T))}&until=${enc(iso(T - HOUR))}`);
  t.is(inverted.status, 400);
});

test("GET /v1/traces: since defaults to one hour before now, also when until is given", async (t) => {
  // until far ahead: the window is [now − 1 h, until], so the recent traces are there and the older ones not
  const future = await stack.api.get<ListA>(`/v1/traces?until=2200-01-01&limit=200`);
  t.is(future.status, 200);
  t.deepEqual(ids(future.body.data), ids(inWindow(Date.now() - HOUR, Date.now())));
  t.true(future.body.data.some((x) => x.id === tr.a1!.id));
  t.false(future.body.data.some((x) => x.id === tr.b2!.id)); // two hours old
  // until older than now − 1 h without since: an empty window, not an error
  const old = await stack.api.get<ListA>(`/v1/traces?until=${enc(iso(T - 2 * HOUR))}`);
  t.is(old.status, 200);
  t.deepEqual(old.body, { data: [], has_more: false });
  // the same until with an explicit since reaches back
  const explicit = await stack.api.get<ListA>(`/v1/traces?since=${enc(iso(T - 3 * HOUR))}&until=${enc(iso(T - 2 * HOUR))}`);
  t.deepEqual(ids(explicit.body.data), [tr.b2!.id]);
});

test("GET /v1/traces/{trace_id}: the full detail — texts, cost breakdown, evaluations, PII spans, timing", async (t) => {
  const src = tr.a1!;
  const r = await stack.api.get<Record<string, unknown>>(`/v1/traces/${src.id}`);
  t.is(r.status, 200);
  t.like(r.body, {
    id: src.id, agent_id: agents.support, agent_name: "old-support-name", environment: "production", provider: "openai", model: "gpt-4o-mini",
    session_id: "sess-1", status: "success", prompt: src.prompt, completion: src.completion, injection_score: 0.1,
    tokens_estimated: false, price_missing: false, price_version: "2026-11-01", pii_scan_enabled: true, error_code: "", http_status: 200, streamed: false,
    policies_fired: [],
  });
  t.deepEqual(r.body.cost_breakdown, {
    input_tokens: 120, output_tokens: 40, cached_input_tokens: 0, cache_write_tokens: 0, input_cost: src.inputCost, output_cost: src.outputCost,
    total_cost: 0.002, currency: "USD", price_per_million_input: 0.15, price_per_million_output: 0.6,
  });
  t.deepEqual(r.body.policy_evaluations, [{ policy_id: "pol_01JD3Z6Q4W8X9Y0Z1A2B3C4D5E", policy_name: "no SSN", result: "pass", action_taken: "none" }]);
  t.deepEqual(r.body.pii_detections, [{ entity_type: "ssn", start: 28, end: 39, source: "prompt", score: 0.95 }]);
  t.deepEqual(r.body.timing, {
    total_ms: 300, provider_ms: src.providerMs, overhead_ms: src.overheadMs,
    spans: src.spans.map((s) => ({ stage: s.stage, duration_ms: s.durationMs })),
  });
  t.deepEqual(r.body.quality_scores, [{ scorer: "relevance", score: 0.8 }]);
  t.deepEqual(r.body.tool_calls, [{ name: "search", id: "call_0" }]);
  const blocked = await stack.api.get<Record<string, unknown>>(`/v1/traces/${tr.a3!.id}`);
  t.like(blocked.body, { status: "blocked", session_id: null, error_code: "policy_violation", policies_blocked: 1, policies_fired: ["no SSN"] });
  t.deepEqual(blocked.body.policy_evaluations, [{ policy_id: "pol_01JD3Z6Q4W8X9Y0Z1A2B3C4D5E", policy_name: "no SSN", result: "fail", action_taken: "block" }]);
  const missing = await stack.api.get<{ error: { code: string } }>("/v1/traces/trc_01JD3Z6Q4W8X9Y0Z1A2B3C4D5E");
  t.is(missing.status, 404);
  t.is(missing.body.error.code, "not_found");
});

test("GET /api/traces: no default window, exact total, blocked shows as error, group B fields", async (t) => {
  const r = await stack.api.get<ListB>("/api/traces?limit=500");
  t.is(r.status, 200);
  t.is(r.body.total, all.length);
  t.is(r.body.limit, 500);
  t.is(r.body.offset, 0);
  t.deepEqual(ids(r.body.data), ids(byTimeDesc(all)));
  const a1 = r.body.data.find((x) => x.id === tr.a1!.id)!;
  t.deepEqual(a1, {
    id: tr.a1!.id, agentId: agents.support, agentName: "support-bot", status: "success", environment: "production", sessionId: "sess-1",
    modelProvider: "openai", modelName: "gpt-4o-mini", inputTokens: 120, outputTokens: 40, costUsd: 0.002, durationMs: 300, injectionScore: 0.1,
    piiDetected: [{ entityType: "ssn", start: 28, end: 39, source: "prompt", score: 0.95 }], policiesFired: [], createdAt: iso(Number(tr.a1!.timestampMs)),
  });
  const a3 = r.body.data.find((x) => x.id === tr.a3!.id)!;
  t.is(a3.status, "error");
  t.deepEqual(a3.policiesFired, ["no SSN"]);
  t.is(a3.sessionId, null);
  const page = await stack.api.get<ListB>("/api/traces?limit=10&offset=70");
  t.is(page.body.total, all.length);
  t.deepEqual(ids(page.body.data), ids(byTimeDesc(all).slice(70, 80)));
  const dflt = await stack.api.get<ListB>("/api/traces");
  t.is(dflt.body.data.length, 50);
  t.is(dflt.body.limit, 50);
});

test("GET /api/traces: every filter, alone and combined; bounds inclusive", async (t) => {
  const q = async (s: string) => {
    const r = await stack.api.get<ListB>(`/api/traces?limit=500&${s}`);
    t.is(r.status, 200, s);
    t.is(r.body.total, r.body.data.length, s);
    return ids(r.body.data);
  };
  const pick = (f: (x: Trace) => boolean) => ids(byTimeDesc(all.filter(f)));
  t.deepEqual(await q(`agentId=${agents.billing}`), pick((x) => x.agentId === agents.billing));
  t.deepEqual(await q("status=error"), pick((x) => x.status !== "success"));
  t.deepEqual(await q("status=success"), pick((x) => x.status === "success"));
  t.deepEqual(await q("environment=staging"), pick((x) => x.environment === "staging"));
  // An empty environment is the one of agents created without one (as GET /api/agents?environment=).
  t.deepEqual(await q("environment="), [tr.c1!.id]);
  const b2 = Number(tr.b2!.timestampMs);
  t.deepEqual(await q(`startDate=${enc(iso(b2))}&endDate=${enc(iso(b2))}`), [tr.b2!.id]);
  t.deepEqual(await q(`endDate=${enc(iso(b2))}`), pick((x) => Number(x.timestampMs) <= b2));
  t.deepEqual(await q(`startDate=${enc(iso(b2))}`), pick((x) => Number(x.timestampMs) >= b2));
  t.deepEqual(await q("minCostUsd=0.002"), pick((x) => x.costUsd >= 0.002));
  t.deepEqual(await q("maxCostUsd=0.002"), pick((x) => x.costUsd <= 0.002));
  t.deepEqual(await q("minCostUsd=0.002&maxCostUsd=0.002"), [tr.a1!.id]);
  t.deepEqual(await q("minInjectionScore=0.7"), pick((x) => x.injectionScore >= 0.7));
  t.deepEqual(await q("minInjectionScore=1"), []);
  t.deepEqual(await q(`agentId=${agents.support}&status=error&minInjectionScore=0.9`), [tr.a3!.id]);
  t.deepEqual(await q(`environment=dev&minCostUsd=0.005&endDate=${enc(iso(T - 40 * MINUTE - 20_000))}`), pick((x) => x.environment === "dev" && x.costUsd >= 0.005 && Number(x.timestampMs) <= T - 40 * MINUTE - 20_000));
});

test("GET /api/traces: malformed parameters are 400 with details", async (t) => {
  for (const bad of [
    "limit=501", "limit=0", "limit=x", "offset=-1", "offset=1.5", "status=blocked", "status=ERROR", "startDate=nope", "endDate=2026-02-30",
    "minCostUsd=abc", "minCostUsd=-1", "maxCostUsd=NaN", "maxCostUsd=Infinity", "minInjectionScore=1.01", "minInjectionScore=-0.1",
    "minInjectionScore=0x1", "minCostUsd=1&maxCostUsd=0.5", `startDate=${enc(iso(T))}&endDate=${enc(iso(T - DAY))}`, "agentId=",
  ]) {
    const r = await stack.api.get<{ error: string; details?: { path: string }[] }>(`/api/traces?${bad}`);
    t.is(r.status, 400, bad);
    t.is(typeof r.body.error, "string", bad);
  }
  const unknown = await stack.api.get("/api/traces?colour=blue");
  t.is(unknown.status, 200, "unknown parameters are ignored");
});

test("GET /api/traces/:id: the trace with qualityScores and spans; 404 for unknown and other tenants' traces", async (t) => {
  const r = await stack.api.get<{ data: TraceB & { qualityScores: unknown; spans: unknown } }>(`/api/traces/${tr.b1!.id}`);
  t.is(r.status, 200);
  t.like(r.body.data, { id: tr.b1!.id, agentName: "billing-bot", modelProvider: "anthropic", modelName: "claude-3-5-haiku", environment: "staging", durationMs: 1200 });
  t.deepEqual(r.body.data.qualityScores, [{ scorer: "relevance", score: 0.8 }]);
  t.deepEqual(r.body.data.spans, [
    { stage: "policy_eval", durationMs: 0 },
    { stage: "pii_scan", durationMs: 1 },
    { stage: "provider", durationMs: 1080 },
    { stage: "quality_score", durationMs: 1 },
  ]);
  t.is((await stack.api.get("/api/traces/trc_01JD3Z6Q4W8X9Y0Z1A2B3C4D5E")).status, 404);
  const foreign = (await stack.cp.traces.listByOffset("ten_01JD3Z6Q4W8X9Y0Z1A2B3C4D5X", { limit: 1, offset: 0 })).traces[0]!;
  t.is((await stack.api.get(`/api/traces/${foreign.id}`)).status, 404);
  t.is((await stack.api.get(`/v1/traces/${foreign.id}`)).status, 404);
});

function expectedSummary(xs: Trace[]) {
  const n = xs.length;
  const errors = xs.filter((x) => x.status !== "success").length;
  return {
    totalTraces: n,
    successCount: n - errors,
    errorCount: errors,
    errorRatePercent: n ? (errors / n) * 100 : 0,
    totalInputTokens: xs.reduce((s, x) => s + x.inputTokens, 0),
    totalOutputTokens: xs.reduce((s, x) => s + x.outputTokens, 0),
    totalCostUsd: xs.reduce((s, x) => s + x.costUsd, 0),
    avgDurationMs: n ? xs.reduce((s, x) => s + x.latencyMs, 0) / n : 0,
  };
}

function assertClose(t: import("ava").ExecutionContext, actual: Record<string, unknown>, expected: Record<string, number>, what: string) {
  for (const [k, v] of Object.entries(expected)) {
    const a = actual[k];
    t.is(typeof a, "number", `${what}.${k}`);
    t.true(Math.abs((a as number) - v) <= 1e-9 * Math.max(1, Math.abs(v)), `${what}.${k}: ${String(a)} ≠ ${v}`);
  }
}

test("GET /api/traces/stats: every summary field, period windows and agentId", async (t) => {
  const r = await stack.api.get<Stats>("/api/traces/stats");
  t.is(r.status, 200);
  t.is(r.body.period, "24h");
  t.deepEqual(r.body.groups, []);
  const day = all.filter((x) => Number(x.timestampMs) >= Date.now() - DAY);
  assertClose(t, r.body.summary, expectedSummary(day), "24h");
  for (const k of ["p50DurationMs", "p95DurationMs", "p99DurationMs"] as const) t.is(typeof r.body.summary[k], "number");
  const week = await stack.api.get<Stats>("/api/traces/stats?period=7d");
  t.is(week.body.period, "7d");
  assertClose(t, week.body.summary, expectedSummary(all.filter((x) => Number(x.timestampMs) >= Date.now() - 7 * DAY)), "7d");
  const month = await stack.api.get<Stats>("/api/traces/stats?period=30d");
  assertClose(t, month.body.summary, expectedSummary(all), "30d");
  const hour = await stack.api.get<Stats>(`/api/traces/stats?period=1h&agentId=${agents.support}`);
  assertClose(t, hour.body.summary, expectedSummary([tr.a1!, tr.a2!, tr.a3!]), "1h support");
  t.is(hour.body.summary.errorRatePercent, (2 / 3) * 100);
  t.is(hour.body.summary.p50DurationMs, 300);
  const none = await stack.api.get<Stats>("/api/traces/stats?period=30d&agentId=agt_01JD3Z6Q4W8X9Y0Z1A2B3C4D5E");
  t.like(none.body.summary, { totalTraces: 0, errorRatePercent: 0, avgDurationMs: 0, p50DurationMs: 0, p95DurationMs: 0, p99DurationMs: 0 });
  for (const bad of ["period=2h", "period=", "period=24H", "groupBy=team", "groupBy="]) {
    t.is((await stack.api.get(`/api/traces/stats?${bad}`)).status, 400, bad);
  }
});

test("GET /api/traces/stats: groups by agent (current names), model and environment", async (t) => {
  const week = all.filter((x) => Number(x.timestampMs) >= Date.now() - 7 * DAY);
  const groupOf = (key: (x: Trace) => string) => {
    const m = new Map<string, Trace[]>();
    for (const x of week) m.set(key(x), [...(m.get(key(x)) ?? []), x]);
    return m;
  };
  const check = (g: Measures, xs: Trace[], what: string) => {
    const e = expectedSummary(xs);
    assertClose(t, g as unknown as Record<string, unknown>, { traceCount: e.totalTraces, totalCostUsd: e.totalCostUsd, errorRatePercent: e.errorRatePercent, avgDurationMs: e.avgDurationMs }, what);
  };
  const byAgent = await stack.api.get<Stats>("/api/traces/stats?period=7d&groupBy=agent");
  const count = (id: string) => groupOf((z) => z.agentId).get(id)!.length;
  const expectedOrder = [[agents.bulk, "bulk-bot"], [agents.billing, "billing-bot"], [agents.support, "support-bot"]].sort(
    (x, y) => count(y[0]!) - count(x[0]!) || (x[0]! < y[0]! ? -1 : 1),
  );
  t.deepEqual(byAgent.body.groups.map((g) => [g.agentId, g.agentName]), expectedOrder);
  for (const g of byAgent.body.groups) check(g, groupOf((x) => x.agentId).get(g.agentId as string)!, `agent ${String(g.agentName)}`);
  assertClose(t, byAgent.body.summary, expectedSummary(week), "summary beside groups");

  const byModel = await stack.api.get<Stats>("/api/traces/stats?period=7d&groupBy=model");
  t.deepEqual(new Set(byModel.body.groups.map((g) => Object.keys(g).sort().join(","))), new Set(["avgDurationMs,errorRatePercent,modelName,modelProvider,totalCostUsd,traceCount"]));
  for (const g of byModel.body.groups) check(g, groupOf((x) => `${x.provider}/${x.model}`).get(`${String(g.modelProvider)}/${String(g.modelName)}`)!, `model ${String(g.modelName)}`);
  t.is(byModel.body.groups.length, 2);

  const byEnv = await stack.api.get<Stats>("/api/traces/stats?period=7d&groupBy=environment");
  t.deepEqual(byEnv.body.groups.map((g) => g.environment), ["dev", "production", "staging"].sort((x, y) => groupOf((z) => z.environment).get(y)!.length - groupOf((z) => z.environment).get(x)!.length));
  for (const g of byEnv.body.groups) check(g, groupOf((x) => x.environment).get(g.environment as string)!, `environment ${String(g.environment)}`);
});

test("scopes: an agent-scoped key reads traces and their stats (its creator holds costs:read); an ingest key reads nothing", async (t) => {
  const mk = async (scope: string) => (await stack.api.post<{ data: { key: string } }>("/api/keys", { name: `traces ${scope}`, scope })).body.data.key;
  const agentKey = stack.api.withKey(await mk("agent"));
  t.is((await agentKey.get("/v1/traces")).status, 200);
  t.is((await agentKey.get(`/v1/traces/${tr.a1!.id}`)).status, 200);
  t.is((await agentKey.get("/api/traces")).status, 200);
  t.is((await agentKey.get(`/api/traces/${tr.a1!.id}`)).status, 200);
  t.is((await agentKey.get("/api/traces/stats")).status, 200);
  const ingestKey = stack.api.withKey(await mk("ingest"));
  for (const p of ["/v1/traces", "/api/traces", "/api/traces/stats", `/api/traces/${tr.a1!.id}`]) t.is((await ingestKey.get(p)).status, 403, p);
});
