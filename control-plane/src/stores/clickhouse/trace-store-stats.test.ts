// Tests of trace aggregates on every engine, checked against figures computed here from the raw
// rows: stats summary (counts, tokens, cost, mean and exact percentiles), groups by agent, model and
// environment, agent metrics, daily spend — and all of them unchanged by inserting every trace again.

import test from "ava";
import { create, TraceSchema, type Trace } from "@agentgov/proto";
import { budgetCharge } from "@agentgov/data-plane/budget-charge";
import { TraceStoreError } from "./errors.js";
import { str } from "./json-values.js";
import { SqlFragment, sql, sqlIdent } from "./sql-literal.js";
import {
  AGENTS,
  enginesUnderTest,
  makeTrace,
  openTestStore,
  randomTraces,
  removeChdbDataDir,
} from "./test-engines.js";
import type { AgentGroup, EnvironmentGroup, GroupMeasures, ModelGroup, TraceStatsSummary } from "./types.js";

test.after.always(() => removeChdbDataDir());

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** ClickHouse's quantileExact: the element at floor(q·n) of the sorted values. */
function exactQuantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function expectedMeasures(rows: Trace[]): GroupMeasures {
  const n = rows.length;
  const errors = rows.filter((r) => r.status === "error" || r.status === "blocked").length;
  return {
    traceCount: n,
    totalCostUsd: rows.reduce((a, r) => a + r.costUsd, 0),
    errorRatePercent: n === 0 ? 0 : (errors / n) * 100,
    avgDurationMs: n === 0 ? 0 : rows.reduce((a, r) => a + r.latencyMs, 0) / n,
  };
}

function expectedSummary(rows: Trace[]): TraceStatsSummary {
  const m = expectedMeasures(rows);
  const sorted = rows.map((r) => r.latencyMs).sort((a, b) => a - b);
  return {
    totalTraces: m.traceCount,
    successCount: rows.filter((r) => r.status === "success").length,
    errorCount: rows.filter((r) => r.status === "error" || r.status === "blocked").length,
    errorRatePercent: m.errorRatePercent,
    totalInputTokens: rows.reduce((a, r) => a + r.inputTokens, 0),
    totalOutputTokens: rows.reduce((a, r) => a + r.outputTokens, 0),
    totalCostUsd: m.totalCostUsd,
    avgDurationMs: m.avgDurationMs,
    p50DurationMs: exactQuantile(sorted, 0.5),
    p95DurationMs: exactQuantile(sorted, 0.95),
    p99DurationMs: exactQuantile(sorted, 0.99),
  };
}

const close = (a: number, b: number, rel: number): boolean => Math.abs(a - b) <= rel * Math.max(1, Math.abs(b));

function assertNear(t: { true(v: boolean, m?: string): void }, got: object, want: object, rel: number, label: string): void {
  for (const [k, v] of Object.entries(want)) {
    const g = (got as Record<string, unknown>)[k];
    if (typeof v === "number") t.true(typeof g === "number" && close(g, v, rel), `${label}.${k}: got ${String(g)}, want ${v}`);
    else t.true(g === v, `${label}.${k}: got ${String(g)}, want ${String(v)}`);
  }
}

const inRange = (from: number, to: number) => (r: Trace) => Number(r.timestampMs) >= from && Number(r.timestampMs) <= to;

