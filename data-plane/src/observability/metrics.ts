// The sidecar's Prometheus metrics (one prom-client registry per sidecar, served at GET /metrics on
// the proxy port): HTTP requests by route and status, proxied requests by outcome, proxy overhead,
// upstream latency, policy decisions, PII findings, limit rejections, tokens and cost. (The spool,
// Sync and ingest gauges come from the sidecar's status report, sidecar-status.ts, appended to the
// same page.) Labels are bounded: provider names, statuses, actions, entity types; never agent ids,
// models or anything else a caller controls.
import { Registry, collectDefaultMetrics } from "prom-client";
import { LabeledCounter as Counter, LabeledHistogram as Histogram } from "./labeled-metrics.js";

/** Updated once or more per request: label values positional, in the order of labelNames. */
export interface SidecarMetrics {
  registry: Registry;
  httpRequests: Counter<"route" | "provider" | "status">;
  httpDuration: Histogram<"route" | "provider" | "status">;
  proxyRequests: Counter<"provider" | "outcome" | "code">;
  proxyOverhead: Histogram<"provider" | "streamed">;
  upstreamLatency: Histogram<"provider" | "status_class">;
  policyDecisions: Counter<"type" | "action">;
  piiFindings: Counter<"entity_type" | "source">;
  limitRejections: Counter<"reason">;
  tokens: Counter<"provider" | "direction">;
  cost: Counter<"provider">;
}

const OVERHEAD_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25];
const UPSTREAM_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export function createSidecarMetrics(): SidecarMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    httpRequests: new Counter({ name: "agentgov_sidecar_http_requests_total", help: "HTTP requests by route (proxy, healthz, readyz, metrics, other), provider and status", labelNames: ["route", "provider", "status"], registers }),
    httpDuration: new Histogram({ name: "agentgov_sidecar_http_request_duration_seconds", help: "Time to the end of the answer, by route, provider and status", labelNames: ["route", "provider", "status"], buckets: UPSTREAM_BUCKETS, registers }),
    proxyRequests: new Counter({ name: "agentgov_sidecar_proxy_requests_total", help: "Traced proxy requests by provider, outcome (success, error, blocked) and error code", labelNames: ["provider", "outcome", "code"], registers }),
    proxyOverhead: new Histogram({ name: "agentgov_sidecar_proxy_overhead_seconds", help: "Time the sidecar added to a request (total minus provider time)", labelNames: ["provider", "streamed"], buckets: OVERHEAD_BUCKETS, registers }),
    upstreamLatency: new Histogram({ name: "agentgov_sidecar_upstream_latency_seconds", help: "Provider time (request sent to answer read), by provider and status class", labelNames: ["provider", "status_class"], buckets: UPSTREAM_BUCKETS, registers }),
    policyDecisions: new Counter({ name: "agentgov_sidecar_policy_decisions_total", help: "Governance decisions: type policy (action none, block, redact, log), rate_limit, budget, agent_paused", labelNames: ["type", "action"], registers }),
    piiFindings: new Counter({ name: "agentgov_sidecar_pii_findings_total", help: "PII findings by entity type and source (prompt, completion, or outside the prompt: tool_definition, response_schema, prediction, name)", labelNames: ["entity_type", "source"], registers }),
    limitRejections: new Counter({ name: "agentgov_sidecar_limit_rejections_total", help: "Requests refused by a limit: rate_limit, budget", labelNames: ["reason"], registers }),
    tokens: new Counter({ name: "agentgov_sidecar_tokens_total", help: "Tokens by provider and direction (input, output)", labelNames: ["provider", "direction"], registers }),
    cost: new Counter({ name: "agentgov_sidecar_cost_usd_total", help: "Cost in USD of proxied requests, by provider", labelNames: ["provider"], registers }),
  };
}

const REFUSALS: Record<string, "rate_limit" | "budget" | "agent_paused"> = { rate_limit: "rate_limit", budget: "budget", agent_paused: "agent_paused" };

interface TraceLike {
  provider: string;
  status: string;
  errorCode: string;
  httpStatus: number;
  streamed: boolean;
  overheadMs: number;
  providerMs: number;
  spans: readonly { stage: string }[];
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  policyEvaluations: readonly { actionTaken: string }[];
  policiesFired: readonly string[];
  piiDetections: readonly { entityType: string; source: string }[];
}

/** Records what one trace says about its request. */
export function observeTrace(m: SidecarMetrics, t: TraceLike): void {
  const provider = t.provider || "unknown";
  m.proxyRequests.inc(provider, t.status, t.errorCode || "none");
  m.proxyOverhead.observe(Math.max(0, t.overheadMs) / 1000, provider, t.streamed ? "true" : "false");
  if (t.spans.some((s) => s.stage === "provider")) {
    m.upstreamLatency.observe(Math.max(0, t.providerMs) / 1000, provider, t.httpStatus > 0 ? STATUS_CLASS[Math.floor(t.httpStatus / 100)] ?? `${Math.floor(t.httpStatus / 100)}xx` : "none");
  }
  // One increment per action taken, not per evaluation (most evaluations of a request share "none").
  let none = 0;
  for (const e of t.policyEvaluations) {
    if (!e.actionTaken || e.actionTaken === "none") none++;
    else m.policyDecisions.inc("policy", e.actionTaken);
  }
  if (none > 0) m.policyDecisions.inc("policy", "none", "", none);
  for (const f of t.policiesFired) {
    const refusal = REFUSALS[f];
    if (!refusal) continue;
    m.policyDecisions.inc(refusal, "block");
    if (refusal !== "agent_paused") m.limitRejections.inc(refusal);
  }
  for (const p of t.piiDetections) m.piiFindings.inc(p.entityType, p.source);
  if (t.inputTokens) m.tokens.inc(provider, "input", "", t.inputTokens);
  if (t.outputTokens) m.tokens.inc(provider, "output", "", t.outputTokens);
  if (t.costUsd > 0) m.cost.inc(provider, "", "", t.costUsd);
}

const STATUS_CLASS: Record<number, string> = { 1: "1xx", 2: "2xx", 3: "3xx", 4: "4xx", 5: "5xx" };
