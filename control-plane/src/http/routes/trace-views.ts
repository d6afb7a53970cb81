// How a stored trace and trace statistics are shown in each REST group (DESIGN.md §8): group A's
// summary and full detail (snake_case, status success|error|blocked), group B's Trace, its detail
// with qualityScores and spans, and the statistics object (camelCase, blocked shown as error).
import type { Trace } from "@agentgov/proto";
import type { AgentGroup, EnvironmentGroup, ModelGroup, StatsGroupBy, TraceStats } from "../../stores/clickhouse/index.js";
import { z } from "../openapi/zod.js";
import { Timestamp } from "../openapi/common-schemas.js";

const isoMs = (ms: bigint | number) => new Date(Number(ms)).toISOString();
type StatusA = "success" | "error" | "blocked";

/**
 * Where a PII finding was made: the prompt, the completion, or the input outside the prompt the inbound
 * policies judged (a tool definition, a response schema, predicted output, a participant name).
 */
const PII_SOURCES = ["prompt", "completion", "tool_definition", "response_schema", "prediction", "name"] as const;
const PII_SOURCE_DESCRIPTION =
  "prompt or completion: offsets into that text; tool_definition, response_schema, prediction, name (input outside the prompt that inbound policies judged): offsets into the trace detail's input_extras / inputExtras";
const INPUT_EXTRAS_DESCRIPTION =
  "The input outside the prompt that inbound policies judged (tool definitions, response schemas, predicted output, participant names), its parts joined by a blank line; detected PII masked with * unless raw storage is on. Stored only when it has a PII finding (sources tool_definition, response_schema, prediction, name point into it), else empty";

// ---- group A ----

export const TraceSummaryA = z
  .object({
    id: z.string(),
    agent_id: z.string(),
    model: z.string(),
    status: z.enum(["success", "error", "blocked"]),
    input_tokens: z.number().int(),
    output_tokens: z.number().int(),
    cost: z.number().openapi({ description: "USD" }),
    latency_ms: z.number().int(),
    pii_detected: z.boolean(),
    policies_evaluated: z.number().int(),
    policies_blocked: z.number().int(),
    timestamp: Timestamp.openapi({ description: "When the sidecar received the request" }),
  })
  .openapi("TraceSummary");

const PiiDetectionA = z
  .object({
    entity_type: z.string(),
    start: z.number().int().openapi({ description: "UTF-16 offset into the text named by source" }),
    end: z.number().int().openapi({ description: "UTF-16 offset, exclusive" }),
    source: z.enum(PII_SOURCES).openapi({ description: PII_SOURCE_DESCRIPTION }),
    score: z.number(),
  })
  .openapi("PiiDetection");

export const TraceDetailA = TraceSummaryA.extend({
  agent_name: z.string(),
  environment: z.string(),
  provider: z.string(),
  session_id: z.string().nullable(),
  prompt: z.string().openapi({ description: "Input messages' text in order (system first), joined by a blank line; detected PII masked with * unless raw storage is on" }),
  completion: z.string(),
  input_extras: z.string().openapi({ description: INPUT_EXTRAS_DESCRIPTION }),
  cost_breakdown: z.object({
    input_tokens: z.number().int(),
    output_tokens: z.number().int(),
    cached_input_tokens: z.number().int(),
    cache_write_tokens: z.number().int(),
    input_cost: z.number(),
    output_cost: z.number(),
    total_cost: z.number(),
    currency: z.literal("USD"),
    price_per_million_input: z.number(),
    price_per_million_output: z.number(),
  }),
  policy_evaluations: z.array(
    z.object({
      policy_id: z.string(),
      policy_name: z.string(),
      result: z.enum(["pass", "fail"]),
      action_taken: z.enum(["none", "block", "redact", "log"]),
    }),
  ),
  policies_fired: z.array(z.string()).openapi({ description: "Names of the policies (or refusals: rate_limit, budget, agent_paused) that acted" }),
  pii_detections: z.array(PiiDetectionA),
  timing: z.object({
    total_ms: z.number(),
    provider_ms: z.number(),
    overhead_ms: z.number(),
    spans: z.array(z.object({ stage: z.string(), duration_ms: z.number() })),
  }),
  injection_score: z.number(),
  quality_scores: z.array(z.object({ scorer: z.string(), score: z.number() })),
  tool_calls: z.array(z.object({ name: z.string(), id: z.string() })),
  tokens_estimated: z.boolean().openapi({ description: "Tokens counted locally (the provider reported no usage)" }),
  price_missing: z.boolean().openapi({ description: "The model is not in the price table: cost is 0" }),
  price_version: z.string(),
  pii_scan_enabled: z.boolean(),
  streamed: z.boolean(),
  http_status: z.number().int(),
  error_code: z.string().openapi({ description: "Empty on success" }),
}).openapi("TraceDetail");

