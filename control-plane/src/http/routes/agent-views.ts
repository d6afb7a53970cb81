// How an agent, its tools and its deployment history are shown in each REST group.
import type { AgentRow, DeploymentRow, ToolRow } from "../../stores/postgres/agents-repo.js";
import type { AgentMetrics } from "../../stores/clickhouse/index.js";
import { storedAgentConfig } from "../../domain/agent-config.js";
import { z } from "../openapi/zod.js";
import { Timestamp, iso } from "../openapi/common-schemas.js";

const Status = z.enum(["active", "paused", "archived"]);

export const AgentSummaryA = z
  .object({
    id: z.string(),
    name: z.string(),
    provider: z.string(),
    model: z.string(),
    status: Status,
    created_at: Timestamp,
    total_requests: z.number().int(),
    total_cost: z.number(),
  })
  .openapi("AgentSummary");

export const AgentDetailA = AgentSummaryA.extend({
  config: z.object({
    rate_limit: z.number().int().nullable().openapi({ description: "Requests per minute; null = no limit" }),
    budget_limit_daily: z.number().nullable().openapi({ description: "USD per UTC day; null = no budget" }),
    pii_detection: z.boolean(),
    policies: z.array(z.string()).openapi({ description: "Policies linked to this agent (tenant-wide policies are not listed)" }),
  }),
  metrics: z.object({
    requests_24h: z.number().int(),
    avg_latency_ms: z.number().int(),
    cost_24h: z.number(),
    error_rate: z.number().openapi({ description: "error / all traces over the last 24 h (blocked is not an error)" }),
  }),
  updated_at: Timestamp,
}).openapi("AgentDetail");

export const AgentB = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    modelProvider: z.string(),
    modelName: z.string(),
    environment: z.string(),
    status: Status,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .openapi("Agent");

export const AgentWithConfigB = AgentB.extend({ configYaml: z.string() }).openapi("AgentWithConfig");

export const AgentCreatedB = z
  .object({ id: z.string(), name: z.string(), modelProvider: z.string(), modelName: z.string(), environment: z.string(), createdAt: Timestamp, updatedAt: Timestamp })
  .openapi("AgentCreated");

export const ToolB = z
  .object({ id: z.string(), agentId: z.string(), toolName: z.string(), callCount: z.number().int(), lastCalledAt: Timestamp })
  .openapi("Tool");

export const DeploymentB = z
  .object({
    id: z.string(),
    agentId: z.string(),
    version: z.number().int().openapi({ description: "1 at creation, +1 for every configuration change" }),
    configYaml: z.string(),
    deployedBy: z.string(),
    deployedAt: Timestamp,
  })
  .openapi("DeploymentRecord");

/** Group B list envelope. */
export function listB<T extends z.ZodType>(item: T, name: string) {
  return z.object({ data: z.array(item), total: z.number().int(), limit: z.number().int(), offset: z.number().int() }).openapi(name);
}

type Totals = Pick<AgentMetrics, "totalRequests" | "totalCost">;

export function agentSummaryA(a: AgentRow, totals?: Totals) {
  return {
    id: a.id,
    name: a.name,
    provider: a.model_provider,
    model: a.model_name,
    status: a.status,
    created_at: iso(a.created_at),
    total_requests: totals?.totalRequests ?? 0,
    total_cost: totals?.totalCost ?? 0,
  };
}

/** Group A detail: config read from configYaml (defaults: no rate limit, no budget, PII on), links as policies. */
export function agentDetailA(a: AgentRow, linkedPolicies: readonly string[], m?: AgentMetrics) {
  const cfg = storedAgentConfig(a.config_yaml);
  return {
    ...agentSummaryA(a, m),
    config: {
      rate_limit: cfg.rate_limit,
      budget_limit_daily: cfg.budget_limit_daily,
      pii_detection: cfg.pii_detection,
      policies: [...linkedPolicies],
    },
    metrics: {
      requests_24h: m?.requests24h ?? 0,
      avg_latency_ms: Math.round(m?.avgLatencyMs ?? 0),
      cost_24h: m?.cost24h ?? 0,
      error_rate: m?.errorRate ?? 0,
    },
    updated_at: iso(a.updated_at),
  };
}

export function agentB(a: AgentRow) {
  return {
    id: a.id,
    name: a.name,
    description: a.description,
    modelProvider: a.model_provider,
    modelName: a.model_name,
    environment: a.environment,
    status: a.status,
    createdAt: iso(a.created_at),
    updatedAt: iso(a.updated_at),
  };
}

export function agentWithConfigB(a: AgentRow) {
  return { ...agentB(a), configYaml: a.config_yaml };
}

export function agentCreatedB(a: AgentRow) {
  return {
    id: a.id,
    name: a.name,
    modelProvider: a.model_provider,
    modelName: a.model_name,
    environment: a.environment,
    createdAt: iso(a.created_at),
    updatedAt: iso(a.updated_at),
  };
}

export function toolB(t: ToolRow) {
  return { id: t.id, agentId: t.agent_id, toolName: t.tool_name, callCount: t.call_count, lastCalledAt: iso(t.last_called_at) };
}

export function deploymentB(d: DeploymentRow) {
  return { id: d.id, agentId: d.agent_id, version: d.version, configYaml: d.config_yaml, deployedBy: d.deployed_by, deployedAt: iso(d.deployed_at) };
}
