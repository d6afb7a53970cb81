// Aggregates over traces: the statistics of GET /api/traces/stats (summary with exact percentiles
// and optional groups), the per-agent metrics of agent reads, and per-agent spend of one UTC day.
// Every query reads FROM … FINAL, so a trace inserted twice counts once.

import { ceilingMicroRates } from "@agentgov/data-plane/budget-charge";
import { num, str } from "./json-values.js";
import { BUCKET_SQL, COST_UNITS_PER_USD, costUnits, histogramQuantile, latencyNs, NS_PER_MS, splitByRollup } from "./rollup.js";
import { type SqlFragment, sql, sqlInList, sqlJoin, wellFormed } from "./sql-literal.js";
import { checkString, rangeConditions, type StoreContext, tenantCondition } from "./store-context.js";
import { DAY_MS, dateMs, MAX_MS, MIN_MS, utcDayStartMs } from "./time.js";
import type { AgentMetrics, GroupMeasures, StatsQuery, TraceStats, TraceStatsGroup, TraceStatsSummary } from "./types.js";

/** Statuses that group B counts as errors. */
const ERROR_OR_BLOCKED = sql`status IN ('error', 'blocked')`;

/** Exact integer sums (rollup.ts): cost in 1e-10 USD, latency in ns — over the traces and over the rollup. */
const COST_SUM = sql`sum(${costUnits("cost_usd")})`;
const LATENCY_SUM = sql`sum(${latencyNs("latency_ms")})`;
const ROLLUP_COST_SUM = sql`sum(${costUnits("cost_sum")})`;
const ROLLUP_LATENCY_SUM = sql`sum(${latencyNs("latency_ms_sum")})`;
const usd = (units: unknown): number => num(units) / COST_UNITS_PER_USD;
const ms = (ns: unknown): number => num(ns) / NS_PER_MS;

const percent = (part: number, total: number): number => (total === 0 ? 0 : (part / total) * 100);
const mean = (sum: number, n: number): number => (n === 0 ? 0 : sum / n);

function quantile(values: unknown, i: number, total: number): number {
  if (total === 0 || !Array.isArray(values)) return 0;
  return num(values[i]);
}

function measures(r: Record<string, unknown>): GroupMeasures {
  const n = num(r["n"]);
  return {
    traceCount: n,
    totalCostUsd: usd(r["cost"]),
    errorRatePercent: percent(num(r["errors"]), n),
    avgDurationMs: mean(ms(r["latency_sum"]), n),
  };
}

const GROUPS = {
  agent: { select: sql`agent_id AS k1, argMax(agent_name, timestamp_ms) AS k2`, by: sql`agent_id` },
  model: { select: sql`provider AS k1, model AS k2`, by: sql`provider, model` },
  environment: { select: sql`environment AS k1`, by: sql`environment` },
} as const;

/** The same groups over the hourly rollup (the agent's name: the one of its latest trace). */
const ROLLUP_GROUPS = {
  agent: { select: sql`agent_id AS k1, argMax(latest_agent_name, latest_ms) AS k2, max(latest_ms) AS last_ms`, by: sql`agent_id` },
  model: { select: sql`provider AS k1, model AS k2`, by: sql`provider, model` },
  environment: { select: sql`environment AS k1`, by: sql`environment` },
} as const;

export async function traceStats(ctx: StoreContext, tenantId: string, q: StatsQuery): Promise<TraceStats> {
  const fromMs = dateMs(q.since, "since");
  const toMs = dateMs(q.until, "until");
  const filters = [tenantCondition(tenantId)];
  if (q.agentId !== undefined) filters.push(sql`agent_id = ${checkString(q.agentId, "agentId")}`);
  const split = await splitByRollup(ctx, tenantId, { fromMs, toMs }, filters, filters);
  return split.rollupWhere === null
    ? rawStats(ctx, split.rawWhere, q.groupBy)
    : mixedStats(ctx, split.rawWhere, split.rollupWhere, q.groupBy);
}

function summaryOf(r: Record<string, unknown>, q: (level: number) => number): TraceStatsSummary {
  const m = measures(r);
  return {
    totalTraces: m.traceCount,
    successCount: num(r["success"]),
    errorCount: num(r["errors"]),
    errorRatePercent: m.errorRatePercent,
    totalInputTokens: num(r["input_tokens"]),
    totalOutputTokens: num(r["output_tokens"]),
    totalCostUsd: m.totalCostUsd,
    avgDurationMs: m.avgDurationMs,
    p50DurationMs: q(0.5),
    p95DurationMs: q(0.95),
    p99DurationMs: q(0.99),
  };
}

