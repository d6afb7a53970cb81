// GET /api/traces/stats against figures computed here from the raw rows: 6,000 traces with a
// heavy-tailed latency distribution (with ties), spread over 40 days across every period boundary,
// several agents, models and environments. For each period, with and without agentId: counts exact,
// sums and means to floating-point precision, p50/p95/p99 within 1% of the exact percentile (any
// standard definition: nearest rank, lower/upper, linear interpolation); per-group measures for every
// groupBy. Traces are kept two minutes away from the period boundaries so that the few ms between
// this computation and the server's "now" cannot move one across.
import test from "ava";
import type { Trace } from "@agentgov/proto";
import { startStack, type Stack } from "../harness/stack.js";
import { DAY, HOUR, MINUTE, makeTrace } from "./traces-helpers.js";

let stack: Stack;
const NOW = Date.now();
const PERIODS = { "1h": HOUR, "24h": DAY, "7d": 7 * DAY, "30d": 30 * DAY } as const;
type Period = keyof typeof PERIODS;
const AGENTS = ["agt_01JD3Z6Q4W8X9Y0Z1A2B3C4D50", "agt_01JD3Z6Q4W8X9Y0Z1A2B3C4D51", "agt_01JD3Z6Q4W8X9Y0Z1A2B3C4D52", "agt_01JD3Z6Q4W8X9Y0Z1A2B3C4D53"];
const MODELS = [["openai", "gpt-4o-mini"], ["anthropic", "claude-3-5-haiku"], ["openai", "gpt-4o"], ["mistral", "mistral-large"]] as const;
const ENVS = ["production", "staging", "dev"];
let traces: Trace[] = [];

function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An age (ms before NOW) at least two minutes away from every period boundary. */
function age(r: () => number): number {
  for (;;) {
    const u = r();
    const a = u < 0.2 ? u * 5 * HOUR : u < 0.5 ? HOUR + (u - 0.2) * 80 * HOUR : u < 0.8 ? DAY + (u - 0.5) * 24 * DAY : 7 * DAY + (u - 0.8) * 165 * DAY;
    if (Object.values(PERIODS).every((p) => Math.abs(a - p) > 2 * MINUTE) && a > 2 * MINUTE) return Math.floor(a);
  }
}

test.before(async () => {
  stack = await startStack();
  const r = rng(42);
  traces = Array.from({ length: 6000 }, (_, i) => {
    const m = MODELS[Math.floor(r() * MODELS.length)]!;
    const u = r();
    // log-normal-ish body, a heavy tail, and ties (a quarter of the values are rounded to 10 ms)
    let latency = Math.exp(5 + 1.2 * Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r()));
    if (u < 0.02) latency *= 40;
    latency = u > 0.75 ? Math.round(latency / 10) * 10 : Math.round(latency * 1000) / 1000;
    const s = r();
    return makeTrace({
      tenantId: stack.cp.tenantId,
      agentId: AGENTS[i % AGENTS.length]!,
      environment: ENVS[Math.floor(r() * ENVS.length)]!,
      provider: m[0],
      model: m[1],
      atMs: NOW - age(r),
      status: s < 0.85 ? "success" : s < 0.95 ? "error" : "blocked",
      latencyMs: latency,
      costUsd: Math.round(r() * 1e6) / 1e8,
      inputTokens: 10 + Math.floor(r() * 4000),
      outputTokens: Math.floor(r() * 1500),
    });
  });
  for (let i = 0; i < traces.length; i += 2000) await stack.cp.traces.insert(traces.slice(i, i + 2000));
});
test.after.always(async () => {
  await stack?.stop();
});

/** Candidate "exact" percentiles of sorted values under the standard definitions. */
function percentileCandidates(sorted: number[], p: number): number[] {
  const n = sorted.length;
  const at = (i: number) => sorted[Math.min(n - 1, Math.max(0, i))]!;
  const h = p * (n - 1);
  const lo = Math.floor(h);
  return [at(Math.ceil(p * n) - 1), at(lo), at(Math.ceil(h)), at(lo) + (h - lo) * (at(lo + 1) - at(lo)), at(Math.floor(p * n))];
}

const within1pct = (v: number, candidates: number[]) => candidates.some((c) => Math.abs(v - c) <= 0.01 * Math.abs(c));
const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

