// Group A policies (DESIGN.md §6): list (status, agent_id filters), create, read, update (top-level merge,
// conditions replaced whole), delete. Every write keeps policy.agents and the agents' configYaml `policies`
// key in agreement, is audited, and is pushed to the sidecars through Sync.
import { isDeepStrictEqual } from "node:util";
import type Router from "@koa/router";
import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { Queryable } from "../../../stores/postgres/db.js";
import { z } from "../../openapi/zod.js";
import { addRoute } from "../../route.js";
import type { AppState } from "../../state.js";
import type { Deps } from "../../deps.js";
import { PolicyA, PolicyCreate, PolicyPatch, policyA } from "../policy-schemas.js";
import {
  deletePolicy, existingAgentIds, getPolicy, insertPolicy, listPolicies, updatePolicy, type PolicyPatch as PolicyRowPatch,
} from "../../../stores/postgres/policies-repo.js";
import { getAgent } from "../../../stores/postgres/agents-repo.js";
import { newId } from "../../../domain/ids.js";
import { notFound } from "../../../errors/app-error.js";
import { appendAudit } from "../../../stores/postgres/audit-repo.js";
import { recordChange } from "../../../stores/postgres/sync-changes.js";
import { actorOf } from "../../actor.js";
import { lockTenantGovernance, rewriteAgentPolicyKeys, setPolicyAgents } from "../../../domain/policy-links.js";

const PolicyIdParams = z.object({ policy_id: z.string().min(1).max(200).openapi({ example: "pol_01JD3Z6Q4W8X9Y0Z1A2B3C4D5E" }) });

async function checkAgents(c: Queryable, tenantId: string, agents: readonly string[]): Promise<void> {
  const known = await existingAgentIds(c, tenantId, agents);
  const missing = agents.filter((a) => !known.has(a));
  if (missing.length > 0) throw notFound(`agent ${missing.join(", ")}`);
}