function groupOf(groupBy: StatsQuery["groupBy"], g: Record<string, unknown>): TraceStatsGroup {
  if (groupBy === "agent") return { agentId: str(g["k1"]), agentName: str(g["k2"]), ...measures(g) };
  if (groupBy === "model") return { modelProvider: str(g["k1"]), modelName: str(g["k2"]), ...measures(g) };
  return { environment: str(g["k1"]), ...measures(g) };
}

/** Everything from `traces` FINAL, with exact percentiles. */
async function rawStats(ctx: StoreContext, where: SqlFragment, groupBy: StatsQuery["groupBy"]): Promise<TraceStats> {
  const aggregates = sql`count() AS n, ${COST_SUM} AS cost, countIf(${ERROR_OR_BLOCKED}) AS errors, ${LATENCY_SUM} AS latency_sum,
    countIf(status = 'success') AS success, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens`;
  const summaryQuery = ctx.engine.query(
    sql`SELECT ${aggregates}, quantilesExact(0.5, 0.95, 0.99)(latency_ms) AS q
    FROM ${ctx.table} FINAL WHERE ${where}`,
  );
  const group = groupBy ? GROUPS[groupBy] : undefined;
  const groupQuery = group
    ? ctx.engine.query(
        sql`SELECT ${group.select}, ${aggregates} FROM ${ctx.table} FINAL WHERE ${where}
          GROUP BY ${group.by} ORDER BY n DESC, k1 ASC${groupBy === "model" ? sql`, k2 ASC` : sql``}`,
      )
    : Promise.resolve([]);
  const [summaryRows, groupRows] = await Promise.all([summaryQuery, groupQuery]);
  const q = summaryRows[0] ?? {};
  // With groups, the summary's sums are the groups' (read together), so that they add up even while traces arrive.
  const r = groupBy ? sumRows(groupRows) : q;
  const n = num(q["n"]);
  const levels = [0.5, 0.95, 0.99];
  return {
    summary: summaryOf(r, (level) => quantile(q["q"], levels.indexOf(level), n)),
    groups: groupRows.map((g) => groupOf(groupBy, g)),
  };
}

const SUM_KEYS = ["n", "cost", "errors", "latency_sum", "success", "input_tokens", "output_tokens"] as const;

function sumRows(rows: readonly Record<string, unknown>[]): Record<string, number> {
  const total: Record<string, number> = {};
  for (const k of SUM_KEYS) total[k] = rows.reduce((a, r) => a + num(r[k]), 0);
  return total;
}

/**
 * Whole clean hours from the rollups, the rest (edges, the open hour, hours written to since their
 * rollup) from `traces` FINAL; percentiles from the merged latency histograms (within 0.5 %).
 */
