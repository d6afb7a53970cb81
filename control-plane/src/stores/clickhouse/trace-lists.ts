// Reads of whole traces: get by id, keyset (cursor) pages and offset pages with an exact total.
// Pages are found in two steps so that large columns are read for the page only: first the keys
// (timestamp_ms, id) of the page, searched in time windows that grow from the newest end (a page
// of a busy tenant is found without scanning the whole range), then the rows of those keys.

import type { Trace } from "@agentgov/proto";
import { TraceStoreError } from "./errors.js";
import { num, str } from "./json-values.js";
import { splitByRollup } from "./rollup.js";
import { rowToTrace } from "./row-codec.js";
import { columnList, DETAIL_COLUMN_NAMES, SUMMARY_COLUMN_NAMES } from "./schema.js";
import { type SqlFragment, sql, sqlInList, sqlJoin } from "./sql-literal.js";
import {
  checkFinite,
  checkInt,
  checkString,
  type MsRange,
  rangeConditions,
  type StoreContext,
  tenantCondition,
} from "./store-context.js";
import { dateMs, MAX_MS, MIN_MS } from "./time.js";
import { widenedBound } from "./written-double.js";
import type { CursorListQuery, CursorListResult, OffsetListQuery, OffsetListResult } from "./types.js";

export const MAX_LIMIT = 1000;
export const MAX_OFFSET = 10_000_000;
const FIRST_WINDOW_MS = 3_600_000;
const WINDOW_GROWTH = 4;
/** Windows tried before the whole range: 1 h, 4 h, 16 h, 64 h, 256 h (each read costs at most a third of the next). */
const MAX_WINDOWS = 5;

interface Key {
  timestampMs: number;
  id: string;
}

/** How far from the time inside a ULID id get() looks first. */
const GET_HINT_WINDOW_MS = 3_600_000;

const keyOf = (ms: number, id: string): string => `${ms}\u0000${id}`;

/**
 * Keys of rows [offset, offset + limit) in (timestamp_ms desc, id desc) order among rows matching
 * `conditions` within `range`. Windows [anchor − w, range.toMs] grow until they hold enough rows or
 * cover the range (after MAX_WINDOWS the whole range is read); since every window is a newest-first prefix of the range, its first rows are
 * the range's first rows.
 */
