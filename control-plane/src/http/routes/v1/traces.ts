// Group A traces: GET /v1/traces (keyset cursor, newest first, stable while traces arrive) and
// GET /v1/traces/{trace_id} (the full detail of DESIGN.md §8).
import type Router from "@koa/router";
import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "../../openapi/zod.js";
import { ErrorA, boolParam, cursorLimit } from "../../openapi/common-schemas.js";
import { addRoute } from "../../route.js";
import type { AppState } from "../../state.js";
import type { Deps } from "../../deps.js";
import { TraceDetailA, TraceSummaryA, traceDetailA, traceSummaryA } from "../trace-views.js";
import { decodeTraceCursor, encodeTraceCursor } from "../trace-cursor.js";
import { filterString, fromStore, timeBoundParam } from "../trace-queries.js";
import { badRequest, notFound } from "../../../errors/app-error.js";

const HOUR_MS = 3_600_000;

export function registerTraceRoutesA(router: Router<AppState>, registry: OpenAPIRegistry, deps: Deps): void {
  addRoute(router, registry, {
    method: "get",
    path: "/v1/traces",
    summary: "List traces (newest first, cursor pagination; the cursor keeps the walk's time window)",
    scope: "traces:read",
    query: z.object({
      agent_id: filterString.optional(),
      since: timeBoundParam("start").optional().openapi({ description: "Inclusive; default one hour before now (or the cursor's window); an until older than that default gives an empty page" }),
      until: timeBoundParam("end").optional().openapi({ description: "Inclusive; default now (or the cursor's window)" }),
      status: z.enum(["success", "error", "blocked"]).optional(),
      has_pii: boolParam.optional().openapi({ description: "true: only traces with PII detections; false: only traces without" }),
      limit: cursorLimit(50, 200),
      cursor: z.string().max(400).optional(),
    }),
    responses: {
      200: z.object({ data: z.array(TraceSummaryA), has_more: z.boolean(), next_cursor: z.string().optional() }).openapi("TraceListA"),
      503: ErrorA,
    },
    handler: async (_ctx, { query, principal }) => {
      const cursor = query.cursor ? decodeTraceCursor(query.cursor) : undefined;
      const until = query.until ?? (cursor ? new Date(cursor.until) : new Date());
      // The spec's default is one hour before *now*, whatever until says: an until older than that
      // leaves an empty window (not an error: the caller did not set since).
      const since = query.since ?? (cursor ? new Date(cursor.since) : new Date(Date.now() - HOUR_MS));
      if (since.getTime() > until.getTime()) {
        if (query.since) throw badRequest("since must not be after until", [{ path: "query.since", message: "after until" }]);
        return { status: 200, body: { data: [], has_more: false } };
      }
      const { traces, hasMore } = await fromStore(() =>
        deps.traces.listByCursor(principal.tenantId, {
          agentId: query.agent_id,
          since,
          until,
          status: query.status,
          hasPii: query.has_pii,
          limit: query.limit,
          after: cursor ? { timestampMs: cursor.t, id: cursor.id } : undefined,
        }),
      );
      const last = traces[traces.length - 1];
      const next = hasMore && last ? encodeTraceCursor({ t: Number(last.timestampMs), id: last.id, since: Math.max(0, since.getTime()), until: Math.max(0, until.getTime()) }) : undefined;
      return { status: 200, body: { data: traces.map(traceSummaryA), has_more: hasMore, ...(next ? { next_cursor: next } : {}) } };
    },
  });

  addRoute(router, registry, {
    method: "get",
    path: "/v1/traces/{trace_id}",
    summary: "One trace in full: prompt and completion, cost breakdown, policy evaluations, PII spans, timing",
    scope: "traces:read",
    params: z.object({ trace_id: z.string().min(1).max(200).openapi({ example: "trc_01JD3Z6Q4W8X9Y0Z1A2B3C4D5E" }) }),
    responses: { 200: TraceDetailA, 503: ErrorA },
    handler: async (_ctx, { params, principal }) => {
      const t = await fromStore(() => deps.traces.get(principal.tenantId, params.trace_id));
      if (!t) throw notFound(`trace ${params.trace_id}`);
      return { status: 200, body: traceDetailA(t) };
    },
  });
}
