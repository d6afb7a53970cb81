// API key records for GET/DELETE /api/keys: metadata only (the key text is never stored, only its hash).
import type { Queryable } from "./db.js";
import type { KeyScope } from "../../domain/api-keys.js";

export interface KeyListRow {
  id: string;
  name: string;
  scope: KeyScope;
  prefix: string;
  created_by: string;
  created_by_email: string;
  last_used_at: Date | null;
  created_at: Date;
}

/** The tenant's keys that are not deleted, newest first, with the creator's email. */
export async function listKeys(
  db: Queryable,
  tenantId: string,
  q: { limit: number; offset: number; scope?: KeyScope },
): Promise<{ rows: KeyListRow[]; total: number }> {
  const where = ["k.tenant_id = $1", "k.deleted_at IS NULL"];
  const params: unknown[] = [tenantId];
  if (q.scope) {
    params.push(q.scope);
    where.push(`k.scope = $${params.length}`);
  }
  const cond = where.join(" AND ");
  const [rows, total] = await Promise.all([
    db.query<KeyListRow>(
      `SELECT k.id, k.name, k.scope, k.prefix, k.created_by, u.email AS created_by_email, k.last_used_at, k.created_at
         FROM api_keys k JOIN users u ON u.id = k.created_by
        WHERE ${cond}
        ORDER BY k.created_at DESC, k.id DESC
        LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, q.limit, q.offset],
    ),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM api_keys k WHERE ${cond}`, params),
  ]);
  return { rows: rows.rows, total: total.rows[0]?.n ?? 0 };
}

/** Marks a key deleted; returns its record, or undefined when the tenant has no such live key. */
export async function deleteKey(db: Queryable, tenantId: string, keyId: string): Promise<{ id: string; name: string; scope: KeyScope; created_by: string } | undefined> {
  const r = await db.query<{ id: string; name: string; scope: KeyScope; created_by: string }>(
    `UPDATE api_keys SET deleted_at = now() WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL
     RETURNING id, name, scope, created_by`,
    [tenantId, keyId],
  );
  return r.rows[0];
}

/** Marks every live key of a user deleted (user.deleted); returns the ids. */
export async function deleteKeysOfUser(db: Queryable, tenantId: string, userId: string): Promise<string[]> {
  const r = await db.query<{ id: string }>(
    "UPDATE api_keys SET deleted_at = now() WHERE tenant_id = $1 AND created_by = $2 AND deleted_at IS NULL RETURNING id",
    [tenantId, userId],
  );
  return r.rows.map((x) => x.id);
}
