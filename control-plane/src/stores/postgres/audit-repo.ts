// The audit log: one row per write (never a key string or prompt text).
import type { Queryable } from "./db.js";
import { newId } from "../../domain/ids.js";

export interface AuditEntry {
  /** null only for identity events of an organization no tenant maps to (visible to no tenant). */
  tenantId: string | null;
  action: string;
  actorUserId: string | null;
  actorKeyId: string | null;
  targetType: string;
  targetId: string | null;
  requestId: string | null;
  details?: Record<string, unknown>;
}

export async function appendAudit(db: Queryable, e: AuditEntry): Promise<void> {
  await db.query(
    `INSERT INTO audit_log (id, tenant_id, action, actor_user_id, actor_key_id, target_type, target_id, request_id, details)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [newId("aud"), e.tenantId, e.action, e.actorUserId, e.actorKeyId, e.targetType, e.targetId, e.requestId, JSON.stringify(e.details ?? {})],
  );
}

export interface AuditRow {
  id: string;
  action: string;
  actor_user_id: string | null;
  actor_key_id: string | null;
  target_type: string;
  target_id: string | null;
  request_id: string | null;
  details: Record<string, unknown>;
  created_at: Date;
}

export interface AuditQuery {
  limit: number;
  offset: number;
  action?: string;
  targetType?: string;
  targetId?: string;
  actorUserId?: string;
}

/** A tenant's audit log, newest first (created_at, then id: ids are monotonic ULIDs). */
export async function listAudit(db: Queryable, tenantId: string, q: AuditQuery): Promise<{ rows: AuditRow[]; total: number }> {
  const params: unknown[] = [tenantId];
  const where = ["tenant_id = $1"];
  const add = (column: string, v: string | undefined) => {
    if (v === undefined) return;
    params.push(v);
    where.push(`${column} = $${params.length}`);
  };
  add("action", q.action);
  add("target_type", q.targetType);
  add("target_id", q.targetId);
  add("actor_user_id", q.actorUserId);
  const cond = where.join(" AND ");
  const [rows, total] = await Promise.all([
    db.query<AuditRow>(
      `SELECT id, action, actor_user_id, actor_key_id, target_type, target_id, request_id, details, created_at
         FROM audit_log WHERE ${cond} ORDER BY created_at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, q.limit, q.offset],
    ),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM audit_log WHERE ${cond}`, params),
  ]);
  return { rows: rows.rows, total: total.rows[0]?.n ?? 0 };
}