for (const kind of enginesUnderTest()) {
  test(`${kind}: stats summary and groups match the raw rows, and double inserts change nothing, with and without rollups`, async (t) => {
    const ts = await openTestStore(kind, { rollupMarginMs: 0 });
    try {
      const now = Date.now();
      const data = randomTraces(3000, { tenantId: "ten", fromMs: now - 10 * DAY, toMs: now, seed: 41 });
      // A newer trace renames an agent: groups show the newest name.
      const renamed = makeTrace({ tenantId: "ten", timestampMs: BigInt(now - 1000), agentId: "agt_alpha", agentName: "Alpha v2", costUsd: 0.5, latencyMs: 42 });
      data.push(renamed);
      await ts.store.insert(data);
      await ts.store.insert(randomTraces(500, { tenantId: "other", fromMs: now - 10 * DAY, toMs: now, seed: 42 }));

      // Window edges inside hours, so that a rolled-up window also reads partial hours from the traces.
      const since = now - 7 * DAY - 1234;
      let window = data.filter(inRange(since, now));
      const q = { since: new Date(since), until: new Date(now) };

      /** Percentiles: exact from the traces alone, within 0.5 % once rollup histograms take part. */
      const assertSummary = (got: TraceStatsSummary, want: TraceStatsSummary, pctRel: number, label: string) => {
        const { p50DurationMs, p95DurationMs, p99DurationMs, ...rest } = want;
        assertNear(t, got, rest, 1e-9, label);
        assertNear(t, got, { p50DurationMs, p95DurationMs, p99DurationMs }, pctRel, `${label} percentiles`);
      };
      let pctRel = 1e-9;

      const check = async (label: string): Promise<void> => {
        const s = await ts.store.stats("ten", q);
        assertSummary(s.summary, expectedSummary(window), pctRel, `${label} summary`);
        t.deepEqual(s.groups, []);
        const sorted = window.map((r) => r.latencyMs).sort((a, b) => a - b);
        t.true(close(s.summary.p99DurationMs, exactQuantile(sorted, 0.99), 0.01));

        const byAgent = await ts.store.stats("ten", { ...q, groupBy: "agent" });
        assertSummary(byAgent.summary, expectedSummary(window), pctRel, `${label} agent summary`);
        t.is(byAgent.groups.length, AGENTS.length);
        for (const g of byAgent.groups as AgentGroup[]) {
          const rows = window.filter((r) => r.agentId === g.agentId);
          assertNear(t, g, expectedMeasures(rows), 1e-9, `${label} agent ${g.agentId}`);
          const newest = rows.reduce((a, b) => (b.timestampMs > a.timestampMs ? b : a));
          t.is(g.agentName, newest.agentName);
        }
        t.is((byAgent.groups as AgentGroup[]).find((g) => g.agentId === "agt_alpha")?.agentName, "Alpha v2");
        const counts = byAgent.groups.map((g) => g.traceCount);
        t.deepEqual(counts, [...counts].sort((a, b) => b - a), "groups ordered by traceCount desc");

        const byModel = await ts.store.stats("ten", { ...q, groupBy: "model" });
        const modelKeys = new Set(window.map((r) => `${r.provider}/${r.model}`));
        t.is(byModel.groups.length, modelKeys.size);
        for (const g of byModel.groups as ModelGroup[]) {
          const rows = window.filter((r) => r.provider === g.modelProvider && r.model === g.modelName);
          assertNear(t, g, expectedMeasures(rows), 1e-9, `${label} model ${g.modelProvider}/${g.modelName}`);
        }

        const byEnv = await ts.store.stats("ten", { ...q, groupBy: "environment", agentId: "agt_beta" });
        const beta = window.filter((r) => r.agentId === "agt_beta");
        assertSummary(byEnv.summary, expectedSummary(beta), pctRel, `${label} beta summary`);
        for (const g of byEnv.groups as EnvironmentGroup[]) {
          assertNear(t, g, expectedMeasures(beta.filter((r) => r.environment === g.environment)), 1e-9, `${label} env ${g.environment}`);
        }
        t.is(byEnv.groups.length, new Set(beta.map((r) => r.environment)).size);
      };

      await check("single");
      const metricsBefore = await ts.store.agentMetrics("ten", AGENTS.map((a) => a.id), new Date(now));
      const day = new Date(now - 2 * DAY).toISOString().slice(0, 10);
      const spendBefore = await ts.store.dailySpend("ten", day);
      const listBefore = await ts.store.listByOffset("ten", { limit: 5, offset: 0 });

      await ts.store.insert(data); // every trace again, in one batch
      await ts.store.insert(data.slice(0, 700)); // and some a third time
      await check("after double insert");
      const metricsAfter = await ts.store.agentMetrics("ten", AGENTS.map((a) => a.id), new Date(now));
      for (const [id, m] of metricsBefore) assertNear(t, metricsAfter.get(id)!, m, 1e-9, `metrics ${id}`);
      const spendAfter = await ts.store.dailySpend("ten", day);
      t.deepEqual([...spendAfter.keys()].sort(), [...spendBefore.keys()].sort());
      for (const [id, c] of spendBefore) t.true(close(spendAfter.get(id)!, c, 1e-9));
      t.is((await ts.store.listByOffset("ten", { limit: 5, offset: 0 })).total, listBefore.total);
      t.is(listBefore.total, data.length);

      // Hourly rollups: every closed hour is computed once; the figures stay those of the traces.
      // One clock reading for both calls: a second `new Date()` taken after the (slow) first refresh
      // can fall past HH:01, when the hour holding `now` closes and is (rightly) due.
      const refreshAt = new Date();
      const computed = await ts.store.refreshRollups(refreshAt);
      t.true(computed > 100, `${computed} hours rolled up`);
      t.is(await ts.store.refreshRollups(refreshAt), 0, "nothing left to compute");
      pctRel = 0.005;
      await check("rolled up");
      const metricsRolled = await ts.store.agentMetrics("ten", AGENTS.map((a) => a.id), new Date(now));
      for (const [id, m] of metricsBefore) assertNear(t, metricsRolled.get(id)!, m, 1e-9, `rolled-up metrics ${id}`);
      const listTotals = async (label: string) => {
        const all = data.filter((r) => r.tenantId === "ten");
        const filters = [
          { q: {}, rows: all },
          { q: { agentId: "agt_beta" }, rows: all.filter((r) => r.agentId === "agt_beta") },
          { q: { status: "error" as const, environment: "staging" }, rows: all.filter((r) => r.status !== "success" && r.environment === "staging") },
          { q: { status: "success" as const, startDate: new Date(since), endDate: new Date(now - DAY - 77) }, rows: all.filter((r) => r.status === "success" && inRange(since, now - DAY - 77)(r)) },
          { q: { minCostUsd: 0.01, agentId: "agt_alpha" }, rows: all.filter((r) => r.costUsd >= 0.01 && r.agentId === "agt_alpha") },
        ];
        for (const f of filters) {
          const got = await ts.store.listByOffset("ten", { limit: 1, offset: 0, ...f.q });
          t.is(got.total, f.rows.length, `${label} total ${JSON.stringify(f.q)}`);
        }
      };
      await listTotals("rolled up");

      // A late trace in a rolled-up hour and redeliveries: read from the traces until recomputed.
      const late = makeTrace({ tenantId: "ten", timestampMs: BigInt(now - 3 * DAY + 17), agentId: "agt_beta", agentName: "Beta", costUsd: 2, latencyMs: 99_999, status: "error" });
      data.push(late);
      window = data.filter(inRange(since, now));
      const rewritten = [late, ...data.slice(0, 300)];
      await ts.store.insert(rewritten);
      await check("late trace, before recompute");
      await listTotals("late trace, before recompute");
      // The refresh clock stays at `refreshAt`, so the set of closed hours is the one above.
      const closedBefore = Math.floor((refreshAt.getTime() - 60_000) / HOUR) * HOUR;
      const dirtyHours = new Set(rewritten.map((r) => Math.floor(Number(r.timestampMs) / HOUR)).filter((h) => h * HOUR < closedBefore));
      t.is(await ts.store.refreshRollups(refreshAt), dirtyHours.size, "exactly the closed hours written to again");
      await check("late trace, recomputed");
      await listTotals("late trace, recomputed");

      // The figures above did come from the rollup: a (test-only) forged newer version of one hour's
      // row shows in the totals, and only in windows that hold that whole hour.
      const hour = Math.floor((now - 2 * DAY) / HOUR) * HOUR;
      const table = `${ts.database}.traces_hourly`;
      await ts.engine.command(
        new SqlFragment(
          `INSERT INTO ${table} SELECT tenant_id, hour, agent_id, provider, model, environment, latest_agent_name, latest_ms,
            trace_count + 1000, error_count, success_count, error_only_count, cost_sum, latency_ms_sum, input_token_sum,
            output_token_sum, version + 1 FROM ${table} FINAL WHERE tenant_id = 'ten' AND hour = toDateTime(${hour / 1000}) LIMIT 1`,
        ),
      );
      t.is((await ts.store.stats("ten", q)).summary.totalTraces, window.length + 1000);
      t.is((await ts.store.listByOffset("ten", { limit: 1, offset: 0 })).total, data.length + 1000);
      const forgedAgent = str((await ts.engine.query(sql`SELECT agent_id FROM ${sqlIdent(ts.database)}.traces_hourly WHERE trace_count > 1000 LIMIT 1`))[0]?.["agent_id"]);
      const metricsForged = await ts.store.agentMetrics("ten", [forgedAgent], new Date(now));
      t.is(metricsForged.get(forgedAgent)?.totalRequests, data.filter((r) => r.agentId === forgedAgent).length + 1000);
      const inside = await ts.store.stats("ten", { since: new Date(hour + 1), until: new Date(hour + HOUR - 1) });
      t.is(inside.summary.totalTraces, data.filter(inRange(hour + 1, hour + HOUR - 1)).length, "a partial hour is read from the traces");
    } finally {
      await ts.dispose();
    }
  });

  test(`${kind}: an empty window gives zeros, never NaN`, async (t) => {
    const ts = await openTestStore(kind);
    try {
      const s = await ts.store.stats("ten", { since: new Date(0), until: new Date(), groupBy: "agent" });
      t.deepEqual(s, {
        summary: {
          totalTraces: 0,
          successCount: 0,
          errorCount: 0,
          errorRatePercent: 0,
          totalInputTokens: 0,
          totalOutputTokens: 0,
          totalCostUsd: 0,
          avgDurationMs: 0,
          p50DurationMs: 0,
          p95DurationMs: 0,
          p99DurationMs: 0,
        },
        groups: [],
      });
    } finally {
      await ts.dispose();
    }
  });

  test(`${kind}: agent metrics cover the last 24 h and all time; blocked is not an error there`, async (t) => {
    const ts = await openTestStore(kind);
    try {
      const now = Date.UTC(2026, 5, 10, 12, 0, 0);
      const mk = (agentId: string, ago: number, status: string, cost: number, latencyMs: number): Trace =>
        makeTrace({ tenantId: "ten", agentId, timestampMs: BigInt(now - ago), status, costUsd: cost, latencyMs });
      const traces = [
        mk("agt_a", 0, "success", 1, 100), // exactly now: inside
        mk("agt_a", DAY, "error", 2, 300), // exactly 24 h ago: inside
        mk("agt_a", HOUR, "blocked", 0.5, 50),
        mk("agt_a", HOUR * 2, "success", 0.25, 150),
        mk("agt_a", DAY + 1, "error", 10, 1000), // just outside 24 h
        mk("agt_a", 20 * DAY, "success", 100, 5),
        mk("agt_a", -1, "success", 7, 7), // after now: not in the 24 h window, counted in totals
        mk("agt_b", 3 * DAY, "error", 4, 40),
      ];
      await ts.store.insert(traces);
      await ts.store.insert(traces);
      await ts.store.insert([makeTrace({ tenantId: "other", agentId: "agt_a", timestampMs: BigInt(now), costUsd: 1000 })]);
      const m = await ts.store.agentMetrics("ten", ["agt_a", "agt_b", "agt_none", "agt_a"], new Date(now));
      t.deepEqual([...m.keys()].sort(), ["agt_a", "agt_b", "agt_none"]);
      const a = m.get("agt_a")!;
      t.is(a.requests24h, 4);
      t.true(close(a.cost24h, 3.75, 1e-12));
      t.true(close(a.avgLatencyMs, (100 + 300 + 50 + 150) / 4, 1e-12));
      t.true(close(a.errorRate, 1 / 4, 1e-12), "blocked is not an error; fraction, not percent");
      t.is(a.totalRequests, 7);
      t.true(close(a.totalCost, 1 + 2 + 0.5 + 0.25 + 10 + 100 + 7, 1e-12));
      t.deepEqual(m.get("agt_b"), { requests24h: 0, avgLatencyMs: 0, cost24h: 0, errorRate: 0, totalRequests: 1, totalCost: 4 });
      t.deepEqual(m.get("agt_none"), { requests24h: 0, avgLatencyMs: 0, cost24h: 0, errorRate: 0, totalRequests: 0, totalCost: 0 });
      t.is((await ts.store.agentMetrics("ten", [], new Date(now))).size, 0);
    } finally {
      await ts.dispose();
    }
  });

  test(`${kind}: daily spend sums each agent's cost over one UTC day, bounds included`, async (t) => {
    const ts = await openTestStore(kind);
    try {
      const day = Date.UTC(2026, 6, 4);
      const mk = (agentId: string, ms: number, costUsd: number): Trace =>
        create(TraceSchema, { ...makeTrace({ tenantId: "ten", agentId, timestampMs: BigInt(ms) }), costUsd });
      const traces = [
        mk("agt_a", day, 1.5),
        mk("agt_a", day + DAY - 1, 2.25),
        mk("agt_a", day - 1, 100),
        mk("agt_a", day + DAY, 100),
        mk("agt_b", day + 12 * HOUR, 0.125),
      ];
      await ts.store.insert(traces);
      await ts.store.insert(traces.slice(0, 2));
      // Models the price table does not know (cost 0, price_missing): charged at the provider's ceiling,
      // exactly as the sidecar charged them (budgetCharge), and counted once when inserted twice.
      const unpriced = (agentId: string, provider: string, inputTokens: number, outputTokens: number): Trace =>
        create(TraceSchema, { ...mk(agentId, day + HOUR, 0), provider, priceMissing: true, inputTokens, outputTokens });
      const extra = [unpriced("agt_c", "anthropic", 123_457, 7_891), unpriced("agt_c", "google", 1, 0), unpriced("agt_b", "cohere", 0, 0)];
      await ts.store.insert(extra);
      await ts.store.insert(extra);
      const charged = (x: Trace) => budgetCharge(x);
      const spend = await ts.store.dailySpend("ten", "2026-07-04");
      t.deepEqual(Object.fromEntries(spend), { agt_a: 3.75, agt_b: 0.125, agt_c: Math.round((charged(extra[0]!) + charged(extra[1]!)) * 1e10) / 1e10 });
      t.true((spend.get("agt_c") ?? 0) > 0);
      t.deepEqual(Object.fromEntries(await ts.store.dailySpend("ten", "2026-07-06")), {});
      t.deepEqual(Object.fromEntries(await ts.store.dailySpend("other", "2026-07-04")), {});
      for (const bad of ["", "2026-7-4", "2026-02-30", "2026-07-04T00:00:00Z", "'; --"]) {
        const e = await t.throwsAsync(() => ts.store.dailySpend("ten", bad), { instanceOf: TraceStoreError });
        t.is(e?.code, "invalid_argument");
      }
    } finally {
      await ts.dispose();
    }
  });
}

