// Retention without TTL (ClickHouse 18.16 has none): whole month partitions of `traces` whose last
// instant is older than now − retentionDays are dropped. Rows of a partly expired month stay until
// the whole month has expired, so traces live between retentionDays and retentionDays + 31 days.

import { str } from "./json-values.js";
import { sql, sqlIdent, type SqlFragment } from "./sql-literal.js";
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
