// Builds the trace of one proxied request (DESIGN.md §8): masked texts, PII spans, evaluations, cost, timing.
import { monotonicFactory } from "ulid";
import type { PiiDetection, PolicyEvaluation, QualityScore, Span, ToolCall, Trace } from "@agentgov/proto";
import { maskSpans, type PiiFinding } from "../policy/pii/index.js";
import type { Evaluation } from "../policy/engine/evaluate.js";
import type { InputExtraKind } from "../providers/input-extras.js";
import type { TraceAmendment } from "./queue.js";

const ulid = monotonicFactory();
export const newTraceId = (nowMs: number): string => `trc_${ulid(nowMs)}`;

/** A PII finding in the input outside the prompt: offsets into its text, and the kind of part it lies in. */
export interface ExtrasPiiFinding extends PiiFinding {
  source: InputExtraKind;
}

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
  /**
   * The input outside the prompt the inbound policies judged (governance.ts scanInputExtras: its parts
   * joined by "\n\n") and its PII findings; stored on the trace only when there is a finding.
   */
  inputExtras: string;
  inputExtrasPii: readonly ExtrasPiiFinding[];
  injectionScore: number;
  evaluations: Evaluation[];
  fired: string[];
  blockedCount: number;
  usage: { inputTokens: number; outputTokens: number; cachedInputTokens: number; cacheWriteTokens: number };
  tokensEstimated: boolean;
  cost: { inputCost: number; outputCost: number; totalCost: number; pricePerMillionInput: number; pricePerMillionOutput: number; priceMissing: boolean; priceVersion: string };
  timing: { totalMs: number; providerMs: number; spans: Record<string, number> };
  toolCalls: { name: string; id?: string }[];
}

// The messages are written as plain object literals, not with create(Schema, init): for proto3
// messages create() returns exactly such a plain object, but finds it field by field through the
// schema (~15 µs per trace on the hot path). The `Trace`/`Span`… types make every field required
// here, so a field added to the proto fails the type-check until it is set below.
const span = (stage: string, ms: number): Span => ({ $typeName: "governance.v1.Span", stage, durationMs: Math.round(ms * 1000) / 1000 });
const pii = (f: PiiFinding, source: string): PiiDetection => ({
  $typeName: "governance.v1.PiiDetection", entityType: f.entityType, start: f.start, end: f.end, source, score: f.score,
});

export function buildTrace(d: TraceDraft, storeRawPii: boolean): Trace {
  const overhead = Math.max(0, d.timing.totalMs - d.timing.providerMs);
  // The stages in insertion order, then "overhead" (computed; it keeps its place if a stage of that name exists).
  const spans: Span[] = [];
  let overheadListed = false;
  for (const stage in d.timing.spans) {
    spans.push(span(stage, stage === "overhead" ? ((overheadListed = true), overhead) : d.timing.spans[stage]!));
  }
  if (!overheadListed) spans.push(span("overhead", overhead));
  const piiDetections: PiiDetection[] = [];
  for (const f of d.promptPii) piiDetections.push(pii(f, "prompt"));
  for (const f of d.inputExtrasPii) piiDetections.push(pii(f, f.source));
  for (const f of d.completionPii) piiDetections.push(pii(f, "completion"));
  const trace: Trace = {
    $typeName: "governance.v1.Trace",
    id: d.id,
    tenantId: d.tenantId,
    agentId: d.agentId,
    agentName: d.agentName,
    environment: d.environment,
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
    piiDetections,
    policyEvaluations: d.evaluations.map((e): PolicyEvaluation => ({
      $typeName: "governance.v1.PolicyEvaluation", policyId: e.policyId, policyName: e.policyName, result: e.result, actionTaken: e.actionTaken,
    })),
    policiesFired: d.fired,
    policiesEvaluated: d.evaluations.length,
    policiesBlocked: d.blockedCount,
    // added once the answer has left (qualityAmendment)
    qualityScores: [],
    toolCalls: d.toolCalls.map((t): ToolCall => ({ $typeName: "governance.v1.ToolCall", name: t.name, id: t.id ?? "" })),
    // Stored texts never keep detected PII in clear (same-length masking keeps offsets valid).
    prompt: storeRawPii ? d.prompt : maskSpans(d.prompt, [...d.promptPii], "star"),
    completion: storeRawPii ? d.completion : maskSpans(d.completion, [...d.completionPii], "star"),
    streamed: d.streamed,
    inputExtras: storedInputExtras(d, storeRawPii),
  };
  // optional string session_id: absent (not "") when the request named no session, as create() leaves it.
  if (d.sessionId !== undefined) trace.sessionId = d.sessionId;
  return trace;
}

/**
 * Trace.input_extras: the extras text only when it has a finding (tool definitions can be tens of KB and
 * are not kept on every trace), its findings masked like the prompt's unless raw storage is on.
 */
function storedInputExtras(d: TraceDraft, storeRawPii: boolean): string {
  if (d.inputExtrasPii.length === 0) return "";
  return storeRawPii ? d.inputExtras : maskSpans(d.inputExtras, d.inputExtrasPii, "star");
}

/**
 * The fields a trace gets after its answer has left (DESIGN.md §8: quality scores do not delay the
 * response): its quality scores and the quality_score span that timed them (after "overhead").
 */
export function qualityAmendment(scores: readonly { scorer: string; score: number }[], ms: number): TraceAmendment {
  return {
    qualityScores: scores.map((q): QualityScore => ({ $typeName: "governance.v1.QualityScore", scorer: q.scorer, score: q.score })),
    spans: [span("quality_score", ms)],
  };
}
