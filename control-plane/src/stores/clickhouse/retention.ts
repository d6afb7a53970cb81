// Retention on every engine: whole month partitions whose last instant is older than now −
// retentionDays are dropped (portable to ClickHouse 18.16, which has no TTL); rows of a partly expired
// month stay until the whole month has expired. Where the engine has TTL (20.1 and later, chDB) the
// tables also carry `TTL <time> + retentionDays days`, so expired rows go at the next merge.

import { str } from "./json-values.js";
import type { SqlEngine } from "./engine.js";
import { SqlFragment, sql, sqlIdent } from "./sql-literal.js";
import type { StoreContext } from "./store-context.js";
import { DAY_MS, dateMs, monthPartitionEndMs } from "./time.js";

/** Partition ids (YYYYMM) among `partitionIds` that end at or before `cutoffMs`, sorted. */
export function expiredPartitions(partitionIds: readonly string[], cutoffMs: number): string[] {
  return partitionIds
    .filter((id) => {
      const end = monthPartitionEndMs(id);
      return end !== null && end <= cutoffMs;
    })
    .sort();
}

export async function dropExpiredPartitions(
  ctx: StoreContext,
  database: string,
  tableName: string,
  retentionDays: number,
  now: Date,
): Promise<string[]> {
  const cutoff = dateMs(now, "now") - retentionDays * DAY_MS;
  const rows = await ctx.engine.query(
    sql`SELECT DISTINCT partition_id FROM system.parts WHERE database = ${database} AND table = ${tableName} AND active`,
  );
  const expired = expiredPartitions(
    rows.map((r) => str(r["partition_id"])),
    cutoff,
  );
  for (const id of expired) {
    const statement: SqlFragment = sql`ALTER TABLE ${sqlIdent(database)}.${sqlIdent(tableName)} DROP PARTITION ID ${id}`;
    await ctx.engine.command(statement);
  }
  return expired;
}

/** The time column each table's retention counts from. */
export const RETENTION_COLUMNS: Readonly<Record<string, string>> = {
  traces: "ts",
  traces_hourly: "hour",
  traces_hourly_latency: "hour",
  traces_hour_marks: "hour",
};

/**
 * The TTL expression of a table: `column` + retentionDays, saturated at the last second a DateTime holds.
 * (`ts + toIntervalDay(n)` wraps past 2106-02-07: with a long retention — up to 20,000 days — a trace
 * dated 2051 or later, e.g. from a sidecar with a wrong clock, got a TTL in 1970 and was deleted at the
 * next merge.)
 */
export function retentionTtl(column: string, retentionDays: number): string {
  const seconds = Math.floor(retentionDays) * 86_400;
  return `TTL toDateTime(least(toUInt64(toUInt32(${column})) + ${seconds}, 4294967295))`;
}

/**
 * Sets each table's TTL to retentionDays (only when it differs, so opening a store does not rewrite
 * anything; existing parts are not rewritten either: materialize_ttl_after_modify = 0, the partition
 * drops and merges take care of them).
 */
export async function applyRetentionTtl(engine: SqlEngine, database: string, retentionDays: number): Promise<void> {
  const rows = await engine.query(sql`SELECT name, engine_full FROM system.tables WHERE database = ${database}`);
  const current = new Map(rows.map((r) => [str(r["name"]), str(r["engine_full"])]));
  for (const [table, column] of Object.entries(RETENTION_COLUMNS)) {
    const ttl = retentionTtl(column, retentionDays);
    const engineFull = current.get(table);
    if (engineFull === undefined || engineFull.includes(`${ttl} `) || engineFull.endsWith(ttl)) continue;
    await engine.command(
      new SqlFragment(
        `ALTER TABLE ${sqlIdent(database).text}.${sqlIdent(table).text} MODIFY ${ttl} SETTINGS materialize_ttl_after_modify = 0`,
      ),
    );
  }
}
