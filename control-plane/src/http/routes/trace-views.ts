// How a stored trace is shown in each REST group.
import type { Trace } from "@agentgov/proto";
import { z } from "../openapi/zod.js";
import { Timestamp } from "../openapi/common-schemas.js";

export const TraceSummaryA = z
  .object({
    id: z.string(),
    agent_id: z.string(),
    model: z.string(),
    status: z.enum(["success", "error", "blocked"]),
    input_tokens: z.number().int(),
    output_tokens: z.number().int(),
    cost: z.number(),
    latency_ms: z.number().int(),
    pii_detected: z.boolean(),
    policies_evaluated: z.number().int(),
    policies_blocked: z.number().int(),
    timestamp: Timestamp,
  })
  .openapi("TraceSummary");

const isoMs = (ms: bigint | number) => new Date(Number(ms)).toISOString();

export function traceSummaryA(t: Trace) {
  return {
    id: t.id,
    agent_id: t.agentId,
    model: t.model,
    status: t.status as "success" | "error" | "blocked",
    input_tokens: t.inputTokens,
    output_tokens: t.outputTokens,
    cost: t.costUsd,
    latency_ms: Math.round(t.latencyMs),
    pii_detected: t.piiDetections.length > 0,
    policies_evaluated: t.policiesEvaluated,
    policies_blocked: t.policiesBlocked,
    timestamp: isoMs(t.timestampMs),
  };
}
