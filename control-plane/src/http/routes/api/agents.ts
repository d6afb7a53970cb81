// Group B agents: list (offset), read (with configYaml), create, update (any writable field; a new
// configYaml appends a deployment record), observed tools, deployment history.
import type Router from "@koa/router";
import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "../../openapi/zod.js";
import { intParam, offsetParam } from "../../openapi/common-schemas.js";
import { addRoute } from "../../route.js";
import type { AppState } from "../../state.js";
import type { Deps } from "../../deps.js";
import {
  AgentB, AgentCreatedB, AgentWithConfigB, DeploymentB, ToolB, agentB, agentCreatedB, agentWithConfigB, deploymentB, listB, toolB,
} from "../agent-views.js";
import { AGENT_STATUSES } from "../../../domain/agent-status.js";
import { notFound } from "../../../errors/app-error.js";
import { getAgent, listAgentsOffset, listDeployments, listTools } from "../../../stores/postgres/agents-repo.js";
import type { Queryable } from "../../../stores/postgres/db.js";
import { createAgent, updateAgentFields } from "../agent-writes.js";

const Name = z.string().trim().min(1).max(200);
const Short = z.string().max(200);
const Description = z.string().max(4000);
const ConfigYaml = z.string().max(256 * 1024).openapi({
  description:
    "Full YAML configuration: rate_limit, budget_limit_daily, pii_detection, policies; other keys are kept, except that a top-level key that looks like a misspelling of one of these (budget_limit_dayly, Rate_Limit, policy) is a 400",
});

export const AgentCreateBody = z
  .object({
    name: Name,
    modelProvider: Short.optional(),
    modelName: Short.optional(),
    environment: Short.optional(),
    description: Description.nullable().optional(),
    configYaml: ConfigYaml.optional(),
  })
  .strict()
  .openapi("AgentCreate");

export const AgentPatchBody = z
  .object({
    name: Name.optional(),
    modelProvider: Short.optional(),
    modelName: Short.optional(),
    environment: Short.optional(),
    description: Description.nullable().optional(),
    configYaml: ConfigYaml.optional(),
    status: z.enum(AGENT_STATUSES).optional(),
  })
  .strict()
  .openapi("AgentPatch");

const IdParams = z.object({ id: z.string().min(1).max(200).openapi({ example: "agt_01JD3Z6Q4W8X9Y0Z1A2B3C4D5E" }) });

async function mustExist(db: Queryable, tenantId: string, id: string): Promise<void> {
  if (!(await getAgent(db, tenantId, id))) throw notFound(`agent ${id}`);
}

export function registerAgentRoutesB(router: Router<AppState>, registry: OpenAPIRegistry, deps: Deps): void {
  addRoute(router, registry, {
    method: "get",
    path: "/api/agents",
    summary: "List agents (newest first; configYaml only in the single-agent read)",
    scope: "agents:read",
    query: z.object({ limit: intParam(50, 1, 500), offset: offsetParam(), environment: Short.optional() }),
    responses: { 200: listB(AgentB, "AgentListB") },
    handler: async (_ctx, { query, principal }) => {
      const { rows, total } = await listAgentsOffset(deps.db, principal.tenantId, query);
      return { status: 200, body: { data: rows.map(agentB), total, limit: query.limit, offset: query.offset } };
    },
  });

  addRoute(router, registry, {
    method: "get",
    path: "/api/agents/{id}",
    summary: "One agent, with its configYaml",
    scope: "agents:read",
    params: IdParams,
    responses: { 200: z.object({ data: AgentWithConfigB }) },
    handler: async (_ctx, { params, principal }) => {
      const agent = await getAgent(deps.db, principal.tenantId, params.id);
      if (!agent) throw notFound(`agent ${params.id}`);
      return { status: 200, body: { data: agentWithConfigB(agent) } };
    },
  });

  addRoute(router, registry, {
    method: "post",
    path: "/api/agents",
    summary: "Register an agent (name unique in the tenant; writes deployment history version 1)",
    scope: "agents:write",
    body: AgentCreateBody,
    responses: { 201: z.object({ data: AgentCreatedB }) },
    handler: async (ctx, { body, principal }) => {
      const row = await createAgent(deps.db, ctx, principal, body);
      return { status: 201, body: { data: agentCreatedB(row) } };
    },
  });

  addRoute(router, registry, {
    method: "patch",
    path: "/api/agents/{id}",
    summary: "Update an agent (any writable field; a new configYaml appends a deployment record; status as in PATCH /v1/agents)",
    scope: "agents:write",
    params: IdParams,
    body: AgentPatchBody,
    responses: { 200: z.object({ data: AgentWithConfigB }) },
    handler: async (ctx, { params, body, principal }) => {
      const row = await updateAgentFields(deps.db, ctx, principal, params.id, body);
      return { status: 200, body: { data: agentWithConfigB(row) } };
    },
  });

  addRoute(router, registry, {
    method: "get",
    path: "/api/agents/{id}/tools",
    summary: "Tools the agent called through the proxy, with call counts and last call time (most recently called first)",
    scope: "agents:read",
    params: IdParams,
    query: z.object({ limit: intParam(50, 1, 500), offset: offsetParam() }),
    responses: { 200: listB(ToolB, "ToolList") },
    handler: async (_ctx, { params, query, principal }) => {
      await mustExist(deps.db, principal.tenantId, params.id);
      const { rows, total } = await listTools(deps.db, principal.tenantId, params.id, query);
      return { status: 200, body: { data: rows.map(toolB), total, limit: query.limit, offset: query.offset } };
    },
  });

  addRoute(router, registry, {
    method: "get",
    path: "/api/agents/{id}/history",
    summary: "Deployment history (configYaml versions), most recent first",
    scope: "agents:read",
    params: IdParams,
    query: z.object({ limit: intParam(20, 1, 500), offset: offsetParam() }),
    responses: { 200: listB(DeploymentB, "DeploymentList") },
    handler: async (_ctx, { params, query, principal }) => {
      await mustExist(deps.db, principal.tenantId, params.id);
      const { rows, total } = await listDeployments(deps.db, principal.tenantId, params.id, query);
      return { status: 200, body: { data: rows.map(deploymentB), total, limit: query.limit, offset: query.offset } };
    },
  });
}
