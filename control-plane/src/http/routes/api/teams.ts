// Group B teams: GET/POST /api/teams, GET/POST/DELETE /api/teams/:id/members, PUT /api/teams/:id/scopes.
// A member's effective scopes are the union of its teams' scopes (DESIGN.md §3), read on every request,
// so a change here takes effect on the member's next request. Non-admins cannot escalate through teams:
// they may only grant scopes they hold and only add members to teams whose scopes they hold.
import type Router from "@koa/router";
import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "../../openapi/zod.js";
import { Timestamp, iso, intParam, offsetParam } from "../../openapi/common-schemas.js";
import { addRoute } from "../../route.js";
import type { AppState } from "../../state.js";
import type { Deps } from "../../deps.js";
import { actorOf } from "../../actor.js";
import { newId } from "../../../domain/ids.js";
import { TEAM_SCOPES, type Principal, type TeamScope } from "../../../domain/permissions.js";
import { conflict, forbidden, notFound } from "../../../errors/app-error.js";
import { appendAudit } from "../../../stores/postgres/audit-repo.js";
import {
  deleteMember, findMemberByEmail, getTeam, insertMember, insertTeam, listMembers, listTeams, lockTeam, setTeamScopes, type TeamRow,
} from "../../../stores/postgres/teams-repo.js";
import { findLiveUser } from "../../../stores/postgres/users-repo.js";

const TeamRole = z.enum(["admin", "member"]);

export const Team = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    memberCount: z.number().int(),
    scopes: z.array(z.enum(TEAM_SCOPES)),
    createdAt: Timestamp,
  })
  .openapi("Team");

export const TeamMember = z
  .object({ userId: z.string(), email: z.string(), role: TeamRole, joinedAt: Timestamp })
  .openapi("TeamMember");

const teamView = (t: TeamRow) => ({
  id: t.id,
  name: t.name,
  description: t.description,
  memberCount: t.member_count,
  scopes: t.scopes as TeamScope[],
  createdAt: iso(t.created_at),
});

const TeamParams = z.object({ id: z.string().min(1).max(64) });
const UserId = z.string().min(1).max(64);
// Only a lookup key (case-insensitive), so any stored address must be usable: users are created with
// addresses no e-mail syntax check has seen (the bootstrap admin's default is admin@localhost).
const Email = z.string().min(1).max(320);

/** Exactly one of userId and email names the user. */
const oneUser = (b: { userId?: string; email?: string }) => (b.userId === undefined) !== (b.email === undefined);
const ONE_USER = { message: "give exactly one of userId and email", path: ["userId"] };

const MemberAdd = z
  .object({ userId: UserId.optional(), email: Email.optional(), role: TeamRole.optional() })
  .strict()
  .refine(oneUser, ONE_USER)
  .openapi("TeamMemberAdd");

const MemberRemove = z.object({ userId: UserId.optional(), email: Email.optional() }).strict().refine(oneUser, ONE_USER).openapi("TeamMemberRemove");

function assertHolds(p: Principal, scopes: readonly string[], what: string): void {
  if (p.userRole === "admin") return;
  const missing = scopes.filter((s) => !p.teamScopes.has(s as TeamScope));
  if (missing.length > 0) throw forbidden(`${what}: you do not hold ${missing.join(", ")}`);
}

