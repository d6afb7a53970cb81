// Hourly rollups of `traces`, so that statistics over long windows read thousands of pre-aggregated
// rows instead of millions of traces, on both engines (plain ReplacingMergeTree tables and INSERT …
// SELECT: no materialized views, which would count a redelivered trace twice).
//
// - `traces_hourly`: per tenant, hour, agent, provider, model and environment: counts (all, errors
//   incl. blocked, success, error only), cost, latency and token sums, the agent's latest name.
//   (Column names differ from the aliases queries give their sums: ClickHouse resolves an alias
//   before a column of the same name, which would nest aggregates.)
// - `traces_hourly_latency`: per tenant, hour and agent: a latency histogram with buckets 1 % wide
//   (bucket b holds [1.01^b, 1.01^(b+1)) ms), from which percentiles are read within 0.5 % of exact.
// - `traces_hour_marks`: when an hour was last written to (`dirty`, after each insert) and when its
//   rollup was last computed (`clean`, the time the computation started reading).
//
// An hour's rollup is used only when it was computed after the hour's last insert (with MARK_MARGIN_MS
// for clock skew between control-plane replicas); everything else — the open hour, hours written to
// since their rollup, and the partial hours at a query's edges — is read from `traces` FINAL. So a
// statistic is always over the deduplicated traces, however late a trace arrives. refreshRollups
// recomputes closed hours whose rollup is missing or stale; the control plane runs it periodically.

import { num, str } from "./json-values.js";
import { SqlFragment, sql, sqlJoin } from "./sql-literal.js";
import { rangeConditions, type StoreContext } from "./store-context.js";
import { clampMs } from "./time.js";

export const HOURLY_TABLE = "traces_hourly";
export const HOURLY_LATENCY_TABLE = "traces_hourly_latency";
export const MARKS_TABLE = "traces_hour_marks";
export const ROLLUP_TABLES = [HOURLY_TABLE, HOURLY_LATENCY_TABLE, MARKS_TABLE] as const;

export const HOUR_MS = 3_600_000;
/** An hour is rolled up once it ended this long ago (traces of it may still be in flight before). */
export const CLOSE_GRACE_MS = 60_000;
/** A rollup counts as current only if computed this long after the hour's last insert (replica clock skew). */
export const MARK_MARGIN_MS = 10_000;
/** Hours recomputed per refreshRollups call, oldest first. */
export const REFRESH_BATCH_HOURS = 500;
/** Windows with fewer whole clean hours than this are read from `traces` alone (exact percentiles). */
export const MIN_ROLLUP_HOURS = 2;

const DIRTY = 1;
const CLEAN = 2;

/**
 * Money and durations are summed as integers — costs in units of 1e-10 USD, latencies in ns — so that a
 * sum is exact: it does not depend on the order the engine reads rows in (Float64 sums changed in the
 * last digits from one read to the next, and between engines), groups add up to the total, and the
 * rollup's sums combine with the traces' without rounding. Int64 holds sums up to $922M and 292 years.
 */
export const COST_UNITS_PER_USD = 10_000_000_000;
export const NS_PER_MS = 1_000_000;
/** A Float64 column (or expression) in USD as Int64 units of 1e-10 USD. */
export function costUnits(column: string): SqlFragment {
  return new SqlFragment(`toInt64(round(${column} * ${COST_UNITS_PER_USD}))`);
}
/** A Float64 column (or expression) in ms as Int64 ns. */
export function latencyNs(column: string): SqlFragment {
  return new SqlFragment(`toInt64(round(${column} * ${NS_PER_MS}))`);
}

/** Latency bucket of a row, in SQL: floor(log_1.01(latency_ms)); latencies ≤ 0 get ZERO_BUCKET. */
export const ZERO_BUCKET = -2147483648;
export const BUCKET_SQL = new SqlFragment(
  `if(latency_ms > 0, toInt32(floor(log(latency_ms) / log(1.01))), toInt32(${ZERO_BUCKET}))`,
);
/** The value reported for a bucket: its geometric middle (within 0.5 % of anything in it). */
export function bucketValue(bucket: number): number {
  return bucket === ZERO_BUCKET ? 0 : Math.pow(1.01, bucket + 0.5);
}