for (const kind of enginesUnderTest()) {
  test(`${kind}: costs and durations are summed exactly: the same on every read and engine, groups add up to the summary`, async (t) => {
    const ts = await openTestStore(kind, { rollupMarginMs: 0 });
    try {
      const now = Date.now();
      const data = randomTraces(6000, { tenantId: "ten", fromMs: now - 5 * DAY, toMs: now - 2 * HOUR, seed: 7 });
      data.push(makeTrace({ tenantId: "ten", timestampMs: BigInt(now - 3 * HOUR), agentId: "agt_alpha", costUsd: 0.1 + 0.2, latencyMs: 0.1 + 0.2 }));
      // Several parts, so that the engine may read them in any order.
      for (let i = 0; i < data.length; i += 1000) await ts.store.insert(data.slice(i, i + 1000));
      // The exact decimal figures, in the store's units (1e-10 USD, ns).
      const units = (xs: Trace[], f: (r: Trace) => number, per: number) => xs.reduce((a, r) => a + Math.round(f(r) * per), 0);
      const wantCost = units(data, (r) => r.costUsd, 1e10) / 1e10;
      const wantAvg = units(data, (r) => r.latencyMs, 1e6) / 1e6 / data.length;
      const q = { since: new Date(now - 6 * DAY), until: new Date(now) };
      const check = async (label: string) => {
        for (let round = 0; round < 3; round++) {
          const s = await ts.store.stats("ten", q);
          t.is(s.summary.totalCostUsd, wantCost, `${label} total cost`);
          t.is(s.summary.avgDurationMs, wantAvg, `${label} average duration`);
          for (const groupBy of ["agent", "model", "environment"] as const) {
            const g = await ts.store.stats("ten", { ...q, groupBy });
            t.is(g.summary.totalCostUsd, wantCost, `${label} ${groupBy} total cost`);
            t.is(g.summary.totalTraces, g.groups.reduce((a, x) => a + x.traceCount, 0));
            const groupUnits = g.groups.reduce((a, x) => a + Math.round(x.totalCostUsd * 1e10), 0);
            t.is(groupUnits / 1e10, wantCost, `${label} ${groupBy} groups add up to the total`);
          }
        }
        const m = await ts.store.agentMetrics("ten", ["agt_alpha"], new Date(now));
        t.is(m.get("agt_alpha")!.totalCost, units(data.filter((r) => r.agentId === "agt_alpha"), (r) => r.costUsd, 1e10) / 1e10, `${label} agent total cost`);
      };
      await check("traces");
      await ts.store.refreshRollups(new Date());
      await check("rolled up");
    } finally {
      await ts.dispose();
    }
  });
}

