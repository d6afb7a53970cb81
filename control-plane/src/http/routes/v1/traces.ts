// Group A traces: GET /v1/traces (keyset cursor, newest first).
import type Router from "@koa/router";
import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "../../openapi/zod.js";
import { boolParam, cursorLimit, isoDateParam } from "../../openapi/common-schemas.js";
import { addRoute } from "../../route.js";
import type { AppState } from "../../state.js";
import type { Deps } from "../../deps.js";
import { TraceSummaryA, traceSummaryA } from "../trace-views.js";
import { decodeCursor, encodeCursor } from "../../../domain/cursor.js";
import { badRequest } from "../../../errors/app-error.js";

export function registerTraceRoutesA(router: Router<AppState>, registry: OpenAPIRegistry, deps: Deps): void {
  addRoute(router, registry, {
    method: "get",
    path: "/v1/traces",
    summary: "List traces (newest first, cursor pagination)",
    scope: "traces:read",
    query: z.object({
      agent_id: z.string().max(64).optional(),
      since: isoDateParam.optional(),
      until: isoDateParam.optional(),
      status: z.enum(["success", "error", "blocked"]).optional(),
      has_pii: boolParam.optional(),
      limit: cursorLimit(50, 200),
      cursor: z.string().max(400).optional(),
    }),
    responses: { 200: z.object({ data: z.array(TraceSummaryA), has_more: z.boolean(), next_cursor: z.string().optional() }).openapi("TraceListA") },
    handler: async (_ctx, { query, principal }) => {
      const until = query.until ?? new Date();
      const since = query.since ?? new Date(until.getTime() - 3600_000);
      if (since.getTime() > until.getTime()) throw badRequest("since must not be after until", [{ path: "query.since", message: "after until" }]);
      const after = query.cursor ? decodeCursor(query.cursor) : undefined;
      const { traces, hasMore } = await deps.traces.listByCursor(principal.tenantId, {
        agentId: query.agent_id,
        since,
        until,
        status: query.status,
        hasPii: query.has_pii,
        limit: query.limit,
        after: after ? { timestampMs: after.t, id: after.id } : undefined,
      });
      const last = traces[traces.length - 1];
      return {
        status: 200,
        body: {
          data: traces.map(traceSummaryA),
          has_more: hasMore,
          ...(hasMore && last ? { next_cursor: encodeCursor({ t: Number(last.timestampMs), id: last.id }) } : {}),
        },
      };
    },
  });
}
