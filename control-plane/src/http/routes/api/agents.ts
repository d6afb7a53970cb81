// Group B agents: POST /api/agents.
import type Router from "@koa/router";
import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "../../openapi/zod.js";
import { addRoute } from "../../route.js";
import type { AppState } from "../../state.js";
import type { Deps } from "../../deps.js";
import { AgentCreatedB, agentCreatedB } from "../agent-views.js";
import { parseAgentConfig } from "../../../domain/agent-config.js";
import { newId } from "../../../domain/ids.js";
import { badRequest, conflict } from "../../../errors/app-error.js";
import { agentNameTaken, insertAgent, insertDeployment } from "../../../stores/postgres/agents-repo.js";
import { existingPolicyIds } from "../../../stores/postgres/policies-repo.js";
import { appendAudit } from "../../../stores/postgres/audit-repo.js";
import { recordChange } from "../../../stores/postgres/sync-changes.js";
import { actorOf } from "../../actor.js";

const Name = z.string().trim().min(1).max(200);
const Short = z.string().max(200);

export const AgentCreateBody = z
  .object({
    name: Name,
    modelProvider: Short.optional(),
    modelName: Short.optional(),
    environment: Short.optional(),
    description: z.string().max(4000).optional(),
    configYaml: z.string().max(256 * 1024).optional(),
  })
  .strict()
  .openapi("AgentCreate");

export function registerAgentRoutesB(router: Router<AppState>, registry: OpenAPIRegistry, deps: Deps): void {
  addRoute(router, registry, {
    method: "post",
    path: "/api/agents",
    summary: "Register an agent",
    scope: "agents:write",
    body: AgentCreateBody,
    responses: { 201: z.object({ data: AgentCreatedB }) },
    handler: async (ctx, { body, principal }) => {
      const configYaml = body.configYaml ?? "";
      const config = parseAgentConfig(configYaml);
      const row = await deps.db.tx(async (c) => {
        await c.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`agent-name:${principal.tenantId}`]);
        if (await agentNameTaken(c, principal.tenantId, body.name)) throw conflict(`an agent named "${body.name}" already exists`);
        const policyIds = config.policies ?? [];
        const known = await existingPolicyIds(c, principal.tenantId, policyIds);
        const missing = policyIds.filter((p) => !known.has(p));
        if (missing.length > 0) throw badRequest(`configYaml.policies names unknown policies: ${missing.join(", ")}`, [{ path: "configYaml.policies", message: `unknown policy ids: ${missing.join(", ")}` }]);
        const agent = await insertAgent(c, {
          id: newId("agt"),
          tenant_id: principal.tenantId,
          name: body.name,
          description: body.description ?? null,
          model_provider: body.modelProvider ?? "",
          model_name: body.modelName ?? "",
          environment: body.environment ?? "",
          config_yaml: configYaml,
        });
        for (const pid of policyIds) {
          await c.query("INSERT INTO policy_agents (tenant_id, policy_id, agent_id) VALUES ($1, $2, $3)", [principal.tenantId, pid, agent.id]);
          await recordChange(c, principal.tenantId, "policy", pid);
        }
        await insertDeployment(c, { id: newId("dep"), tenantId: principal.tenantId, agentId: agent.id, configYaml, deployedBy: principal.userId });
        await appendAudit(c, { ...actorOf(ctx, principal), action: "agent.create", targetType: "agent", targetId: agent.id, details: { name: agent.name } });
        await recordChange(c, principal.tenantId, "agent", agent.id);
        return agent;
      });
      return { status: 201, body: { data: agentCreatedB(row) } };
    },
  });
}