async function findKeys(
  ctx: StoreContext,
  conditions: SqlFragment[],
  range: MsRange,
  limit: number,
  offset: number,
): Promise<Key[]> {
  const anchor = Math.min(range.toMs ?? MAX_MS, Date.now());
  for (let round = 0, width = FIRST_WINDOW_MS; ; round++, width *= WINDOW_GROWTH) {
    const lower = anchor - width;
    const last = round >= MAX_WINDOWS || lower <= (range.fromMs ?? 0);
    const window: MsRange = { fromMs: last ? range.fromMs : lower, toMs: range.toMs };
    const where = sqlJoin([...conditions, ...rangeConditions(window)], " AND ");
    const rows = await ctx.engine.query(
      sql`SELECT timestamp_ms, id FROM ${ctx.table} FINAL WHERE ${where} ORDER BY timestamp_ms DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
    );
    if (rows.length >= limit || last) return rows.map((r) => ({ timestampMs: num(r["timestamp_ms"]), id: str(r["id"]) }));
  }
}

/** The rows of `keys`, in the keys' order (a key whose row vanished meanwhile is skipped). */
async function fetchRows(ctx: StoreContext, tenantId: string, keys: Key[], columns: readonly string[]): Promise<Trace[]> {
  if (keys.length === 0) return [];
  let min = Infinity;
  let max = -Infinity;
  for (const k of keys) {
    min = Math.min(min, k.timestampMs);
    max = Math.max(max, k.timestampMs);
  }
  const where = sqlJoin(
    [tenantCondition(tenantId), ...rangeConditions({ fromMs: min, toMs: max }), sql`id IN ${sqlInList([...new Set(keys.map((k) => k.id))])}`],
    " AND ",
  );
  const rows = await ctx.engine.query(sql`SELECT ${columnList(columns)} FROM ${ctx.table} FINAL WHERE ${where}`);
  const byKey = new Map<string, Trace>();
  for (const r of rows) byKey.set(keyOf(num(r["timestamp_ms"]), str(r["id"])), rowToTrace(r));
  const out: Trace[] = [];
  for (const k of keys) {
    const t = byKey.get(keyOf(k.timestampMs, k.id));
    if (t) out.push(t);
  }
  return out;
}

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const ULID_SUFFIX = /([0-9A-HJKMNP-TV-Z]{26})$/i;

/** The creation time inside a ULID-suffixed id (`trc_<ULID>`), or null. */
export function ulidTimeMs(id: string): number | null {
  const m = ULID_SUFFIX.exec(id);
  if (!m || !m[1]) return null;
  let ms = 0;
  for (const ch of m[1].slice(0, 10).toUpperCase()) ms = ms * 32 + CROCKFORD.indexOf(ch);
  return ms <= MAX_MS ? ms : null;
}

export async function getTrace(ctx: StoreContext, tenantId: string, id: string): Promise<Trace | null> {
  checkString(id, "id");
  const base = [tenantCondition(tenantId), sql`id = ${id}`];
  const read = async (range: MsRange): Promise<Trace | null> => {
    const where = sqlJoin([...base, ...rangeConditions(range)], " AND ");
    const rows = await ctx.engine.query(
      sql`SELECT ${columnList(DETAIL_COLUMN_NAMES)} FROM ${ctx.table} FINAL WHERE ${where} ORDER BY timestamp_ms DESC LIMIT 1`,
    );
    const row = rows[0];
    return row ? rowToTrace(row) : null;
  };
  // Trace ids are `trc_<ULID>` minted when the request arrived: look near that time first, then
  // everywhere (ids minted otherwise, clock skew, unknown ids).
  const hint = ulidTimeMs(id);
  if (hint !== null) {
    const near = await read({ fromMs: hint - GET_HINT_WINDOW_MS, toMs: hint + GET_HINT_WINDOW_MS });
    if (near) return near;
  }
  return read({});
}

export async function listByCursor(ctx: StoreContext, tenantId: string, q: CursorListQuery): Promise<CursorListResult> {
  const limit = checkInt(q.limit, "limit", 1, MAX_LIMIT);
  const range: MsRange = { fromMs: dateMs(q.since, "since"), toMs: dateMs(q.until, "until") };
  const conditions = [tenantCondition(tenantId)];
  if (q.agentId !== undefined) conditions.push(sql`agent_id = ${checkString(q.agentId, "agentId")}`);
  if (q.status !== undefined) conditions.push(sql`status = ${checkString(q.status, "status")}`);
  if (q.hasPii !== undefined) conditions.push(sql`has_pii = ${q.hasPii ? 1 : 0}`);
  if (q.after) {
    const ms = checkInt(q.after.timestampMs, "after.timestampMs", 0, MAX_MS);
    const id = checkString(q.after.id, "after.id");
    conditions.push(sql`(timestamp_ms < ${ms} OR (timestamp_ms = ${ms} AND id < ${id}))`);
    range.toMs = Math.min(range.toMs ?? MAX_MS, ms);
  }
  const keys = await findKeys(ctx, conditions, range, limit + 1, 0);
  const hasMore = keys.length > limit;
  const traces = await fetchRows(ctx, tenantId, keys.slice(0, limit), SUMMARY_COLUMN_NAMES);
  return { traces, hasMore };
}

export async function listByOffset(ctx: StoreContext, tenantId: string, q: OffsetListQuery): Promise<OffsetListResult> {
  const limit = checkInt(q.limit, "limit", 1, MAX_LIMIT);
  const offset = checkInt(q.offset, "offset", 0, MAX_OFFSET);
  const range: MsRange = {};
  if (q.startDate !== undefined) range.fromMs = dateMs(q.startDate, "startDate");
  if (q.endDate !== undefined) range.toMs = dateMs(q.endDate, "endDate");
  const conditions = [tenantCondition(tenantId)];
  if (q.agentId !== undefined) conditions.push(sql`agent_id = ${checkString(q.agentId, "agentId")}`);
  if (q.status === "success") conditions.push(sql`status = 'success'`);
  else if (q.status === "error") conditions.push(sql`status IN ('error', 'blocked')`);
  else if (q.status !== undefined) {
    throw new TraceStoreError("invalid_argument", `status must be success or error, got ${JSON.stringify(q.status)}`);
  }
  if (q.environment !== undefined) conditions.push(sql`environment = ${checkString(q.environment, "environment")}`);
  if (q.minCostUsd !== undefined) conditions.push(sql`cost_usd >= ${widenedBound(checkFinite(q.minCostUsd, "minCostUsd"), "lower")}`);
  if (q.maxCostUsd !== undefined) conditions.push(sql`cost_usd <= ${widenedBound(checkFinite(q.maxCostUsd, "maxCostUsd"), "upper")}`);
  if (q.minInjectionScore !== undefined) {
    conditions.push(sql`injection_score >= ${widenedBound(checkFinite(q.minInjectionScore, "minInjectionScore"), "lower")}`);
  }
  // The rollups hold counts by agent, environment and status: other filters need the traces.
  const rollupCount =
    q.minCostUsd === undefined && q.maxCostUsd === undefined && q.minInjectionScore === undefined
      ? q.status === "success"
        ? sql`success_count`
        : q.status === "error"
          ? sql`error_count`
          : sql`trace_count`
      : undefined;
  const [total, keys] = await Promise.all([
    countTraces(ctx, tenantId, conditions, range, rollupCount, [
      tenantCondition(tenantId),
      ...(q.agentId !== undefined ? [sql`agent_id = ${q.agentId}`] : []),
      ...(q.environment !== undefined ? [sql`environment = ${q.environment}`] : []),
    ]),
    findKeys(ctx, conditions, range, limit, offset),
  ]);
  const traces = await fetchRows(ctx, tenantId, keys, SUMMARY_COLUMN_NAMES);
  return { traces, total };
}

/** Exact count of traces matching `conditions` in `range`: clean whole hours from the rollup when it can tell. */
async function countTraces(
  ctx: StoreContext,
  tenantId: string,
  conditions: SqlFragment[],
  range: MsRange,
  rollupCount: SqlFragment | undefined,
  rollupFilters: SqlFragment[],
): Promise<number> {
  const { rawWhere, rollupWhere } = rollupCount
    ? await splitByRollup(ctx, tenantId, { fromMs: range.fromMs ?? MIN_MS, toMs: range.toMs ?? MAX_MS }, conditions, rollupFilters)
    : { rawWhere: sqlJoin([...conditions, ...rangeConditions(range)], " AND "), rollupWhere: null };
  const [raw, rolled] = await Promise.all([
    ctx.engine.query(sql`SELECT count() AS n FROM ${ctx.table} FINAL WHERE ${rawWhere}`),
    rollupCount && rollupWhere
      ? ctx.engine.query(sql`SELECT sum(${rollupCount}) AS n FROM ${ctx.rollups.hourly} FINAL WHERE ${rollupWhere}`)
      : Promise.resolve([]),
  ]);
  return num(raw[0]?.["n"]) + num(rolled[0]?.["n"]);
}
