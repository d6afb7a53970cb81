// Users: the list admins see (GET /api/users) and the reads and writes identity events make.
import type { Queryable } from "./db.js";
import type { UserRole } from "../../domain/permissions.js";

export type UserStatus = "active" | "deactivated" | "deleted";

export interface UserRow {
  id: string;
  tenant_id: string;
  email: string;
  display_name: string | null;
  role: UserRole;
  status: UserStatus;
  idp_user_id: string | null;
  /** Time of the newest status event applied (created, deactivated, reactivated, deleted). */
  last_event_at: Date | null;
  /** Time of the newest profile write (either field). */
  profile_event_at: Date | null;
  /** Time of the event that set email; null while no event has (email is "" or was set outside events). */
  email_event_at: Date | null;
  /** Time of the event that set display_name; null while no event has. */
  display_name_event_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS =
  "id, tenant_id, email, display_name, role, status, idp_user_id, last_event_at, profile_event_at, email_event_at, display_name_event_at, created_at, updated_at";

export async function listUsers(
  db: Queryable,
  tenantId: string,
  q: { limit: number; offset: number; status?: UserStatus },
): Promise<{ rows: UserRow[]; total: number }> {
  const params: unknown[] = [tenantId];
  let cond = "tenant_id = $1";
  if (q.status) {
    params.push(q.status);
    cond += ` AND status = $${params.length}`;
  }
  const [rows, total] = await Promise.all([
    db.query<UserRow>(
      `SELECT ${COLUMNS} FROM users WHERE ${cond} ORDER BY created_at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, q.limit, q.offset],
    ),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM users WHERE ${cond}`, params),
  ]);
  return { rows: rows.rows, total: total.rows[0]?.n ?? 0 };
}

export async function getUser(db: Queryable, tenantId: string, userId: string): Promise<UserRow | undefined> {
  const r = await db.query<UserRow>(`SELECT ${COLUMNS} FROM users WHERE tenant_id = $1 AND id = $2`, [tenantId, userId]);
  return r.rows[0];
}

/** A user that is not deleted, by id or by email (case-insensitive; the oldest when several share it). */
export async function findLiveUser(db: Queryable, tenantId: string, by: { userId?: string; email?: string }): Promise<UserRow | undefined> {
  const r = by.userId !== undefined
    ? await db.query<UserRow>(`SELECT ${COLUMNS} FROM users WHERE tenant_id = $1 AND id = $2 AND status <> 'deleted'`, [tenantId, by.userId])
    : await db.query<UserRow>(
        // Several users may share an address (a deactivated one and its successor): the active one first.
        `SELECT ${COLUMNS} FROM users WHERE tenant_id = $1 AND lower(email) = lower($2) AND status <> 'deleted' ORDER BY (status = 'active') DESC, created_at, id LIMIT 1`,
        [tenantId, by.email ?? ""],
      );
  return r.rows[0];
}

/** The user an identity-provider user id maps to, locked for the rest of the transaction. */
export async function getUserByIdpForUpdate(db: Queryable, tenantId: string, idpUserId: string): Promise<UserRow | undefined> {
  const r = await db.query<UserRow>(`SELECT ${COLUMNS} FROM users WHERE tenant_id = $1 AND idp_user_id = $2 FOR UPDATE`, [tenantId, idpUserId]);
  return r.rows[0];
}

/**
 * A user made without an identity-provider id (the bootstrap or CLI admin) that an identity event naming
 * this email claims (case-insensitive; not deleted; the oldest when several share it), locked for the
 * rest of the transaction. A user linked meanwhile by a concurrent event is not returned (the row is
 * re-checked after the lock wait).
 */
export async function findUnlinkedUserByEmailForUpdate(db: Queryable, tenantId: string, email: string): Promise<UserRow | undefined> {
  const r = await db.query<UserRow>(
    `SELECT ${COLUMNS} FROM users WHERE tenant_id = $1 AND idp_user_id IS NULL AND lower(email) = lower($2) AND status <> 'deleted'
      ORDER BY created_at, id LIMIT 1 FOR UPDATE`,
    [tenantId, email],
  );
  return r.rows[0];
}

/**
 * A user provisioned by an identity event. Only the profile fields the event carried (not undefined) are
 * stamped with its time, so an older event may still fill the others: no e-mail yet is stored as "".
 */
export async function insertIdpUser(
  db: Queryable,
  u: { id: string; tenantId: string; email?: string; displayName?: string | null; status: UserStatus; idpUserId: string; eventAt: Date; statusEvent: boolean },
): Promise<UserRow> {
  const at = u.eventAt;
  // Only a status event (created, deactivated, reactivated, deleted) orders later status events: a user
  // provisioned by a profile-only user.updated has no status time yet, so an older deactivation delivered
  // after it still applies.
  const statusAt = u.statusEvent ? at : null;
  const hasEmail = u.email !== undefined;
  const hasName = u.displayName !== undefined;
  const r = await db.query<UserRow>(
    `INSERT INTO users (id, tenant_id, email, display_name, role, status, idp_user_id, last_event_at, profile_event_at, email_event_at, display_name_event_at)
     VALUES ($1, $2, $3, $4, 'member', $5, $6, $7, $8, $9, $10) RETURNING ${COLUMNS}`,
    [u.id, u.tenantId, u.email ?? "", u.displayName ?? null, u.status, u.idpUserId, statusAt, hasEmail || hasName ? at : null, hasEmail ? at : null, hasName ? at : null],
  );
  return r.rows[0]!;
}

export async function linkIdpUser(db: Queryable, userId: string, idpUserId: string): Promise<void> {
  await db.query("UPDATE users SET idp_user_id = $2, updated_at = now() WHERE id = $1", [userId, idpUserId]);
}

/** Writes the given profile fields (undefined: left alone), each stamped with the event's time. */
export async function updateProfile(db: Queryable, userId: string, p: { email?: string; displayName?: string | null; eventAt: Date }): Promise<void> {
  await db.query(
    `UPDATE users SET email = CASE WHEN $2::boolean THEN $3::text ELSE email END,
            email_event_at = CASE WHEN $2::boolean THEN $6::timestamptz ELSE email_event_at END,
            display_name = CASE WHEN $4::boolean THEN $5::text ELSE display_name END,
            display_name_event_at = CASE WHEN $4::boolean THEN $6::timestamptz ELSE display_name_event_at END,
            profile_event_at = GREATEST(profile_event_at, $6::timestamptz), updated_at = now()
      WHERE id = $1`,
    [userId, p.email !== undefined, p.email ?? null, p.displayName !== undefined, p.displayName ?? null, p.eventAt],
  );
}

export async function setStatus(db: Queryable, userId: string, status: UserStatus, eventAt: Date): Promise<void> {
  await db.query("UPDATE users SET status = $2, last_event_at = GREATEST(last_event_at, $3), updated_at = now() WHERE id = $1", [userId, status, eventAt]);
}
