// Tenants, users and API keys: what authentication and bootstrap need.
import type { Queryable } from "./db.js";
import type { KeyScope } from "../../domain/api-keys.js";
import type { UserRole } from "../../domain/permissions.js";

export interface KeyAuthRow {
  key_id: string;
  tenant_id: string;
  scope: KeyScope;
  user_id: string;
  role: UserRole;
  user_status: string;
  last_used_at: Date | null;
  team_scopes: string[][];
}

/** Looks a key up by its hash; deleted keys and keys of inactive users are not returned. */
export async function findActiveKeyByHash(db: Queryable, keyHash: string): Promise<KeyAuthRow | undefined> {
  const r = await db.query<KeyAuthRow>(
    `SELECT k.id AS key_id, k.tenant_id, k.scope, k.created_by AS user_id, u.role, u.status AS user_status, k.last_used_at,
            COALESCE((SELECT array_agg(array_to_string(t.scopes, ',')) FROM team_members m JOIN teams t ON t.id = m.team_id
                       WHERE m.user_id = u.id), '{}') AS team_scopes
       FROM api_keys k JOIN users u ON u.id = k.created_by
      WHERE k.key_hash = $1 AND k.deleted_at IS NULL AND u.status = 'active'`,
    [keyHash],
  );
  const row = r.rows[0];
  if (!row) return undefined;
  // array_agg over comma-joined lists keeps the query to one round trip; split back here.
  const lists = (row.team_scopes as unknown as string[]).map((s) => (s ? s.split(",") : []));
  return { ...row, team_scopes: lists };
}

/** Whether a key is still valid: not deleted, its user active (a long-lived stream re-checks its key with it). */
export async function isKeyActive(db: Queryable, keyId: string): Promise<boolean> {
  const r = await db.query("SELECT 1 FROM api_keys k JOIN users u ON u.id = k.created_by WHERE k.id = $1 AND k.deleted_at IS NULL AND u.status = 'active'", [keyId]);
  return (r.rowCount ?? 0) > 0;
}

export async function touchKey(db: Queryable, keyId: string): Promise<void> {
  await db.query("UPDATE api_keys SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')", [keyId]);
}

export async function findTenantByOrg(db: Queryable, orgId: string): Promise<{ id: string; name: string } | undefined> {
  const r = await db.query<{ id: string; name: string }>("SELECT id, name FROM tenants WHERE idp_org_id = $1", [orgId]);
  return r.rows[0];
}

export async function insertTenant(db: Queryable, t: { id: string; name: string; idpOrgId: string }): Promise<void> {
  await db.query("INSERT INTO tenants (id, name, idp_org_id) VALUES ($1, $2, $3)", [t.id, t.name, t.idpOrgId]);
}

export async function insertUser(
  db: Queryable,
  u: { id: string; tenantId: string; email: string; displayName?: string | null; role: UserRole; idpUserId?: string | null },
): Promise<void> {
  await db.query(
    "INSERT INTO users (id, tenant_id, email, display_name, role, idp_user_id) VALUES ($1, $2, $3, $4, $5, $6)",
    [u.id, u.tenantId, u.email, u.displayName ?? null, u.role, u.idpUserId ?? null],
  );
}

export async function findUserByEmail(db: Queryable, tenantId: string, email: string): Promise<{ id: string; role: UserRole } | undefined> {
  const r = await db.query<{ id: string; role: UserRole }>(
    "SELECT id, role FROM users WHERE tenant_id = $1 AND lower(email) = lower($2) AND status <> 'deleted' ORDER BY created_at LIMIT 1",
    [tenantId, email],
  );
  return r.rows[0];
}

export async function insertKey(
  db: Queryable,
  k: { id: string; tenantId: string; name: string; scope: KeyScope; prefix: string; keyHash: string; createdBy: string },
): Promise<{ created_at: Date }> {
  const r = await db.query<{ created_at: Date }>(
    `INSERT INTO api_keys (id, tenant_id, name, scope, prefix, key_hash, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7)
     RETURNING created_at`,
    [k.id, k.tenantId, k.name, k.scope, k.prefix, k.keyHash, k.createdBy],
  );
  return r.rows[0]!;
}

/** The key with this hash, deleted ones included (`deleted`): a deleted key's hash is never issued again. */
export async function findKeyByHash(db: Queryable, keyHash: string): Promise<{ id: string; tenant_id: string; deleted: boolean } | undefined> {
  const r = await db.query<{ id: string; tenant_id: string; deleted: boolean }>("SELECT id, tenant_id, deleted_at IS NOT NULL AS deleted FROM api_keys WHERE key_hash = $1", [keyHash]);
  return r.rows[0];
}
