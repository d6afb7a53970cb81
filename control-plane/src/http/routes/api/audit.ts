// Group B audit log: GET /api/audit (audit:read) — every write of every endpoint and every identity
// event of the tenant, newest first. Entries never carry a key string or prompt text.
import type Router from "@koa/router";
import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "../../openapi/zod.js";
import { Timestamp, iso, intParam, offsetParam } from "../../openapi/common-schemas.js";
import { addRoute } from "../../route.js";
import type { AppState } from "../../state.js";
import type { Deps } from "../../deps.js";
import { listAudit } from "../../../stores/postgres/audit-repo.js";

export const AuditEntry = z
  .object({
    id: z.string(),
    action: z.string().openapi({ example: "key.delete" }),
    actorUserId: z.string().nullable().openapi({ description: "the user the key acts for; null for identity events" }),
    actorKeyId: z.string().nullable(),
    targetType: z.string(),
    targetId: z.string().nullable(),
    requestId: z.string().nullable(),
    createdAt: Timestamp,
    details: z.record(z.string(), z.unknown()),
  })
  .openapi("AuditEntry");

const Filter = z.string().min(1).max(200).optional();

export function registerAuditRoutes(router: Router<AppState>, registry: OpenAPIRegistry, deps: Deps): void {
  addRoute(router, registry, {
    method: "get",
    path: "/api/audit",
    summary: "The audit log, newest first",
    scope: "audit:read",
    query: z.object({
      limit: intParam(50, 1, 500),
      offset: offsetParam(),
      action: Filter,
      targetType: Filter,
      targetId: Filter,
      actorUserId: Filter,
    }),
    responses: { 200: z.object({ data: z.array(AuditEntry), total: z.number().int(), limit: z.number().int(), offset: z.number().int() }) },
    handler: async (_ctx, { query, principal }) => {
      const { rows, total } = await listAudit(deps.db, principal.tenantId, query);
      return {
        status: 200,
        body: {
          data: rows.map((a) => ({
            id: a.id,
            action: a.action,
            actorUserId: a.actor_user_id,
            actorKeyId: a.actor_key_id,
            targetType: a.target_type,
            targetId: a.target_id,
            requestId: a.request_id,
            createdAt: iso(a.created_at),
            details: a.details,
          })),
          total,
          limit: query.limit,
          offset: query.offset,
        },
      };
    },
  });
}
