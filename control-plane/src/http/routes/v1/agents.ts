// Group A agents: GET /v1/agents (cursor pagination), GET /v1/agents/{agent_id} (detail with config and
// metrics), PATCH /v1/agents/{agent_id} (status: active ⇄ paused, either → archived; archived is final).
import type Router from "@koa/router";
import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "../../openapi/zod.js";
import { cursorLimit } from "../../openapi/common-schemas.js";
import { addRoute } from "../../route.js";
import type { AppState } from "../../state.js";
import type { Deps } from "../../deps.js";
import { getAgent, linkedPolicyIds, listAgentsKeyset, type AgentRow } from "../../../stores/postgres/agents-repo.js";
import { decodeCursor, encodeCursor } from "../../../domain/cursor.js";
import { AGENT_STATUSES } from "../../../domain/agent-status.js";
import { notFound } from "../../../errors/app-error.js";
import { AgentDetailA, AgentSummaryA, agentDetailA, agentSummaryA } from "../agent-views.js";
import { updateAgentFields } from "../agent-writes.js";

export const AgentIdParams = z.object({ agent_id: z.string().min(1).max(200).openapi({ example: "agt_01JD3Z6Q4W8X9Y0Z1A2B3C4D5E" }) });

export function registerAgentRoutesA(router: Router<AppState>, registry: OpenAPIRegistry, deps: Deps): void {
  async function detail(tenantId: string, agent: AgentRow) {
    const [links, metrics] = await Promise.all([
      linkedPolicyIds(deps.db, agent.id),
      deps.traces.agentMetrics(tenantId, [agent.id], new Date()),
    ]);
    return agentDetailA(agent, links, metrics.get(agent.id));
  }

  addRoute(router, registry, {
    method: "get",
    path: "/v1/agents",
    summary: "List agents (newest first, cursor pagination)",
    scope: "agents:read",
    query: z.object({
      status: z.enum(AGENT_STATUSES).optional(),
      limit: cursorLimit(50, 200),
      cursor: z.string().max(400).optional(),
    }),
    responses: {
      200: z.object({ data: z.array(AgentSummaryA), has_more: z.boolean(), next_cursor: z.string().optional() }).openapi("AgentListA"),
    },
    handler: async (_ctx, { query, principal }) => {
      const after = query.cursor !== undefined ? decodeCursor(query.cursor) : undefined;
      const rows = await listAgentsKeyset(deps.db, principal.tenantId, { status: query.status, limit: query.limit + 1, after });
      const page = rows.slice(0, query.limit);
      const hasMore = rows.length > query.limit;
      const metrics = await deps.traces.agentMetrics(principal.tenantId, page.map((a) => a.id), new Date());
      const last = page[page.length - 1];
      return {
        status: 200,
        body: {
          data: page.map((a) => agentSummaryA(a, metrics.get(a.id))),
          has_more: hasMore,
          ...(hasMore && last ? { next_cursor: encodeCursor({ t: last.created_at.getTime(), id: last.id }) } : {}),
        },
      };
    },
  });

  addRoute(router, registry, {
    method: "get",
    path: "/v1/agents/{agent_id}",
    summary: "One agent: configuration (from its configYaml) and metrics over the last 24 hours",
    scope: "agents:read",
    params: AgentIdParams,
    responses: { 200: AgentDetailA },
    handler: async (_ctx, { params, principal }) => {
      const agent = await getAgent(deps.db, principal.tenantId, params.agent_id);
      if (!agent) throw notFound(`agent ${params.agent_id}`);
      return { status: 200, body: await detail(principal.tenantId, agent) };
    },
  });

  addRoute(router, registry, {
    method: "patch",
    path: "/v1/agents/{agent_id}",
    summary: "Change an agent's status (active ⇄ paused, either → archived; archived is final; 409 otherwise)",
    scope: "agents:write",
    params: AgentIdParams,
    body: z.object({ status: z.enum(AGENT_STATUSES) }).strict().openapi("AgentStatusPatch"),
    responses: { 200: AgentDetailA },
    handler: async (ctx, { params, body, principal }) => {
      const agent = await updateAgentFields(deps.db, ctx, principal, params.agent_id, { status: body.status });
      return { status: 200, body: await detail(principal.tenantId, agent) };
    },
  });
}
