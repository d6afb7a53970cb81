// Reading and retiring the Sync change log (sync_changes) for streams: a tenant's changes in a version
// window, whether a sidecar's version can still be resumed, and the retention that keeps the log small.
import type { Queryable } from "../stores/postgres/db.js";
import type { ChangeRow } from "../stores/postgres/sync-changes.js";

export const CHANGES_PAGE = 5000;
/** Change rows older than this are deleted; a sidecar that was away longer gets a full snapshot. */
export const CHANGE_RETENTION_DAYS = 7;

/** A tenant's changes with after < version ≤ upTo, oldest first, at most CHANGES_PAGE. */
export async function changesBetween(db: Queryable, tenantId: string, after: number, upTo: number): Promise<ChangeRow[]> {
  const r = await db.query<ChangeRow>(
    "SELECT version, kind, entity_id FROM sync_changes WHERE tenant_id = $1 AND version > $2 AND version <= $3 ORDER BY version LIMIT $4",
    [tenantId, after, upTo, CHANGES_PAGE],
  );
  return r.rows;
}

/**
 * A sidecar at `version` can resume when the version comes from this database (not above the settled
 * version) and no change after it has been deleted by retention (retention deletes whole prefixes of
 * the global sequence, so the smallest remaining version bounds what is gone).
 */
export async function canResume(db: Queryable, version: number, settled: number): Promise<boolean> {
  if (version <= 0 || version > settled) return false;
  const r = await db.query<{ v: number | null }>("SELECT min(version) AS v FROM sync_changes");
  const oldest = r.rows[0]?.v;
  return oldest === null || oldest === undefined || version >= oldest - 1;
}

/** Deletes change rows older than the retention, always keeping the newest row (it marks where the log starts). */
export async function pruneChanges(db: Queryable, retentionDays = CHANGE_RETENTION_DAYS): Promise<number> {
  const r = await db.query(
    `DELETE FROM sync_changes WHERE version < (
       SELECT max(version) FROM sync_changes WHERE created_at < now() - make_interval(days => $1::int))`,
    [retentionDays],
  );
  return r.rowCount ?? 0;
}
