// Group B traces: GET /api/traces (offset pages with an exact total; blocked shows as error),
// GET /api/traces/stats (summary with exact percentiles, optional groups; needs costs:read) and
// GET /api/traces/:id (with qualityScores and spans). /stats is registered before /:id so that the
// literal path wins.
import type Router from "@koa/router";
import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "../../openapi/zod.js";
import { ErrorB, intParam } from "../../openapi/common-schemas.js";
import { addRoute } from "../../route.js";
import type { AppState } from "../../state.js";
import type { Deps } from "../../deps.js";
import { listB } from "../agent-views.js";
import { PERIOD_MS, STATS_PERIODS, TraceB, TraceDetailB, TraceStatsB, traceB, traceDetailB, traceStatsB } from "../trace-views.js";
import { agentNames, environmentFilter, filterString, fromStore, numberParam, timeBoundParam } from "../trace-queries.js";
import { MAX_OFFSET } from "../../../stores/clickhouse/index.js";
import { badRequest, notFound } from "../../../errors/app-error.js";

export function registerTraceRoutesB(router: Router<AppState>, registry: OpenAPIRegistry, deps: Deps): void {
  addRoute(router, registry, {
    method: "get",
    path: "/api/traces",
    summary: "List traces (newest first, offset pagination, exact total; no default time window)",
    scope: "traces:read",
    query: z.object({
      limit: intParam(50, 1, 500),
      offset: intParam(0, 0, MAX_OFFSET),
      agentId: filterString.optional(),
      status: z.enum(["success", "error"]).optional().openapi({ description: "error includes blocked traces" }),
      environment: environmentFilter.optional(),
      startDate: timeBoundParam("start").optional(),
      endDate: timeBoundParam("end").optional(),
      minCostUsd: numberParam(0, 1e12, "USD, inclusive").optional(),
      maxCostUsd: numberParam(0, 1e12, "USD, inclusive").optional(),
      minInjectionScore: numberParam(0, 1, "0.0 to 1.0, inclusive").optional(),
    }),
    responses: { 200: listB(TraceB, "TraceListB"), 503: ErrorB },
    handler: async (_ctx, { query, principal }) => {
      if (query.startDate && query.endDate && query.startDate.getTime() > query.endDate.getTime()) {
        throw badRequest("startDate must not be after endDate", [{ path: "query.startDate", message: "after endDate" }]);
      }
      if (query.minCostUsd !== undefined && query.maxCostUsd !== undefined && query.minCostUsd > query.maxCostUsd) {
        throw badRequest("minCostUsd must not exceed maxCostUsd", [{ path: "query.minCostUsd", message: "above maxCostUsd" }]);
      }
      const { traces, total } = await fromStore(() => deps.traces.listByOffset(principal.tenantId, query));
      const names = await agentNames(deps.db, principal.tenantId, traces.map((t) => t.agentId));
      return { status: 200, body: { data: traces.map((t) => traceB(t, names)), total, limit: query.limit, offset: query.offset } };
    },
  });

  addRoute(router, registry, {
    method: "get",
    path: "/api/traces/stats",
    summary: "Trace statistics over a period: totals, error rate, exact p50/p95/p99 durations, optional groups",
    scope: "costs:read",
    query: z.object({
      period: z.enum(STATS_PERIODS).default("24h").openapi({ description: "Window ending now" }),
      agentId: filterString.optional(),
      groupBy: z.enum(["agent", "model", "environment"]).optional(),
    }),
    responses: { 200: TraceStatsB, 503: ErrorB },
    handler: async (_ctx, { query, principal }) => {
      const until = new Date();
      const since = new Date(until.getTime() - PERIOD_MS[query.period]);
      const stats = await fromStore(() => deps.traces.stats(principal.tenantId, { since, until, agentId: query.agentId, groupBy: query.groupBy }));
      const names = query.groupBy === "agent" ? await agentNames(deps.db, principal.tenantId, stats.groups.map((g) => ("agentId" in g ? g.agentId : ""))) : new Map<string, string>();
      return { status: 200, body: traceStatsB(query.period, query.groupBy, stats, names) };
    },
  });

  addRoute(router, registry, {
    method: "get",
    path: "/api/traces/{id}",
    summary: "One trace, with qualityScores and spans",
    scope: "traces:read",
    params: z.object({ id: z.string().min(1).max(200).openapi({ example: "trc_01JD3Z6Q4W8X9Y0Z1A2B3C4D5E" }) }),
    responses: { 200: z.object({ data: TraceDetailB }).openapi("TraceReadB"), 503: ErrorB },
    handler: async (_ctx, { params, principal }) => {
      const t = await fromStore(() => deps.traces.get(principal.tenantId, params.id));
      if (!t) throw notFound(`trace ${params.id}`);
      const names = await agentNames(deps.db, principal.tenantId, [t.agentId]);
      return { status: 200, body: { data: traceDetailB(t, names) } };
    },
  });
}