for (const kind of enginesUnderTest()) {
  test(`${kind}: a trace stored again under another agent, model or environment counts once in rolled-up stats, totals and agent metrics`, async (t) => {
    const ts = await openTestStore(kind, { rollupMarginMs: 0 });
    try {
      const hourStart = Math.floor(Date.now() / HOUR) * HOUR - 10 * HOUR;
      const first = makeTrace({ tenantId: "ten", timestampMs: BigInt(hourStart + 1000), agentId: "agt_old", environment: "old", model: "m-old", costUsd: 2, latencyMs: 10 });
      const other = makeTrace({ tenantId: "ten", timestampMs: BigInt(hourStart + HOUR + 1000), costUsd: 1, latencyMs: 30 });
      await ts.store.insert([first, other]);
      await ts.store.refreshRollups(new Date());
      // The same trace (tenant, time, id) again, newest copy under other keys; its hour is computed again.
      const again = create(TraceSchema, { ...first, agentId: "agt_new", environment: "new", model: "m-new", costUsd: 3 });
      await ts.store.insert([again]);
      t.true((await ts.store.refreshRollups(new Date())) >= 1);

      const q = { since: new Date(hourStart), until: new Date(hourStart + 5 * HOUR) };
      for (const groupBy of [undefined, "agent", "model", "environment"] as const) {
        const s = await ts.store.stats("ten", { ...q, groupBy });
        t.is(s.summary.totalTraces, 2, `${groupBy ?? "summary"} count`);
        t.is(s.summary.totalCostUsd, 4, `${groupBy ?? "summary"} cost`);
        if (groupBy) t.is(s.groups.reduce((a, g) => a + g.traceCount, 0), 2, `${groupBy} groups`);
      }
      const byEnv = await ts.store.stats("ten", { ...q, groupBy: "environment" });
      t.deepEqual((byEnv.groups as EnvironmentGroup[]).map((g) => g.environment).sort(), ["new", "production"]);
      t.is((await ts.store.listByOffset("ten", { limit: 10, offset: 0, startDate: q.since, endDate: q.until })).total, 2);
      t.is((await ts.store.listByOffset("ten", { limit: 10, offset: 0, agentId: "agt_old", startDate: q.since, endDate: q.until })).total, 0);
      const m = await ts.store.agentMetrics("ten", ["agt_old", "agt_new"], new Date());
      t.is(m.get("agt_old")!.totalRequests, 0);
      t.is(m.get("agt_new")!.totalRequests, 1);
      t.is(m.get("agt_new")!.totalCost, 3);
    } finally {
      await ts.dispose();
    }
  });
}
