// What every query module of the trace store works with: the engine, the qualified table name and
// the shared WHERE-clause builders (tenant, inclusive time range, argument checks).

import type { SqlEngine } from "./engine.js";
import { TraceStoreError } from "./errors.js";
import type { RollupTables } from "./rollup.js";
import { type SqlFragment, sql } from "./sql-literal.js";
import { clampMs, seconds } from "./time.js";

export interface StoreContext {
  engine: SqlEngine;
  /** `<db>.traces`, whitelisted. */
  table: SqlFragment;
  /** The hourly rollup tables (rollup.ts). */
  rollups: RollupTables;
}

/** Inclusive epoch-ms bounds; an absent side is open. */
export interface MsRange {
  fromMs?: number;
  toMs?: number;
}

export function tenantCondition(tenantId: string): SqlFragment {
  if (typeof tenantId !== "string" || tenantId.length === 0) {
    throw new TraceStoreError("invalid_argument", "tenantId is required");
  }
  return sql`tenant_id = ${tenantId}`;
}

/**
 * Conditions for an inclusive ms range: on timestamp_ms (exact) and on ts (whole seconds), the
 * latter so that both engines prune month partitions by their min/max ts.
 */
export function rangeConditions(range: MsRange): SqlFragment[] {
  const out: SqlFragment[] = [];
  if (range.fromMs !== undefined) {
    const from = clampMs(range.fromMs);
    out.push(sql`ts >= toDateTime(${seconds(from)})`, sql`timestamp_ms >= ${from}`);
  }
  if (range.toMs !== undefined) {
    const to = clampMs(range.toMs);
    out.push(sql`ts <= toDateTime(${seconds(to)})`, sql`timestamp_ms <= ${to}`);
  }
  return out;
}

export function checkInt(value: number, what: string, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new TraceStoreError("invalid_argument", `${what} must be an integer in [${min}, ${max}], got ${String(value)}`);
  }
  return value;
}

export function checkFinite(value: number, what: string): number {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new TraceStoreError("invalid_argument", `${what} must be a finite number, got ${String(value)}`);
  }
  return value;
}

export function checkString(value: string, what: string): string {
  if (typeof value !== "string") throw new TraceStoreError("invalid_argument", `${what} must be a string`);
  return value;
}