export function rollupTableStatements(db: SqlFragment, caps: { lowCardinality: boolean }): SqlFragment[] {
  const lc = (t: string) => (caps.lowCardinality ? `LowCardinality(${t})` : t);
  return [
    new SqlFragment(
      `CREATE TABLE IF NOT EXISTS ${db.text}.${HOURLY_TABLE} (
  tenant_id String, hour DateTime('UTC'), agent_id ${lc("String")}, provider ${lc("String")}, model ${lc("String")},
  environment ${lc("String")}, latest_agent_name String, latest_ms Int64,
  trace_count UInt64, error_count UInt64, success_count UInt64, error_only_count UInt64,
  cost_sum Float64, latency_ms_sum Float64, input_token_sum UInt64, output_token_sum UInt64, version UInt64
)
ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(hour)
ORDER BY (tenant_id, hour, agent_id, provider, model, environment)`,
    ),
    new SqlFragment(
      `CREATE TABLE IF NOT EXISTS ${db.text}.${HOURLY_LATENCY_TABLE} (
  tenant_id String, hour DateTime('UTC'), agent_id ${lc("String")},
  buckets Array(Int32), counts Array(UInt64), version UInt64
)
ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(hour)
ORDER BY (tenant_id, hour, agent_id)`,
    ),
    new SqlFragment(
      `CREATE TABLE IF NOT EXISTS ${db.text}.${MARKS_TABLE} (
  tenant_id String, hour DateTime('UTC'), kind UInt8, at_ms Int64
)
ENGINE = ReplacingMergeTree(at_ms)
PARTITION BY toYYYYMM(hour)
ORDER BY (tenant_id, hour, kind)`,
    ),
    // Hours written before the rollups existed are dirty: the first refresh computes them.
    new SqlFragment(
      `INSERT INTO ${db.text}.${MARKS_TABLE} (tenant_id, hour, kind, at_ms)
SELECT tenant_id, toStartOfHour(ts), ${DIRTY}, toInt64(toUnixTimestamp(now())) * 1000 FROM ${db.text}.traces
GROUP BY tenant_id, toStartOfHour(ts)`,
    ),
  ];
}

/** Rollup tables of a store (`<db>.<name>`) and its clock-skew margin. */
export interface RollupTables {
  hourly: SqlFragment;
  latency: SqlFragment;
  marks: SqlFragment;
  marginMs: number;
}

export function rollupTables(db: SqlFragment, marginMs = MARK_MARGIN_MS): RollupTables {
  return {
    hourly: new SqlFragment(`${db.text}.${HOURLY_TABLE}`),
    latency: new SqlFragment(`${db.text}.${HOURLY_LATENCY_TABLE}`),
    marks: new SqlFragment(`${db.text}.${MARKS_TABLE}`),
    marginMs,
  };
}

const hourStart = (ms: number): number => Math.floor(ms / HOUR_MS) * HOUR_MS;
const seconds = (ms: number): number => Math.floor(ms / 1000);

/** Records that these (tenant, hour-start ms) were just written to. Called after every insert. */
export async function markDirty(ctx: StoreContext, hours: ReadonlyMap<string, ReadonlySet<number>>): Promise<void> {
  const at = Date.now();
  const values: SqlFragment[] = [];
  for (const [tenantId, set] of hours) {
    for (const h of set) values.push(sql`(${tenantId}, toDateTime(${seconds(h)}), ${DIRTY}, ${at})`);
  }
  if (values.length === 0) return;
  await ctx.engine.command(sql`INSERT INTO ${ctx.rollups.marks} (tenant_id, hour, kind, at_ms) VALUES ${sqlJoin(values, ", ")}`);
}

/**
 * Recomputes the rollups of closed hours that were written to since their last computation (at most
 * REFRESH_BATCH_HOURS, oldest first); returns how many hours were computed.
 */
export async function refreshRollups(ctx: StoreContext, now: Date): Promise<number> {
  const closedBefore = hourStart(now.getTime() - CLOSE_GRACE_MS); // hours starting before this have ended
  const stale = await ctx.engine.query(
    sql`SELECT tenant_id, toUInt32(hour) AS h FROM ${ctx.rollups.marks}
      WHERE hour < toDateTime(${seconds(closedBefore)})
      GROUP BY tenant_id, hour
      HAVING maxIf(at_ms, kind = ${DIRTY}) + ${ctx.rollups.marginMs} >= maxIf(at_ms, kind = ${CLEAN})
      ORDER BY hour LIMIT ${REFRESH_BATCH_HOURS}`,
  );
  for (const r of stale) {
    await computeHour(ctx, str(r["tenant_id"]), num(r["h"]) * 1000);
  }
  return stale.length;
}