export function registerTeamRoutes(router: Router<AppState>, registry: OpenAPIRegistry, deps: Deps): void {
  addRoute(router, registry, {
    method: "get",
    path: "/api/teams",
    summary: "List teams",
    scope: "teams:read",
    query: z.object({ limit: intParam(50, 1, 500), offset: offsetParam() }),
    responses: { 200: z.object({ data: z.array(Team), total: z.number().int(), limit: z.number().int(), offset: z.number().int() }) },
    handler: async (_ctx, { query, principal }) => {
      const { rows, total } = await listTeams(deps.db, principal.tenantId, query);
      return { status: 200, body: { data: rows.map(teamView), total, limit: query.limit, offset: query.offset } };
    },
  });

  addRoute(router, registry, {
    method: "post",
    path: "/api/teams",
    summary: "Create a team (no members, no scopes)",
    scope: "teams:write",
    body: z
      .object({ name: z.string().trim().min(1).max(200), description: z.string().max(4000).nullable().optional() })
      .strict()
      .openapi("TeamCreate"),
    responses: { 201: z.object({ data: Team }) },
    handler: async (ctx, { body, principal }) => {
      const row = await deps.db.tx(async (c) => {
        const t = await insertTeam(c, { id: newId("team"), tenantId: principal.tenantId, name: body.name, description: body.description ?? null });
        if (!t) throw conflict(`a team named "${body.name}" already exists`);
        await appendAudit(c, { ...actorOf(ctx, principal), action: "team.create", targetType: "team", targetId: t.id, details: { name: t.name } });
        return t;
      });
      return { status: 201, body: { data: teamView(row) } };
    },
  });

  addRoute(router, registry, {
    method: "get",
    path: "/api/teams/{id}/members",
    summary: "List a team's members",
    scope: "teams:read",
    params: TeamParams,
    query: z.object({ limit: intParam(50, 1, 500), offset: offsetParam() }),
    responses: { 200: z.object({ data: z.array(TeamMember), total: z.number().int(), limit: z.number().int(), offset: z.number().int() }) },
    handler: async (_ctx, { params, query, principal }) => {
      const team = await getTeam(deps.db, principal.tenantId, params.id);
      if (!team) throw notFound("team");
      const { rows, total } = await listMembers(deps.db, team.id, query);
      return {
        status: 200,
        body: { data: rows.map((m) => ({ userId: m.user_id, email: m.email, role: m.role, joinedAt: iso(m.joined_at) })), total, limit: query.limit, offset: query.offset },
      };
    },
  });

  addRoute(router, registry, {
    method: "post",
    path: "/api/teams/{id}/members",
    summary: "Add a member, by userId or by email (role admin or member, default member)",
    scope: "teams:write",
    params: TeamParams,
    body: MemberAdd,
    responses: { 201: TeamMember },
    handler: async (ctx, { params, body, principal }) => {
      const member = await deps.db.tx(async (c) => {
        const team = await lockTeam(c, principal.tenantId, params.id);
        if (!team) throw notFound("team");
        const user = await findLiveUser(c, principal.tenantId, body.userId !== undefined ? { userId: body.userId } : { email: body.email });
        if (!user) throw notFound("user");
        assertHolds(principal, team.scopes, "you may only add members to teams whose scopes you hold");
        const role = body.role ?? "member";
        const added = await insertMember(c, { tenantId: principal.tenantId, teamId: team.id, userId: user.id, role });
        if (!added) throw conflict("the user is already a member of this team");
        await appendAudit(c, { ...actorOf(ctx, principal), action: "team.member.add", targetType: "team", targetId: team.id, details: { userId: user.id, role } });
        return { userId: user.id, email: user.email, role, joinedAt: iso(added.joined_at) };
      });
      return { status: 201, body: member };
    },
  });

  addRoute(router, registry, {
    method: "delete",
    path: "/api/teams/{id}/members",
    summary: "Remove a member (body {userId}, or {email})",
    scope: "teams:write",
    params: TeamParams,
    body: MemberRemove,
    responses: { 200: z.object({ success: z.literal(true) }) },
    handler: async (ctx, { params, body, principal }) => {
      await deps.db.tx(async (c) => {
        const team = await lockTeam(c, principal.tenantId, params.id);
        if (!team) throw notFound("team");
        // By e-mail: the member of this team with that address (the e-mail the member list shows).
        const userId = body.userId !== undefined ? (await findLiveUser(c, principal.tenantId, { userId: body.userId }))?.id : await findMemberByEmail(c, principal.tenantId, team.id, body.email ?? "");
        if (!userId || !(await deleteMember(c, principal.tenantId, team.id, userId))) throw notFound("team member");
        await appendAudit(c, { ...actorOf(ctx, principal), action: "team.member.remove", targetType: "team", targetId: team.id, details: { userId } });
      });
      return { status: 200, body: { success: true } };
    },
  });

  addRoute(router, registry, {
    method: "put",
    path: "/api/teams/{id}/scopes",
    summary: "Replace a team's scopes",
    scope: "teams:write",
    params: TeamParams,
    body: z.object({ scopes: z.array(z.enum(TEAM_SCOPES)).max(100) }).strict().openapi("TeamScopesSet"),
    responses: { 200: z.object({ data: Team }) },
    handler: async (ctx, { params, body, principal }) => {
      const scopes = TEAM_SCOPES.filter((s) => body.scopes.includes(s));
      const team = await deps.db.tx(async (c) => {
        const locked = await lockTeam(c, principal.tenantId, params.id);
        if (!locked) throw notFound("team");
        assertHolds(principal, scopes.filter((s) => !locked.scopes.includes(s)), "you may only grant scopes you hold");
        await setTeamScopes(c, principal.tenantId, locked.id, scopes);
        await appendAudit(c, { ...actorOf(ctx, principal), action: "team.scopes.set", targetType: "team", targetId: locked.id, details: { from: locked.scopes, to: scopes } });
        return (await getTeam(c, principal.tenantId, locked.id))!;
      });
      return { status: 200, body: { data: teamView(team) } };
    },
  });
}
