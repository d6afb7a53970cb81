// Group B API keys: POST /api/keys (the key string is returned once, here).
import type Router from "@koa/router";
import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "../../openapi/zod.js";
import { Timestamp, iso } from "../../openapi/common-schemas.js";
import { addRoute } from "../../route.js";
import type { AppState } from "../../state.js";
import type { Deps } from "../../deps.js";
import { KEY_SCOPES, generateApiKey, hashApiKey, keyPrefix } from "../../../domain/api-keys.js";
import { newId } from "../../../domain/ids.js";
import { forbidden, notFound } from "../../../errors/app-error.js";
import { insertKey } from "../../../stores/postgres/identity-repo.js";
import { appendAudit } from "../../../stores/postgres/audit-repo.js";
import { recordChange } from "../../../stores/postgres/sync-changes.js";
import { actorOf } from "../../actor.js";

export const KeyCreated = z
  .object({
    id: z.string(),
    name: z.string(),
    scope: z.enum(KEY_SCOPES),
    prefix: z.string(),
    key: z.string(),
    createdBy: z.string(),
    createdAt: Timestamp,
  })
  .openapi("ApiKeyCreated");

export function registerKeyRoutes(router: Router<AppState>, registry: OpenAPIRegistry, deps: Deps): void {
  addRoute(router, registry, {
    method: "post",
    path: "/api/keys",
    summary: "Create an API key (the full key is returned once)",
    scope: "keys:write",
    body: z
      .object({
        name: z.string().trim().min(1).max(200),
        scope: z.enum(KEY_SCOPES),
        userId: z.string().min(1).max(64).optional().openapi({ description: "tenant admins only: issue the key to this user" }),
      })
      .strict()
      .openapi("ApiKeyCreate"),
    responses: { 201: z.object({ data: KeyCreated }) },
    handler: async (ctx, { body, principal }) => {
      let owner = principal.userId;
      if (body.userId !== undefined && body.userId !== principal.userId) {
        if (principal.userRole !== "admin") throw forbidden("only tenant admins may issue keys to other users");
        const u = await deps.db.query<{ id: string }>("SELECT id FROM users WHERE tenant_id = $1 AND id = $2 AND status = 'active'", [principal.tenantId, body.userId]);
        if (u.rowCount === 0) throw notFound("user");
        owner = body.userId;
      }
      const key = generateApiKey(body.scope);
      const id = newId("key");
      const created = await deps.db.tx(async (c) => {
        const r = await insertKey(c, { id, tenantId: principal.tenantId, name: body.name, scope: body.scope, prefix: keyPrefix(key), keyHash: hashApiKey(key), createdBy: owner });
        await appendAudit(c, { ...actorOf(ctx, principal), action: "key.create", targetType: "api_key", targetId: id, details: { name: body.name, scope: body.scope, owner } });
        await recordChange(c, principal.tenantId, "key", id);
        return r;
      });
      return {
        status: 201,
        body: { data: { id, name: body.name, scope: body.scope, prefix: keyPrefix(key), key, createdBy: owner, createdAt: iso(created.created_at) } },
      };
    },
  });
}
