// The change log behind Sync: every governance write appends (kind, entity) in its transaction and
// notifies every control-plane replica through Postgres LISTEN/NOTIFY.
import type { Queryable } from "./db.js";

export type ChangeKind = "agent" | "policy" | "key" | "user" | "spend";
export const SYNC_CHANNEL = "agentgov_sync";

/** Logs a change for the tenant's sidecars and announces it (NOTIFY at commit); returns its version. */
export async function recordChange(db: Queryable, tenantId: string, kind: ChangeKind, entityId: string): Promise<number> {
  const r = await db.query<{ version: string | number }>(
    `WITH c AS (INSERT INTO sync_changes (tenant_id, kind, entity_id) VALUES ($1, $2, $3) RETURNING version)
     SELECT (SELECT version FROM c) AS version, pg_notify($4, $1 || ':' || (SELECT version FROM c))`,
    [tenantId, kind, entityId, SYNC_CHANNEL],
  );
  return Number(r.rows[0]?.version ?? 0);
}

export interface ChangeRow {
  version: number;
  kind: ChangeKind;
  entity_id: string;
}

export async function changesSince(db: Queryable, tenantId: string, version: number): Promise<ChangeRow[]> {
  const r = await db.query<ChangeRow>(
    "SELECT version, kind, entity_id FROM sync_changes WHERE tenant_id = $1 AND version > $2 ORDER BY version LIMIT 5000",
    [tenantId, version],
  );
  return r.rows;
}

export async function latestVersion(db: Queryable, tenantId: string): Promise<number> {
  const r = await db.query<{ v: number | null }>("SELECT max(version) AS v FROM sync_changes WHERE tenant_id = $1", [tenantId]);
  return r.rows[0]?.v ?? 0;
}

/** The oldest version still held for a tenant; a sidecar older than this needs a full snapshot. */
export async function oldestVersion(db: Queryable, tenantId: string): Promise<number> {
  const r = await db.query<{ v: number | null }>("SELECT min(version) AS v FROM sync_changes WHERE tenant_id = $1", [tenantId]);
  return r.rows[0]?.v ?? 0;
}
