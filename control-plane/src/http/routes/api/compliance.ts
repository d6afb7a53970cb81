// Group B compliance report: GET /api/compliance/report (compliance:read; DESIGN.md §3 names the scope
// and the report, the spec leaves its form open: docs/decisions.md). What governance did over a window,
// read from the traces: calls by status, refusals by reason, PII findings per type and source, each
// policy's evaluations and actions, injection scores, and the agents involved. No prompt or completion
// text, no PII value: counts and names only.
import type Router from "@koa/router";
import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "../../openapi/zod.js";
import { ErrorB, Timestamp, iso } from "../../openapi/common-schemas.js";
import { addRoute } from "../../route.js";
import type { AppState } from "../../state.js";
import type { Deps } from "../../deps.js";
import { agentNames, filterString, fromStore, timeBoundParam } from "../trace-queries.js";
import { COMPLIANCE_MAX_ROWS, INJECTION_ELEVATED, INJECTION_HIGH } from "../../../stores/clickhouse/index.js";
import { badRequest } from "../../../errors/app-error.js";

const DAY_MS = 86_400_000;
/** The default window (ending now) and the longest one: a report reads every trace of its window. */
export const COMPLIANCE_DEFAULT_DAYS = 30;
export const COMPLIANCE_MAX_DAYS = 93;

const Count = z.number().int().min(0);

export const ComplianceReportB = z
  .object({
    startDate: Timestamp,
    endDate: Timestamp,
    agentId: z.string().nullable(),
    traces: z
      .object({ total: Count, success: Count, error: Count, blocked: Count, withPii: Count.openapi({ description: "traces with at least one PII finding" }) })
      .openapi({ description: "Traces by status: `error` excludes the refused ones (`blocked`), so total = success + error + blocked (GET /api/traces counts blocked as errors)" }),
    refusals: z
      .array(z.object({ reason: z.string().openapi({ example: "policy_violation" }), count: Count }))
      .openapi({ description: "Refused (blocked) calls by error code: policy_violation, rate_limit_exceeded, budget_exceeded, agent_paused…; most first" }),
    pii: z
      .array(z.object({ entityType: z.string().openapi({ example: "email" }), source: z.string().openapi({ example: "prompt" }), findings: Count, traces: Count }))
      .openapi({ description: "PII findings per entity type and source (prompt, completion, or the input outside the prompt: tool_definition, response_schema, prediction, name), and the traces with at least one; most first" }),
    policies: z
      .array(
        z.object({
          policyId: z.string(),
          policyName: z.string().openapi({ description: "its name in the latest trace that evaluated it" }),
          evaluated: Count,
          matched: Count,
          blocked: Count,
          redacted: Count,
          logged: Count,
        }),
      )
      .openapi({ description: `Per policy: traces that evaluated it, matched it, and the action taken; most matched first, at most ${COMPLIANCE_MAX_ROWS}` }),
    injection: z.object({
      elevated: Count.openapi({ description: `traces whose prompt scored at least ${INJECTION_ELEVATED}` }),
      high: Count.openapi({ description: `traces whose prompt scored at least ${INJECTION_HIGH}` }),
      maxScore: z.number().min(0).max(1),
    }),
    agents: z
      .array(z.object({ agentId: z.string(), agentName: z.string(), traces: Count, blocked: Count, withPii: Count }))
      .openapi({ description: `Per agent: most refused first, then most with PII; at most ${COMPLIANCE_MAX_ROWS}` }),
    truncated: z.object({ policies: z.boolean(), agents: z.boolean() }).openapi({ description: `Whether the policies or agents lists were cut at ${COMPLIANCE_MAX_ROWS} rows` }),
  })
  .openapi("ComplianceReportB");

export function registerComplianceRoutes(router: Router<AppState>, registry: OpenAPIRegistry, deps: Deps): void {
  addRoute(router, registry, {
    method: "get",
    path: "/api/compliance/report",
    summary: `Compliance report over a window (default the last ${COMPLIANCE_DEFAULT_DAYS} days, at most ${COMPLIANCE_MAX_DAYS}): calls, refusals, PII, policies, injection, agents`,
    scope: "compliance:read",
    query: z.object({
      startDate: timeBoundParam("start").optional(),
      endDate: timeBoundParam("end").optional(),
      agentId: filterString.optional(),
    }),
    responses: { 200: z.object({ data: ComplianceReportB }).openapi("ComplianceReportReadB"), 503: ErrorB },
    handler: async (_ctx, { query, principal }) => {
      const until = query.endDate ?? new Date();
      const since = query.startDate ?? new Date(until.getTime() - COMPLIANCE_DEFAULT_DAYS * DAY_MS);
      if (since.getTime() > until.getTime()) {
        // Without endDate the window ends now: a startDate in the future is after it.
        const end = query.endDate ? "endDate" : "now (endDate's default)";
        throw badRequest(`startDate must not be after ${end}`, [{ path: "query.startDate", message: `after ${end}` }]);
      }
      if (until.getTime() - since.getTime() > COMPLIANCE_MAX_DAYS * DAY_MS) {
        throw badRequest(`the window from startDate to endDate is longer than ${COMPLIANCE_MAX_DAYS} days`, [{ path: "query.startDate", message: `more than ${COMPLIANCE_MAX_DAYS} days before endDate` }]);
      }
      const r = await fromStore(() => deps.traces.compliance(principal.tenantId, { since, until, agentId: query.agentId }));
      // Agents by their current name (a deleted agent keeps the name of its latest trace).
      const names = await agentNames(deps.db, principal.tenantId, r.agents.map((a) => a.agentId));
      return {
        status: 200,
        body: {
          data: {
            startDate: iso(since),
            endDate: iso(until),
            agentId: query.agentId ?? null,
            ...r,
            agents: r.agents.map((a) => ({ ...a, agentName: names.get(a.agentId) ?? a.agentName })),
          },
        },
      };
    },
  });
}
