// Group A agents: GET /v1/agents (cursor pagination).
import type Router from "@koa/router";
import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "../../openapi/zod.js";
import { cursorLimit } from "../../openapi/common-schemas.js";
import { addRoute } from "../../route.js";
import type { AppState } from "../../state.js";
import type { Deps } from "../../deps.js";
import { listAgentsKeyset } from "../../../stores/postgres/agents-repo.js";
import { decodeCursor, encodeCursor } from "../../../domain/cursor.js";
import { AgentSummaryA, agentSummaryA } from "../agent-views.js";

export function registerAgentRoutesA(router: Router<AppState>, registry: OpenAPIRegistry, deps: Deps): void {
  addRoute(router, registry, {
    method: "get",
    path: "/v1/agents",
    summary: "List agents (newest first, cursor pagination)",
    scope: "agents:read",
    query: z.object({
      status: z.enum(["active", "paused", "archived"]).optional(),
      limit: cursorLimit(50, 200),
      cursor: z.string().max(400).optional(),
    }),
    responses: {
      200: z.object({ data: z.array(AgentSummaryA), has_more: z.boolean(), next_cursor: z.string().optional() }).openapi("AgentListA"),
    },
    handler: async (_ctx, { query, principal }) => {
      const after = query.cursor ? decodeCursor(query.cursor) : undefined;
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
}