export function registerPolicyRoutesA(router: Router<AppState>, registry: OpenAPIRegistry, deps: Deps): void {
  addRoute(router, registry, {
    method: "get",
    path: "/v1/policies",
    summary: "List governance policies (newest first); agent_id = the policies that apply to that agent (linked or tenant-wide)",
    scope: "policies:read",
    query: z.object({
      status: z.enum(["active", "disabled"]).optional(),
      agent_id: z.string().min(1).max(200).optional(),
    }),
    responses: { 200: z.object({ data: z.array(PolicyA) }).openapi("PolicyList") },
    handler: async (_ctx, { query, principal }) => {
      if (query.agent_id !== undefined && !(await getAgent(deps.db, principal.tenantId, query.agent_id))) throw notFound(`agent ${query.agent_id}`);
      const rows = await listPolicies(deps.db, principal.tenantId, { status: query.status, agentId: query.agent_id });
      return { status: 200, body: { data: rows.map(policyA) } };
    },
  });

  addRoute(router, registry, {
    method: "post",
    path: "/v1/policies",
    summary: "Create a governance policy (agents empty = every agent of the tenant)",
    scope: "policies:write",
    body: PolicyCreate,
    responses: { 201: PolicyA },
    handler: async (ctx, { body, principal }) => {
      const id = newId("pol");
      const agents = [...new Set(body.agents)];
      const tenantId = principal.tenantId;
      await deps.db.tx(async (c) => {
        await lockTenantGovernance(c, tenantId);
        await checkAgents(c, tenantId, agents);
        await insertPolicy(c, {
          id,
          tenant_id: tenantId,
          name: body.name,
          description: body.description ?? null,
          status: body.status,
          action: body.action,
          priority: body.priority,
          conditions: body.conditions,
          agents,
        });
        await rewriteAgentPolicyKeys(c, tenantId, agents, principal.userId);
        await appendAudit(c, { ...actorOf(ctx, principal), action: "policy.create", targetType: "policy", targetId: id, details: { name: body.name, action: body.action, agents } });
        await recordChange(c, tenantId, "policy", id);
      });
      const row = await getPolicy(deps.db, tenantId, id);
      if (!row) throw notFound(`policy ${id}`);
      return { status: 201, body: policyA(row) };
    },
  });

  addRoute(router, registry, {
    method: "get",
    path: "/v1/policies/{policy_id}",
    summary: "One governance policy",
    scope: "policies:read",
    params: PolicyIdParams,
    responses: { 200: PolicyA },
    handler: async (_ctx, { params, principal }) => {
      const row = await getPolicy(deps.db, principal.tenantId, params.policy_id);
      if (!row) throw notFound(`policy ${params.policy_id}`);
      return { status: 200, body: policyA(row) };
    },
  });

  addRoute(router, registry, {
    method: "patch",
    path: "/v1/policies/{policy_id}",
    summary: "Update a policy: top-level fields are merged, conditions replaced whole; leaving an agent-scoped policy with no agent is a 409",
    scope: "policies:write",
    params: PolicyIdParams,
    body: PolicyPatch,
    responses: { 200: PolicyA },
    handler: async (ctx, { params, body, principal }) => {
      const tenantId = principal.tenantId;
      const id = params.policy_id;
      await deps.db.tx(async (c) => {
        await lockTenantGovernance(c, tenantId);
        const before = await getPolicy(c, tenantId, id);
        if (!before) throw notFound(`policy ${id}`);
        // Only what differs from the stored policy is written (as for agents): a PATCH that changes
        // nothing keeps updated_at, appends no audit entry and sends the sidecars nothing.
        let linksChanged: string[] = [];
        if (body.agents !== undefined) {
          const agents = [...new Set(body.agents)];
          await checkAgents(c, tenantId, agents);
          linksChanged = await setPolicyAgents(c, tenantId, id, before.agents, agents, principal.userId);
        }
        const patch: PolicyRowPatch = {};
        if (body.name !== undefined && body.name !== before.name) patch.name = body.name;
        if (body.description !== undefined && body.description !== before.description) patch.description = body.description;
        if (body.status !== undefined && body.status !== before.status) patch.status = body.status;
        if (body.action !== undefined && body.action !== before.action) patch.action = body.action;
        if (body.priority !== undefined && body.priority !== before.priority) patch.priority = body.priority;
        if (body.conditions !== undefined && !isDeepStrictEqual(JSON.parse(JSON.stringify(body.conditions)), before.conditions)) patch.conditions = body.conditions;
        const changed = [...Object.keys(patch), ...(linksChanged.length > 0 ? ["agents"] : [])];
        if (changed.length === 0) return;
        await updatePolicy(c, tenantId, id, patch);
        await appendAudit(c, { ...actorOf(ctx, principal), action: "policy.update", targetType: "policy", targetId: id, details: { changed } });
        await recordChange(c, tenantId, "policy", id);
      });
      const row = await getPolicy(deps.db, tenantId, id);
      if (!row) throw notFound(`policy ${id}`);
      return { status: 200, body: policyA(row) };
    },
  });

  addRoute(router, registry, {
    method: "delete",
    path: "/v1/policies/{policy_id}",
    summary: "Delete a policy (its agents' configYaml policies key is rewritten)",
    scope: "policies:write",
    params: PolicyIdParams,
    responses: { 204: null },
    handler: async (ctx, { params, principal }) => {
      const tenantId = principal.tenantId;
      const id = params.policy_id;
      await deps.db.tx(async (c) => {
        await lockTenantGovernance(c, tenantId);
        const before = await getPolicy(c, tenantId, id);
        if (!before) throw notFound(`policy ${id}`);
        await deletePolicy(c, tenantId, id);
        await rewriteAgentPolicyKeys(c, tenantId, before.agents, principal.userId);
        await appendAudit(c, { ...actorOf(ctx, principal), action: "policy.delete", targetType: "policy", targetId: id, details: { name: before.name } });
        await recordChange(c, tenantId, "policy", id);
      });
      return { status: 204 };
    },
  });
}