async function computeHour(ctx: StoreContext, tenantId: string, hourMs: number): Promise<void> {
  const startedAt = Date.now(); // before reading: an insert this read may miss is marked later
  const version = startedAt;
  // Both the primary key (timestamp_ms) and the partition key (ts) narrow the read to the hour.
  const where = sqlJoin([sql`tenant_id = ${tenantId}`, ...rangeConditions({ fromMs: hourMs, toMs: hourMs + HOUR_MS - 1 })], " AND ");
  // Rows of a previous computation whose key no traces have now (a trace stored again with another
  // agent, provider, model or environment: the newest copy wins) are replaced by empty rows first;
  // otherwise the old key would keep counting the trace beside the new one. Same version: a key that
  // comes back meanwhile is in the computation below, inserted later, which wins.
  const hour = sql`tenant_id = ${tenantId} AND hour = toDateTime(${seconds(hourMs)})`;
  await ctx.engine.command(
    sql`INSERT INTO ${ctx.rollups.hourly} (tenant_id, hour, agent_id, provider, model, environment, latest_agent_name, latest_ms,
        trace_count, error_count, success_count, error_only_count, cost_sum, latency_ms_sum, input_token_sum, output_token_sum, version)
      SELECT tenant_id, hour, agent_id, provider, model, environment, '', toInt64(0),
        toUInt64(0), toUInt64(0), toUInt64(0), toUInt64(0), toFloat64(0), toFloat64(0), toUInt64(0), toUInt64(0), toUInt64(${version})
      FROM ${ctx.rollups.hourly} FINAL
      WHERE ${hour} AND trace_count > 0
        AND (agent_id, provider, model, environment) NOT IN (SELECT agent_id, provider, model, environment FROM ${ctx.table} FINAL WHERE ${where})`,
  );
  await ctx.engine.command(
    sql`INSERT INTO ${ctx.rollups.latency} (tenant_id, hour, agent_id, buckets, counts, version)
      SELECT tenant_id, hour, agent_id, emptyArrayInt32(), emptyArrayUInt64(), toUInt64(${version})
      FROM ${ctx.rollups.latency} FINAL
      WHERE ${hour} AND notEmpty(buckets) AND agent_id NOT IN (SELECT agent_id FROM ${ctx.table} FINAL WHERE ${where})`,
  );
  await ctx.engine.command(
    sql`INSERT INTO ${ctx.rollups.hourly} (tenant_id, hour, agent_id, provider, model, environment, latest_agent_name, latest_ms,
        trace_count, error_count, success_count, error_only_count, cost_sum, latency_ms_sum, input_token_sum, output_token_sum, version)
      SELECT tenant_id, toDateTime(${seconds(hourMs)}), agent_id, provider, model, environment,
        argMax(agent_name, timestamp_ms), max(timestamp_ms),
        count(), countIf(status IN ('error', 'blocked')), countIf(status = 'success'), countIf(status = 'error'),
        sum(${costUnits("cost_usd")}) / ${COST_UNITS_PER_USD}, sum(${latencyNs("latency_ms")}) / ${NS_PER_MS}, sum(toUInt64(input_tokens)), sum(toUInt64(output_tokens)), ${version}
      FROM ${ctx.table} FINAL WHERE ${where}
      GROUP BY tenant_id, agent_id, provider, model, environment`,
  );
  await ctx.engine.command(
    sql`INSERT INTO ${ctx.rollups.latency} (tenant_id, hour, agent_id, buckets, counts, version)
      SELECT tenant_id, toDateTime(${seconds(hourMs)}), agent_id, groupArray(b), groupArray(c), ${version}
      FROM (SELECT tenant_id, agent_id, ${BUCKET_SQL} AS b, count() AS c FROM ${ctx.table} FINAL WHERE ${where} GROUP BY tenant_id, agent_id, b)
      GROUP BY tenant_id, agent_id`,
  );
  await ctx.engine.command(
    sql`INSERT INTO ${ctx.rollups.marks} (tenant_id, hour, kind, at_ms) VALUES (${tenantId}, toDateTime(${seconds(hourMs)}), ${CLEAN}, ${startedAt})`,
  );
}

/** Inclusive ms ranges [fromMs, toMs] of whole hours. */
export interface HourRange {
  fromMs: number;
  toMs: number;
}

/**
 * The whole hours inside [fromMs, toMs] whose rollup is current, merged into ranges (each range's
 * toMs is the last ms of its last hour). Empty when fewer than MIN_ROLLUP_HOURS qualify.
 */