async function mixedStats(
  ctx: StoreContext,
  rawWhere: SqlFragment,
  rollupWhere: SqlFragment,
  groupBy: StatsQuery["groupBy"],
): Promise<TraceStats> {
  const { hourly, latency } = ctx.rollups;
  const rawSums = sql`count() AS n, ${COST_SUM} AS cost, countIf(${ERROR_OR_BLOCKED}) AS errors, ${LATENCY_SUM} AS latency_sum,
    countIf(status = 'success') AS success, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens`;
  const rollupSums = sql`sum(trace_count) AS n, ${ROLLUP_COST_SUM} AS cost, sum(error_count) AS errors, ${ROLLUP_LATENCY_SUM} AS latency_sum,
    sum(success_count) AS success, sum(input_token_sum) AS input_tokens, sum(output_token_sum) AS output_tokens`;
  const queries: Promise<Record<string, unknown>[]>[] = [
    ctx.engine.query(sql`SELECT ${rawSums} FROM ${ctx.table} FINAL WHERE ${rawWhere}`),
    ctx.engine.query(sql`SELECT ${rollupSums} FROM ${hourly} FINAL WHERE ${rollupWhere}`),
    ctx.engine.query(sql`SELECT ${BUCKET_SQL} AS b, count() AS c FROM ${ctx.table} FINAL WHERE ${rawWhere} GROUP BY b`),
    ctx.engine.query(
      sql`SELECT b, sum(k) AS c FROM ${latency} FINAL ARRAY JOIN buckets AS b, counts AS k WHERE ${rollupWhere} GROUP BY b`,
    ),
  ];
  if (groupBy) {
    const g = GROUPS[groupBy];
    const rg = ROLLUP_GROUPS[groupBy];
    const last = groupBy === "agent" ? sql`, max(timestamp_ms) AS last_ms` : sql``;
    queries.push(
      ctx.engine.query(sql`SELECT ${g.select}${last}, ${rawSums} FROM ${ctx.table} FINAL WHERE ${rawWhere} GROUP BY ${g.by}`),
      ctx.engine.query(sql`SELECT ${rg.select}, ${rollupSums} FROM ${hourly} FINAL WHERE ${rollupWhere} GROUP BY ${rg.by}`),
    );
  }
  const [rawSum, rollupSum, rawHist, rollupHist, rawGroups = [], rollupGroups = []] = await Promise.all(queries);

  let total: Record<string, number> = {};
  for (const k of SUM_KEYS) total[k] = num(rawSum?.[0]?.[k]) + num(rollupSum?.[0]?.[k]);
  const histogram = new Map<number, number>();
  for (const r of [...(rawHist ?? []), ...(rollupHist ?? [])]) {
    const b = num(r["b"]);
    histogram.set(b, (histogram.get(b) ?? 0) + num(r["c"]));
  }
  const sorted = [...histogram.entries()].sort((x, y) => x[0] - y[0]);
  // Ranks within the histogram itself (its queries are separate reads from the sums').
  const histogramTotal = sorted.reduce((a, [, c]) => a + c, 0);

  // Groups: sum the two parts per key; an agent's name is the one of its latest trace.
  const merged = new Map<string, Record<string, unknown>>();
  for (const r of [...rawGroups, ...rollupGroups]) {
    const key = groupBy === "model" ? `${str(r["k1"])}\u0000${str(r["k2"])}` : str(r["k1"]);
    const cur = merged.get(key);
    if (!cur) {
      merged.set(key, { ...r });
      continue;
    }
    for (const k of SUM_KEYS) cur[k] = num(cur[k]) + num(r[k]);
    if (num(r["last_ms"]) > num(cur["last_ms"])) {
      cur["k2"] = r["k2"];
      cur["last_ms"] = r["last_ms"];
    }
  }
  const utf8 = (v: unknown) => Buffer.from(str(v), "utf8");
  // A key whose traces all moved to another key (stored again: the newest copy wins) has an empty rollup row.
  for (const [key, g] of merged) if (num(g["n"]) === 0) merged.delete(key);
  const groups = [...merged.values()]
    .sort((a, b) => num(b["n"]) - num(a["n"]) || Buffer.compare(utf8(a["k1"]), utf8(b["k1"])) || (groupBy === "model" ? Buffer.compare(utf8(a["k2"]), utf8(b["k2"])) : 0))
    .map((g) => groupOf(groupBy, g));
  // With groups, the summary's sums are the groups' (read together), so that they add up even while traces arrive.
  if (groupBy) total = sumRows([...merged.values()]);
  const summary = summaryOf(total, (level) => histogramQuantile(sorted, histogramTotal, level));
  return { summary, groups };
}