interface StatsBody {
  period: string;
  summary: Record<string, number>;
  groups: Record<string, unknown>[];
}

function checkSummary(t: import("ava").ExecutionContext, got: Record<string, number>, xs: Trace[], what: string) {
  const n = xs.length;
  const errors = xs.filter((x) => x.status !== "success").length;
  t.is(got.totalTraces, n, `${what} totalTraces`);
  t.is(got.successCount, n - errors, `${what} successCount`);
  t.is(got.errorCount, errors, `${what} errorCount`);
  t.true(close(got.errorRatePercent!, (errors / n) * 100), `${what} errorRatePercent`);
  t.is(got.totalInputTokens, xs.reduce((s, x) => s + x.inputTokens, 0), `${what} input tokens`);
  t.is(got.totalOutputTokens, xs.reduce((s, x) => s + x.outputTokens, 0), `${what} output tokens`);
  t.true(close(got.totalCostUsd!, xs.reduce((s, x) => s + x.costUsd, 0)), `${what} cost`);
  t.true(close(got.avgDurationMs!, xs.reduce((s, x) => s + x.latencyMs, 0) / n), `${what} avg`);
  const sorted = xs.map((x) => x.latencyMs).sort((a, b) => a - b);
  for (const [k, p] of [["p50DurationMs", 0.5], ["p95DurationMs", 0.95], ["p99DurationMs", 0.99]] as const) {
    const c = percentileCandidates(sorted, p);
    t.true(within1pct(got[k]!, c), `${what} ${k}: ${got[k]} vs exact ${c.join(" / ")}`);
  }
}

const inPeriod = (p: Period) => traces.filter((x) => Number(x.timestampMs) >= NOW - PERIODS[p]);

for (const period of Object.keys(PERIODS) as Period[]) {
  test(`stats over ${period}: summary and exact percentiles, for all agents and for one`, async (t) => {
    const xs = inPeriod(period);
    t.true(xs.length > 100, `${xs.length} traces in ${period}`);
    const all = await stack.api.get<StatsBody>(`/api/traces/stats?period=${period}`);
    t.is(all.status, 200);
    t.is(all.body.period, period);
    checkSummary(t, all.body.summary, xs, period);
    const agent = AGENTS[1]!;
    const one = await stack.api.get<StatsBody>(`/api/traces/stats?period=${period}&agentId=${agent}`);
    checkSummary(t, one.body.summary, xs.filter((x) => x.agentId === agent), `${period} ${agent}`);
  });
}

test("groups over 30d: each agent, model and environment group measured from its own rows", async (t) => {
  const xs = inPeriod("30d");
  const keys = {
    agent: (x: Trace) => x.agentId,
    model: (x: Trace) => `${x.provider}/${x.model}`,
    environment: (x: Trace) => x.environment,
  };
  const groupKey = {
    agent: (g: Record<string, unknown>) => String(g.agentId),
    model: (g: Record<string, unknown>) => `${String(g.modelProvider)}/${String(g.modelName)}`,
    environment: (g: Record<string, unknown>) => String(g.environment),
  };
  for (const by of ["agent", "model", "environment"] as const) {
    const r = await stack.api.get<StatsBody>(`/api/traces/stats?period=30d&groupBy=${by}`);
    checkSummary(t, r.body.summary, xs, `30d groupBy=${by}`);
    const expected = new Map<string, Trace[]>();
    for (const x of xs) expected.set(keys[by](x), [...(expected.get(keys[by](x)) ?? []), x]);
    t.is(r.body.groups.length, expected.size, by);
    let previous = Infinity;
    for (const g of r.body.groups) {
      const ys = expected.get(groupKey[by](g))!;
      t.truthy(ys, `${by} group ${groupKey[by](g)}`);
      const errors = ys.filter((y) => y.status !== "success").length;
      t.is(g.traceCount, ys.length);
      t.true((g.traceCount as number) <= previous, "ordered by traceCount desc");
      previous = g.traceCount as number;
      t.true(close(g.totalCostUsd as number, ys.reduce((s, y) => s + y.costUsd, 0)));
      t.true(close(g.errorRatePercent as number, (errors / ys.length) * 100));
      t.true(close(g.avgDurationMs as number, ys.reduce((s, y) => s + y.latencyMs, 0) / ys.length));
    }
  }
});
