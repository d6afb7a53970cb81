// Group A policies: list and create (the rest of the policy API lives here too as it grows).
import type Router from "@koa/router";
import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "../../openapi/zod.js";
import { addRoute } from "../../route.js";
import type { AppState } from "../../state.js";
import type { Deps } from "../../deps.js";
import { PolicyA, PolicyCreate, policyA } from "../policy-schemas.js";
import { existingAgentIds, getPolicy, insertPolicy, listPolicies } from "../../../stores/postgres/policies-repo.js";
import { newId } from "../../../domain/ids.js";
import { notFound } from "../../../errors/app-error.js";
import { appendAudit } from "../../../stores/postgres/audit-repo.js";
import { recordChange } from "../../../stores/postgres/sync-changes.js";
import { actorOf } from "../../actor.js";
import { rewriteAgentPolicyKeys } from "../../../domain/policy-links.js";

export function registerPolicyRoutesA(router: Router<AppState>, registry: OpenAPIRegistry, deps: Deps): void {
  addRoute(router, registry, {
    method: "get",
    path: "/v1/policies",
    summary: "List governance policies",
    scope: "policies:read",
    query: z.object({
      status: z.enum(["active", "disabled"]).optional(),
      agent_id: z.string().max(64).optional(),
    }),
    responses: { 200: z.object({ data: z.array(PolicyA) }).openapi("PolicyList") },
    handler: async (_ctx, { query, principal }) => {
      const rows = await listPolicies(deps.db, principal.tenantId, { status: query.status, agentId: query.agent_id });
      return { status: 200, body: { data: rows.map(policyA) } };
    },
  });

  addRoute(router, registry, {
    method: "post",
    path: "/v1/policies",
    summary: "Create a governance policy",
    scope: "policies:write",
    body: PolicyCreate,
    responses: { 201: PolicyA },
    handler: async (ctx, { body, principal }) => {
      const id = newId("pol");
      const agents = [...new Set(body.agents)];
      await deps.db.tx(async (c) => {
        const known = await existingAgentIds(c, principal.tenantId, agents);
        const missing = agents.filter((a) => !known.has(a));
        if (missing.length > 0) throw notFound(`agent ${missing.join(", ")}`);
        await insertPolicy(c, {
          id,
          tenant_id: principal.tenantId,
          name: body.name,
          description: body.description ?? null,
          status: body.status,
          action: body.action,
          priority: body.priority,
          conditions: body.conditions,
          agents,
        });
        await rewriteAgentPolicyKeys(c, principal.tenantId, agents, principal.userId);
        await appendAudit(c, { ...actorOf(ctx, principal), action: "policy.create", targetType: "policy", targetId: id, details: { name: body.name } });
        await recordChange(c, principal.tenantId, "policy", id);
      });
      const row = await getPolicy(deps.db, principal.tenantId, id);
      if (!row) throw notFound("policy");
      return { status: 201, body: policyA(row) };
    },
  });
}