export async function agentMetrics(
  ctx: StoreContext,
  tenantId: string,
  agentIds: readonly string[],
  now: Date,
): Promise<Map<string, AgentMetrics>> {
  const ids = [...new Set(agentIds.map((a) => checkString(a, "agentId")))];
  const out = new Map<string, AgentMetrics>();
  if (ids.length === 0) return out;
  const nowMs = dateMs(now, "now");
  const tenantAgents = [tenantCondition(tenantId), sql`agent_id IN ${sqlInList(ids)}`];
  const recentWhere = sqlJoin([...tenantAgents, ...rangeConditions({ fromMs: nowMs - DAY_MS, toMs: nowMs })], " AND ");
  // Totals first, then the last 24 h: traces arriving meanwhile can only make the later read larger,
  // so a reader never sees more traces in total than in the last 24 h when all of them are recent.
  const totals = await allTimeTotals(ctx, tenantId, tenantAgents);
  const recentRows = await ctx.engine.query(
    sql`SELECT agent_id, count() AS n24, ${COST_SUM} AS cost24, ${LATENCY_SUM} AS latency24, countIf(status = 'error') AS errors24
    FROM ${ctx.table} FINAL WHERE ${recentWhere} GROUP BY agent_id`,
  );
  const recent = new Map(recentRows.map((r) => [str(r["agent_id"]), r]));
  const agentsSeen = new Set([...totals.keys(), ...recent.keys()]);
  const rows: Record<string, unknown>[] = [...agentsSeen].map((agentId) => ({
    ...recent.get(agentId),
    agent_id: agentId,
    total: totals.get(agentId)?.n ?? 0,
    total_cost: totals.get(agentId)?.cost ?? 0,
  }));
  // Results are keyed by the ids as the caller wrote them (stored ids are well-formed UTF-16).
  const callerIds = new Map<string, string[]>();
  for (const id of ids) {
    out.set(id, { requests24h: 0, avgLatencyMs: 0, cost24h: 0, errorRate: 0, totalRequests: 0, totalCost: 0 });
    const stored = wellFormed(id);
    callerIds.set(stored, [...(callerIds.get(stored) ?? []), id]);
  }
  for (const r of rows) {
    const n24 = num(r["n24"]);
    const metrics: AgentMetrics = {
      requests24h: n24,
      avgLatencyMs: mean(ms(r["latency24"]), n24),
      cost24h: usd(r["cost24"]),
      errorRate: n24 === 0 ? 0 : num(r["errors24"]) / n24,
      // Traces stored between the two reads are in the later one only: the totals are at least the 24 h figures.
      totalRequests: Math.max(num(r["total"]), n24),
      totalCost: Math.max(usd(r["total_cost"]), usd(r["cost24"])),
    };
    for (const id of callerIds.get(str(r["agent_id"])) ?? []) out.set(id, metrics);
  }
  return out;
}

/** Traces and cost (1e-10 USD units) of each agent over all time: clean hours from the rollup, the rest from the traces. */
async function allTimeTotals(ctx: StoreContext, tenantId: string, filters: SqlFragment[]): Promise<Map<string, { n: number; cost: number }>> {
  const { rawWhere, rollupWhere } = await splitByRollup(ctx, tenantId, { fromMs: MIN_MS, toMs: MAX_MS }, filters, filters);
  const [raw, rolled] = await Promise.all([
    ctx.engine.query(sql`SELECT agent_id, count() AS n, ${COST_SUM} AS cost FROM ${ctx.table} FINAL WHERE ${rawWhere} GROUP BY agent_id`),
    rollupWhere === null
      ? Promise.resolve([])
      : ctx.engine.query(
          sql`SELECT agent_id, sum(trace_count) AS n, ${ROLLUP_COST_SUM} AS cost FROM ${ctx.rollups.hourly} FINAL WHERE ${rollupWhere} GROUP BY agent_id`,
        ),
  ]);
  const out = new Map<string, { n: number; cost: number }>();
  for (const r of [...raw, ...rolled]) {
    const id = str(r["agent_id"]);
    const cur = out.get(id) ?? { n: 0, cost: 0 };
    cur.n += num(r["n"]);
    cur.cost += num(r["cost"]);
    out.set(id, cur);
  }
  return out;
}

/**
 * A trace's charge to its agent's budget in 1e-10 USD units (data-plane pricing/budget-charge.ts): its
 * cost, or for a model the price table does not know (cost 0, price_missing) its tokens at the
 * provider's ceiling rates, rounded half-up as the sidecar's computeCost rounds picodollars.
 */
const CHARGE_UNITS = (() => {
  const rates = ceilingMicroRates();
  const rate = (pick: "input" | "output") => {
    const arms = rates.flatMap((r) => [sql`provider = ${r.provider}`, sql`${r[pick]}`]);
    return sql`multiIf(${sqlJoin(arms, ", ")}, 0)`;
  };
  const ceiling = sql`intDiv(toInt64(input_tokens) * ${rate("input")} + toInt64(output_tokens) * ${rate("output")} + 50, 100)`;
  return sql`if(price_missing = 1, ${ceiling}, ${costUnits("cost_usd")})`;
})();

export async function dailySpend(ctx: StoreContext, tenantId: string, dayUtc: string): Promise<Map<string, number>> {
  const start = utcDayStartMs(dayUtc);
  const where = sqlJoin([tenantCondition(tenantId), ...rangeConditions({ fromMs: start, toMs: start + DAY_MS - 1 })], " AND ");
  const rows = await ctx.engine.query(
    sql`SELECT agent_id, sum(${CHARGE_UNITS}) AS cost FROM ${ctx.table} FINAL WHERE ${where} GROUP BY agent_id`,
  );
  return new Map(rows.map((r) => [str(r["agent_id"]), usd(r["cost"])]));
}