export function traceSummaryA(t: Trace) {
  return {
    id: t.id,
    agent_id: t.agentId,
    model: t.model,
    status: t.status as StatusA,
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

const oneOf = <T extends string>(values: readonly T[], v: string, fallback: T): T => ((values as readonly string[]).includes(v) ? (v as T) : fallback);

export function traceDetailA(t: Trace): z.infer<typeof TraceDetailA> {
  return {
    ...traceSummaryA(t),
    agent_name: t.agentName,
    environment: t.environment,
    provider: t.provider,
    session_id: t.sessionId ?? null,
    prompt: t.prompt,
    completion: t.completion,
    input_extras: t.inputExtras,
    cost_breakdown: {
      input_tokens: t.inputTokens,
      output_tokens: t.outputTokens,
      cached_input_tokens: t.cachedInputTokens,
      cache_write_tokens: t.cacheWriteTokens,
      input_cost: t.inputCost,
      output_cost: t.outputCost,
      total_cost: t.costUsd,
      currency: "USD",
      price_per_million_input: t.pricePerMillionInput,
      price_per_million_output: t.pricePerMillionOutput,
    },
    policy_evaluations: t.policyEvaluations.map((e) => ({
      policy_id: e.policyId,
      policy_name: e.policyName,
      result: oneOf(["pass", "fail"] as const, e.result, "fail"),
      action_taken: oneOf(["none", "block", "redact", "log"] as const, e.actionTaken, "none"),
    })),
    policies_fired: t.policiesFired,
    pii_detections: t.piiDetections.map((d) => ({
      entity_type: d.entityType,
      start: d.start,
      end: d.end,
      source: oneOf(PII_SOURCES, d.source, "prompt"),
      score: d.score,
    })),
    timing: {
      total_ms: t.latencyMs,
      provider_ms: t.providerMs,
      overhead_ms: t.overheadMs,
      spans: t.spans.map((s) => ({ stage: s.stage, duration_ms: s.durationMs })),
    },
    injection_score: t.injectionScore,
    quality_scores: t.qualityScores.map((q) => ({ scorer: q.scorer, score: q.score })),
    tool_calls: t.toolCalls.map((c) => ({ name: c.name, id: c.id })),
    tokens_estimated: t.tokensEstimated,
    price_missing: t.priceMissing,
    price_version: t.priceVersion,
    pii_scan_enabled: t.piiScanEnabled,
    streamed: t.streamed,
    http_status: t.httpStatus,
    error_code: t.errorCode,
  };
}

// ---- group B ----

const PiiDetectionB = z
  .object({
    entityType: z.string(),
    start: z.number().int(),
    end: z.number().int(),
    source: z.enum(PII_SOURCES).openapi({ description: PII_SOURCE_DESCRIPTION }),
    score: z.number(),
  })
  .openapi("PiiDetectionB");

export const TraceB = z
  .object({
    id: z.string(),
    agentId: z.string(),
    agentName: z.string(),
    status: z.enum(["success", "error"]).openapi({ description: "blocked traces show as error (policiesFired names what blocked them)" }),
    environment: z.string(),
    sessionId: z.string().nullable(),
    modelProvider: z.string(),
    modelName: z.string(),
    inputTokens: z.number().int(),
    outputTokens: z.number().int(),
    costUsd: z.number(),
    durationMs: z.number().int(),
    injectionScore: z.number().min(0).max(1),
    piiDetected: z.array(PiiDetectionB).openapi({ description: "Detections (empty when none)" }),
    policiesFired: z.array(z.string()).openapi({ description: "Names of the policies that acted (empty when none)" }),
    createdAt: Timestamp,
  })
  .openapi("Trace");

export const TraceDetailB = TraceB.extend({
  qualityScores: z.array(z.object({ scorer: z.string(), score: z.number() })),
  spans: z.array(z.object({ stage: z.string(), durationMs: z.number().int() })),
  inputExtras: z.string().openapi({ description: INPUT_EXTRAS_DESCRIPTION }),
}).openapi("TraceDetailB");

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));