export async function cleanHourRanges(
  ctx: StoreContext,
  tenantId: string,
  fromMs: number,
  toMs: number,
): Promise<HourRange[]> {
  const from = clampMs(fromMs);
  const to = clampMs(toMs);
  const first = hourStart(from) === from ? from : hourStart(from) + HOUR_MS;
  const last = hourStart(to + 1) - HOUR_MS; // the last hour that ends at or before `to`
  if (last - first + HOUR_MS < MIN_ROLLUP_HOURS * HOUR_MS) return [];
  const rows = await ctx.engine.query(
    sql`SELECT toUInt32(hour) AS h FROM ${ctx.rollups.marks}
      WHERE tenant_id = ${tenantId} AND hour >= toDateTime(${seconds(first)}) AND hour <= toDateTime(${seconds(last)})
      GROUP BY hour
      HAVING maxIf(at_ms, kind = ${CLEAN}) > maxIf(at_ms, kind = ${DIRTY}) + ${ctx.rollups.marginMs}
      ORDER BY hour`,
  );
  const hours = rows.map((r) => num(r["h"]) * 1000);
  if (hours.length < MIN_ROLLUP_HOURS) return [];
  const ranges: HourRange[] = [];
  for (const h of hours) {
    const prev = ranges[ranges.length - 1];
    if (prev && prev.toMs + 1 === h) prev.toMs = h + HOUR_MS - 1;
    else ranges.push({ fromMs: h, toMs: h + HOUR_MS - 1 });
  }
  return ranges;
}

/** `hour` within one of the ranges (rollup tables). */
export function inHourRanges(ranges: readonly HourRange[]): SqlFragment {
  return sql`(${sqlJoin(
    ranges.map((r) => sql`(hour >= toDateTime(${seconds(r.fromMs)}) AND hour <= toDateTime(${seconds(r.toMs)}))`),
    " OR ",
  )})`;
}

/**
 * The parts of [fromMs, toMs] not covered by `ranges` (sorted, disjoint, inside it): the time the
 * traces themselves must be read for. Positive ranges, so that the read uses the primary key.
 */
export function uncoveredRanges(fromMs: number, toMs: number, ranges: readonly HourRange[]): HourRange[] {
  const out: HourRange[] = [];
  let at = fromMs;
  for (const r of ranges) {
    if (r.fromMs > at) out.push({ fromMs: at, toMs: r.fromMs - 1 });
    at = Math.max(at, r.toMs + 1);
  }
  if (at <= toMs) out.push({ fromMs: at, toMs });
  return out;
}

/** A trace row within one of the ranges (both timestamp_ms, for the primary key, and ts, for partitions). */
export function inTraceRanges(ranges: readonly HourRange[]): SqlFragment {
  if (ranges.length === 0) return sql`0`;
  return sql`(${sqlJoin(
    ranges.map((r) => sql`(${sqlJoin(rangeConditions(r), " AND ")})`),
    " OR ",
  )})`;
}

/** Where a read over a time range finds its rows: `traces` under rawWhere, plus the rollup under rollupWhere. */
export interface RollupSplit {
  rawWhere: SqlFragment;
  /** null: no clean hour in the range, everything is read from the traces. */
  rollupWhere: SqlFragment | null;
}

/**
 * Splits a read over [fromMs, toMs] (inclusive; an empty range reads nothing): whole clean hours from
 * the rollup tables (with `rollupFilters`), the rest from the traces (with `rawFilters`), by primary key.
 */
export async function splitByRollup(
  ctx: StoreContext,
  tenantId: string,
  range: { fromMs: number; toMs: number },
  rawFilters: SqlFragment[],
  rollupFilters: SqlFragment[],
): Promise<RollupSplit> {
  const ranges = range.fromMs <= range.toMs ? await cleanHourRanges(ctx, tenantId, range.fromMs, range.toMs) : [];
  if (ranges.length === 0) return { rawWhere: sqlJoin([...rawFilters, ...rangeConditions(range)], " AND "), rollupWhere: null };
  return {
    rawWhere: sqlJoin([...rawFilters, inTraceRanges(uncoveredRanges(range.fromMs, range.toMs, ranges))], " AND "),
    rollupWhere: sqlJoin([...rollupFilters, inHourRanges(ranges)], " AND "),
  };
}

/** The value at quantile `level` of a histogram (bucket → count), as quantileExact picks its element. */
export function histogramQuantile(sorted: readonly (readonly [number, number])[], total: number, level: number): number {
  if (total === 0) return 0;
  const k = Math.min(total - 1, Math.floor(level * total)); // 0-based rank
  let seen = 0;
  for (const [bucket, count] of sorted) {
    seen += count;
    if (seen > k) return bucketValue(bucket);
  }
  return bucketValue(sorted[sorted.length - 1]?.[0] ?? ZERO_BUCKET);
}
