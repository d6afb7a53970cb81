// Group B API keys: GET /api/keys (metadata only), POST /api/keys (the key string is returned once, here),
// DELETE /api/keys/:id (the key is refused at once by the control plane; the Sync delta removes it from
// every sidecar).
import type Router from "@koa/router";
import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "../../openapi/zod.js";
import { Timestamp, iso, intParam, offsetParam } from "../../openapi/common-schemas.js";
import { addRoute } from "../../route.js";
import type { AppState } from "../../state.js";
import type { Deps } from "../../deps.js";
import { KEY_SCOPES, generateApiKey, hashApiKey, keyPrefix } from "../../../domain/api-keys.js";
import { newId } from "../../../domain/ids.js";
import { conflict, forbidden, notFound } from "../../../errors/app-error.js";
import { insertKey } from "../../../stores/postgres/identity-repo.js";
import { appendAudit } from "../../../stores/postgres/audit-repo.js";
import { recordChange } from "../../../stores/postgres/sync-changes.js";
import { deleteKey, listKeys } from "../../../stores/postgres/keys-repo.js";
import { findLiveUser } from "../../../stores/postgres/users-repo.js";
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

export const KeyRecord = z
  .object({
    id: z.string(),
    name: z.string(),
    scope: z.enum(KEY_SCOPES),
    prefix: z.string().openapi({ description: "the first 12 characters of the key; the only key text shown after creation" }),
    createdBy: z.string().openapi({ description: "user id the key acts for" }),
    createdByEmail: z.string(),
    lastUsedAt: Timestamp.nullable().openapi({ description: "null when never used; updated at most once a minute" }),
    createdAt: Timestamp,
  })
  .openapi("ApiKey");

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
        const u = await findLiveUser(deps.db, principal.tenantId, { userId: body.userId });
        if (!u) throw notFound("user");
        if (u.status !== "active") throw conflict("the user is deactivated; a key issued to them would not work");
        owner = u.id;
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

  addRoute(router, registry, {
    method: "get",
    path: "/api/keys",
    summary: "List API keys (metadata only, never the key string)",
    scope: "keys:read",
    query: z.object({ limit: intParam(50, 1, 500), offset: offsetParam(), scope: z.enum(KEY_SCOPES).optional() }),
    responses: { 200: z.object({ data: z.array(KeyRecord), total: z.number().int(), limit: z.number().int(), offset: z.number().int() }) },
    handler: async (_ctx, { query, principal }) => {
      const { rows, total } = await listKeys(deps.db, principal.tenantId, query);
      return {
        status: 200,
        body: {
          data: rows.map((k) => ({
            id: k.id,
            name: k.name,
            scope: k.scope,
            prefix: k.prefix,
            createdBy: k.created_by,
            createdByEmail: k.created_by_email,
            lastUsedAt: k.last_used_at ? iso(k.last_used_at) : null,
            createdAt: iso(k.created_at),
          })),
          total,
          limit: query.limit,
          offset: query.offset,
        },
      };
    },
  });

  addRoute(router, registry, {
    method: "delete",
    path: "/api/keys/{id}",
    summary: "Delete an API key (401 for it from the next request on, here and at every sidecar)",
    scope: "keys:write",
    params: z.object({ id: z.string().min(1).max(64) }),
    responses: { 200: z.object({ success: z.literal(true) }) },
    handler: async (ctx, { params, principal }) => {
      // The answer waits until this replica's sidecars have been sent the removal (middleware/sync-delivery.ts).
      await deps.db.tx(async (c) => {
        const k = await deleteKey(c, principal.tenantId, params.id);
        if (!k) throw notFound("API key");
        await appendAudit(c, { ...actorOf(ctx, principal), action: "key.delete", targetType: "api_key", targetId: k.id, details: { name: k.name, scope: k.scope, owner: k.created_by } });
        await recordChange(c, principal.tenantId, "key", k.id);
      });
      return { status: 200, body: { success: true } };
    },
  });
}