/** `agentName` is the agent's current name when known (else the name recorded on the trace). */
export function traceB(t: Trace, agentNames: ReadonlyMap<string, string>): z.infer<typeof TraceB> {
  return {
    id: t.id,
    agentId: t.agentId,
    agentName: agentNames.get(t.agentId) ?? t.agentName,
    status: t.status === "success" ? "success" : "error",
    environment: t.environment,
    sessionId: t.sessionId ?? null,
    modelProvider: t.provider,
    modelName: t.model,
    inputTokens: t.inputTokens,
    outputTokens: t.outputTokens,
    costUsd: t.costUsd,
    durationMs: Math.round(t.latencyMs),
    injectionScore: clamp01(t.injectionScore),
    piiDetected: t.piiDetections.map((d) => ({
      entityType: d.entityType,
      start: d.start,
      end: d.end,
      source: oneOf(PII_SOURCES, d.source, "prompt"),
      score: d.score,
    })),
    policiesFired: t.policiesFired,
    createdAt: isoMs(t.timestampMs),
  };
}

export function traceDetailB(t: Trace, agentNames: ReadonlyMap<string, string>): z.infer<typeof TraceDetailB> {
  return {
    ...traceB(t, agentNames),
    qualityScores: t.qualityScores.map((q) => ({ scorer: q.scorer, score: q.score })),
    spans: t.spans.map((s) => ({ stage: s.stage, durationMs: Math.round(s.durationMs) })),
    inputExtras: t.inputExtras,
  };
}

// ---- statistics (group B) ----

const Measures = {
  traceCount: z.number().int(),
  totalCostUsd: z.number(),
  errorRatePercent: z.number().openapi({ description: "(error + blocked) / traceCount × 100" }),
  avgDurationMs: z.number(),
};

const AgentGroupB = z.object({ agentId: z.string(), agentName: z.string(), ...Measures }).openapi("TraceStatsAgentGroup");
const ModelGroupB = z.object({ modelProvider: z.string(), modelName: z.string(), ...Measures }).openapi("TraceStatsModelGroup");
const EnvironmentGroupB = z.object({ environment: z.string(), ...Measures }).openapi("TraceStatsEnvironmentGroup");

export const STATS_PERIODS = ["1h", "24h", "7d", "30d"] as const;
export type StatsPeriod = (typeof STATS_PERIODS)[number];
export const PERIOD_MS: Record<StatsPeriod, number> = { "1h": 3_600_000, "24h": 86_400_000, "7d": 7 * 86_400_000, "30d": 30 * 86_400_000 };

export const TraceStatsB = z
  .object({
    period: z.enum(STATS_PERIODS),
    summary: z.object({
      totalTraces: z.number().int(),
      successCount: z.number().int(),
      errorCount: z.number().int().openapi({ description: "error + blocked" }),
      errorRatePercent: z.number(),
      totalInputTokens: z.number().int(),
      totalOutputTokens: z.number().int(),
      totalCostUsd: z.number(),
      avgDurationMs: z.number(),
      p50DurationMs: z.number().openapi({ description: "Exact (quantileExact over the traces' durations)" }),
      p95DurationMs: z.number(),
      p99DurationMs: z.number(),
    }),
    groups: z
      .array(z.union([AgentGroupB, ModelGroupB, EnvironmentGroupB]))
      .openapi({ description: "Empty without groupBy; ordered by traceCount desc. agent: agentId, agentName; model: modelProvider, modelName; environment: environment" }),
  })
  .openapi("TraceStats");

export function traceStatsB(period: StatsPeriod, groupBy: StatsGroupBy | undefined, s: TraceStats, agentNames: ReadonlyMap<string, string>): z.infer<typeof TraceStatsB> {
  const measures = (g: { traceCount: number; totalCostUsd: number; errorRatePercent: number; avgDurationMs: number }) => ({
    traceCount: g.traceCount,
    totalCostUsd: g.totalCostUsd,
    errorRatePercent: g.errorRatePercent,
    avgDurationMs: g.avgDurationMs,
  });
  const groups = s.groups.map((g) => {
    if (groupBy === "agent") {
      const a = g as AgentGroup;
      return { agentId: a.agentId, agentName: agentNames.get(a.agentId) ?? a.agentName, ...measures(a) };
    }
    if (groupBy === "model") {
      const m = g as ModelGroup;
      return { modelProvider: m.modelProvider, modelName: m.modelName, ...measures(m) };
    }
    const e = g as EnvironmentGroup;
    return { environment: e.environment, ...measures(e) };
  });
  return { period, summary: { ...s.summary }, groups };
}
