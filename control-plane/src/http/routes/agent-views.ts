// How an agent row is shown in each REST group.
import type { AgentRow } from "../../stores/postgres/agents-repo.js";
import { z } from "../openapi/zod.js";
import { Timestamp, iso } from "../openapi/common-schemas.js";

export const AgentSummaryA = z
  .object({
    id: z.string(),
    name: z.string(),
    provider: z.string(),
    model: z.string(),
    status: z.enum(["active", "paused", "archived"]),
    created_at: Timestamp,
    total_requests: z.number().int(),
    total_cost: z.number(),
  })
  .openapi("AgentSummary");

export const AgentB = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    modelProvider: z.string(),
    modelName: z.string(),
    environment: z.string(),
    status: z.enum(["active", "paused", "archived"]),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .openapi("Agent");

export const AgentCreatedB = z
  .object({ id: z.string(), name: z.string(), modelProvider: z.string(), modelName: z.string(), environment: z.string(), createdAt: Timestamp, updatedAt: Timestamp })
  .openapi("AgentCreated");

export function agentSummaryA(a: AgentRow, totals?: { totalRequests: number; totalCost: number }) {
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
