// Aggregates over traces: the statistics of GET /api/traces/stats (summary with exact percentiles
// and optional groups), the per-agent metrics of agent reads, and per-agent spend of one UTC day.
// Every query reads FROM … FINAL, so a trace inserted twice counts once.

import { num, str } from "./json-values.js";
import { type SqlFragment, sql, sqlInList, sqlJoin, wellFormed } from "./sql-literal.js";
import { checkString, rangeConditions, type StoreContext, tenantCondition } from "./store-context.js";
import { DAY_MS, dateMs, utcDayStartMs } from "./time.js";
import type { AgentMetrics, GroupMeasures, StatsQuery, TraceStats, TraceStatsGroup, TraceStatsSummary } from "./types.js";

/** Statuses that group B counts as errors. */
const ERROR_OR_BLOCKED = sql`status IN ('error', 'blocked')`;

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
    totalCostUsd: num(r["cost"]),
    errorRatePercent: percent(num(r["errors"]), n),
    avgDurationMs: mean(num(r["latency_sum"]), n),
  };
}

const GROUPS = {
  agent: { select: sql`agent_id AS k1, argMax(agent_name, timestamp_ms) AS k2`, by: sql`agent_id` },
  model: { select: sql`provider AS k1, model AS k2`, by: sql`provider, model` },
  environment: { select: sql`environment AS k1`, by: sql`environment` },
} as const;

export async function traceStats(ctx: StoreContext, tenantId: string, q: StatsQuery): Promise<TraceStats> {
  const conditions = [
    tenantCondition(tenantId),
    ...rangeConditions({ fromMs: dateMs(q.since, "since"), toMs: dateMs(q.until, "until") }),
  ];
  if (q.agentId !== undefined) conditions.push(sql`agent_id = ${checkString(q.agentId, "agentId")}`);
  const where = sqlJoin(conditions, " AND ");
  const aggregates = sql`count() AS n, sum(cost_usd) AS cost, countIf(${ERROR_OR_BLOCKED}) AS errors, sum(latency_ms) AS latency_sum`;

  const summaryQuery = ctx.engine.query(
    sql`SELECT ${aggregates}, countIf(status = 'success') AS success,
      sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
      quantilesExact(0.5, 0.95, 0.99)(latency_ms) AS q
    FROM ${ctx.table} FINAL WHERE ${where}`,
  );
  const group = q.groupBy ? GROUPS[q.groupBy] : undefined;
  const groupQuery = group
    ? ctx.engine.query(
        sql`SELECT ${group.select}, ${aggregates} FROM ${ctx.table} FINAL WHERE ${where}
          GROUP BY ${group.by} ORDER BY n DESC, k1 ASC${q.groupBy === "model" ? sql`, k2 ASC` : sql``}`,
      )
    : Promise.resolve([]);
  const [summaryRows, groupRows] = await Promise.all([summaryQuery, groupQuery]);

  const r = summaryRows[0] ?? {};
  const m = measures(r);
  const summary: TraceStatsSummary = {
    totalTraces: m.traceCount,
    successCount: num(r["success"]),
    errorCount: num(r["errors"]),
    errorRatePercent: m.errorRatePercent,
    totalInputTokens: num(r["input_tokens"]),
    totalOutputTokens: num(r["output_tokens"]),
    totalCostUsd: m.totalCostUsd,
    avgDurationMs: m.avgDurationMs,
    p50DurationMs: quantile(r["q"], 0, m.traceCount),
    p95DurationMs: quantile(r["q"], 1, m.traceCount),
    p99DurationMs: quantile(r["q"], 2, m.traceCount),
  };
  const groups: TraceStatsGroup[] = groupRows.map((g) => {
    if (q.groupBy === "agent") return { agentId: str(g["k1"]), agentName: str(g["k2"]), ...measures(g) };
    if (q.groupBy === "model") return { modelProvider: str(g["k1"]), modelName: str(g["k2"]), ...measures(g) };
    return { environment: str(g["k1"]), ...measures(g) };
  });
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
  const recent: SqlFragment = sql`(timestamp_ms >= ${nowMs - DAY_MS} AND timestamp_ms <= ${nowMs})`;
  const rows = await ctx.engine.query(
    sql`SELECT agent_id, count() AS total, sum(cost_usd) AS total_cost,
      countIf(${recent}) AS n24, sumIf(cost_usd, ${recent}) AS cost24,
      sumIf(latency_ms, ${recent}) AS latency24, countIf(status = 'error' AND ${recent}) AS errors24
    FROM ${ctx.table} FINAL WHERE ${tenantCondition(tenantId)} AND agent_id IN ${sqlInList(ids)}
    GROUP BY agent_id`,
  );
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
      avgLatencyMs: mean(num(r["latency24"]), n24),
      cost24h: num(r["cost24"]),
      errorRate: n24 === 0 ? 0 : num(r["errors24"]) / n24,
      totalRequests: num(r["total"]),
      totalCost: num(r["total_cost"]),
    };
    for (const id of callerIds.get(str(r["agent_id"])) ?? []) out.set(id, metrics);
  }
  return out;
}

export async function dailySpend(ctx: StoreContext, tenantId: string, dayUtc: string): Promise<Map<string, number>> {
  const start = utcDayStartMs(dayUtc);
  const where = sqlJoin([tenantCondition(tenantId), ...rangeConditions({ fromMs: start, toMs: start + DAY_MS - 1 })], " AND ");
  const rows = await ctx.engine.query(
    sql`SELECT agent_id, sum(cost_usd) AS cost FROM ${ctx.table} FINAL WHERE ${where} GROUP BY agent_id`,
  );
  return new Map(rows.map((r) => [str(r["agent_id"]), num(r["cost"])]));
}
