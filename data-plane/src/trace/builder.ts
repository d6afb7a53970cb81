// Builds the trace of one proxied request (DESIGN.md §8): masked texts, PII spans, evaluations, cost, timing.
import { create } from "@bufbuild/protobuf";
import { monotonicFactory } from "ulid";
import {
  PiiDetectionSchema, PolicyEvaluationSchema, QualityScoreSchema, SpanSchema, ToolCallSchema, TraceSchema, type Trace,
} from "@agentgov/proto";
import { maskSpans, type PiiFinding } from "../policy/pii/index.js";
import type { Evaluation } from "../policy/engine/evaluate.js";

const ulid = monotonicFactory();
export const newTraceId = (nowMs: number): string => `trc_${ulid(nowMs)}`;

export interface TraceDraft {
  id: string;
  tenantId: string;
  agentId: string;
  agentName: string;
  environment: string;
  sessionId?: string;
  provider: string;
  model: string;
  requestId: string;
  /** The X-Service-Key's id (its lastUsedAt moves when the trace is ingested). */
  keyId?: string;
  receivedAtMs: number;
  streamed: boolean;
  status: "success" | "error" | "blocked";
  httpStatus: number;
  errorCode: string;
  prompt: string;
  completion: string;
  piiScanEnabled: boolean;
  promptPii: readonly PiiFinding[];
  completionPii: readonly PiiFinding[];
  injectionScore: number;
  evaluations: Evaluation[];
  fired: string[];
  blockedCount: number;
  usage: { inputTokens: number; outputTokens: number; cachedInputTokens: number; cacheWriteTokens: number };
  tokensEstimated: boolean;
  cost: { inputCost: number; outputCost: number; totalCost: number; pricePerMillionInput: number; pricePerMillionOutput: number; priceMissing: boolean; priceVersion: string };
  timing: { totalMs: number; providerMs: number; spans: Record<string, number> };
  toolCalls: { name: string; id?: string }[];
  qualityScores: { scorer: string; score: number }[];
}

export function buildTrace(d: TraceDraft, storeRawPii: boolean): Trace {
  const overhead = Math.max(0, d.timing.totalMs - d.timing.providerMs);
  const spans = Object.entries({ ...d.timing.spans, overhead }).map(([stage, ms]) => create(SpanSchema, { stage, durationMs: Math.round(ms * 1000) / 1000 }));
  return create(TraceSchema, {
    id: d.id,
    tenantId: d.tenantId,
    agentId: d.agentId,
    agentName: d.agentName,
    environment: d.environment,
    sessionId: d.sessionId,
    provider: d.provider,
    model: d.model,
    status: d.status,
    timestampMs: BigInt(d.receivedAtMs),
    requestId: d.requestId,
    keyId: d.keyId ?? "",
    httpStatus: d.httpStatus,
    errorCode: d.errorCode,
    inputTokens: d.usage.inputTokens,
    outputTokens: d.usage.outputTokens,
    cachedInputTokens: d.usage.cachedInputTokens,
    cacheWriteTokens: d.usage.cacheWriteTokens,
    tokensEstimated: d.tokensEstimated,
    costUsd: d.cost.totalCost,
    inputCost: d.cost.inputCost,
    outputCost: d.cost.outputCost,
    pricePerMillionInput: d.cost.pricePerMillionInput,
    pricePerMillionOutput: d.cost.pricePerMillionOutput,
    priceVersion: d.cost.priceVersion,
    priceMissing: d.cost.priceMissing,
    latencyMs: Math.round(d.timing.totalMs * 1000) / 1000,
    providerMs: Math.round(d.timing.providerMs * 1000) / 1000,
    overheadMs: Math.round(overhead * 1000) / 1000,
    spans,
    injectionScore: d.injectionScore,
    piiScanEnabled: d.piiScanEnabled,
    piiDetections: [
      ...d.promptPii.map((f) => create(PiiDetectionSchema, { entityType: f.entityType, start: f.start, end: f.end, source: "prompt", score: f.score })),
      ...d.completionPii.map((f) => create(PiiDetectionSchema, { entityType: f.entityType, start: f.start, end: f.end, source: "completion", score: f.score })),
    ],
    policyEvaluations: d.evaluations.map((e) => create(PolicyEvaluationSchema, e)),
    policiesFired: d.fired,
    policiesEvaluated: d.evaluations.length,
    policiesBlocked: d.blockedCount,
    qualityScores: d.qualityScores.map((q) => create(QualityScoreSchema, q)),
    toolCalls: d.toolCalls.map((t) => create(ToolCallSchema, { name: t.name, id: t.id ?? "" })),
    // Stored texts never keep detected PII in clear (same-length masking keeps offsets valid).
    prompt: storeRawPii ? d.prompt : maskSpans(d.prompt, [...d.promptPii], "star"),
    completion: storeRawPii ? d.completion : maskSpans(d.completion, [...d.completionPii], "star"),
    streamed: d.streamed,
  });
}
