// The audit log: one row per write (never a key string or prompt text).
import type { Queryable } from "./db.js";
import { newId } from "../../domain/ids.js";

export interface AuditEntry {
  tenantId: string;
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
