// Group B users: GET /api/users — the tenant's users (provisioned by identity events, plus the
// bootstrap or CLI admin), so that admins can see who exists and issue keys or add members.
import type Router from "@koa/router";
import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "../../openapi/zod.js";
import { Timestamp, iso, intParam, offsetParam } from "../../openapi/common-schemas.js";
import { addRoute } from "../../route.js";
import type { AppState } from "../../state.js";
import type { Deps } from "../../deps.js";
import { listUsers, type UserRow } from "../../../stores/postgres/users-repo.js";

const UserStatus = z.enum(["active", "deactivated", "deleted"]);

export const User = z
  .object({
    id: z.string(),
    email: z.string(),
    displayName: z.string().nullable(),
    role: z.enum(["admin", "member"]),
    status: UserStatus,
    idpUserId: z.string().nullable(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .openapi("User");

export const userView = (u: UserRow) => ({
  id: u.id,
  email: u.email,
  displayName: u.display_name,
  role: u.role,
  status: u.status,
  idpUserId: u.idp_user_id,
  createdAt: iso(u.created_at),
  updatedAt: iso(u.updated_at),
});

export function registerUserRoutes(router: Router<AppState>, registry: OpenAPIRegistry, deps: Deps): void {
  addRoute(router, registry, {
    method: "get",
    path: "/api/users",
    summary: "List the tenant's users, newest first",
    scope: "teams:read",
    query: z.object({ limit: intParam(50, 1, 500), offset: offsetParam(), status: UserStatus.optional() }),
    responses: { 200: z.object({ data: z.array(User), total: z.number().int(), limit: z.number().int(), offset: z.number().int() }) },
    handler: async (_ctx, { query, principal }) => {
      const { rows, total } = await listUsers(deps.db, principal.tenantId, query);
      return { status: 200, body: { data: rows.map(userView), total, limit: query.limit, offset: query.offset } };
    },
  });
}
