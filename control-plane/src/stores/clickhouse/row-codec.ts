// Converts between the protobuf Trace message and a `traces` row (JSONEachRow object). Nested
// repeated messages become parallel arrays; strings are made well-formed UTF-16 (see sql-literal)
// so that what is stored compares equal to filter values; non-finite numbers are stored as 0.

import { maskSpans } from "@agentgov/data-plane/pii-mask";
import {
  create,
  PiiDetectionSchema,
  PolicyEvaluationSchema,
  QualityScoreSchema,
  SpanSchema,
  ToolCallSchema,
  TraceSchema,
  type Trace,
} from "@agentgov/proto";
import type { EngineRow } from "./engine.js";
import { TraceStoreError } from "./errors.js";
import { bool, nullableStr, num, numArray, str, strArray } from "./json-values.js";
import { wellFormed } from "./sql-literal.js";
import { formatDateTime, MAX_MS, MIN_MS } from "./time.js";
import { writtenDouble } from "./written-double.js";

export interface EncodeReport {
  /** Names of numeric fields that were NaN/±Infinity and stored as 0. */
  nonFinite: string[];
}

function finite(value: number, field: string, report: EncodeReport): number {
  if (Number.isFinite(value)) return value;
  report.nonFinite.push(field);
  return 0;
}

const s = wellFormed;

/** The sources of PII detections whose offsets point into input_extras (the input outside the prompt). */
export const INPUT_EXTRAS_SOURCES: ReadonlySet<string> = new Set(["tool_definition", "response_schema", "prediction", "name"]);

/** Which stored text a detection of `source` points into. */
type TextField = "prompt" | "completion" | "input_extras";

/** The stored text a detection's offsets point into, by its source (unknown sources: none). */
export function textOfSource(source: string): TextField | undefined {
  if (source === "prompt" || source === "completion") return source;
  return INPUT_EXTRAS_SOURCES.has(source) ? "input_extras" : undefined;
}

/** `text` with the trace's PII detections that point into `field` as `*` of the same length (TRACE_STORE_RAW_PII=false). */
function masked(t: Trace, text: string, field: TextField): string {
  // Well-formed after masking too: a span may start or end inside a surrogate pair (stored as U+FFFD, as
  // the transcoder's UTF-8 encoding of the masked text stores it).
  return s(maskSpans(s(text), t.piiDetections.filter((d) => textOfSource(d.source) === field), "star"));
}

/**
 * The row for one trace; `version` orders copies of the same trace (the highest wins). Unless
 * `storeRawPii`, prompt, completion and input_extras keep no detected PII in clear.
 */
export function traceToRow(t: Trace, version: number, report: EncodeReport = { nonFinite: [] }, storeRawPii = false): EngineRow {
  if (!t.tenantId) throw new TraceStoreError("invalid_argument", "trace without tenant_id");
  if (!t.id) throw new TraceStoreError("invalid_argument", "trace without id");
  const ms = Number(t.timestampMs);
  if (!Number.isSafeInteger(ms) || ms < MIN_MS || ms > MAX_MS) {
    throw new TraceStoreError("invalid_argument", `trace ${t.id}: timestamp_ms out of range: ${t.timestampMs}`);
  }
  const f = (v: number, field: string): number => finite(v, field, report);
  return {
    tenant_id: s(t.tenantId),
    id: s(t.id),
    ts: formatDateTime(ms),
    timestamp_ms: ms,
    agent_id: s(t.agentId),
    agent_name: s(t.agentName),
    environment: s(t.environment),
    session_id: t.sessionId === undefined ? null : s(t.sessionId),
    provider: s(t.provider),
    model: s(t.model),
    status: s(t.status),
    request_id: s(t.requestId),
    http_status: t.httpStatus,
    error_code: s(t.errorCode),
    input_tokens: t.inputTokens,
    output_tokens: t.outputTokens,
    cached_input_tokens: t.cachedInputTokens,
    cache_write_tokens: t.cacheWriteTokens,
    tokens_estimated: t.tokensEstimated ? 1 : 0,
    cost_usd: f(t.costUsd, "cost_usd"),
    input_cost: f(t.inputCost, "input_cost"),
    output_cost: f(t.outputCost, "output_cost"),
    price_per_million_input: f(t.pricePerMillionInput, "price_per_million_input"),
    price_per_million_output: f(t.pricePerMillionOutput, "price_per_million_output"),
    price_version: s(t.priceVersion),
    price_missing: t.priceMissing ? 1 : 0,
    latency_ms: f(t.latencyMs, "latency_ms"),
    provider_ms: f(t.providerMs, "provider_ms"),
    overhead_ms: f(t.overheadMs, "overhead_ms"),
    span_stages: t.spans.map((x) => s(x.stage)),
    span_durations_ms: t.spans.map((x) => f(x.durationMs, "spans.duration_ms")),
    injection_score: f(t.injectionScore, "injection_score"),
    pii_scan_enabled: t.piiScanEnabled ? 1 : 0,
    has_pii: t.piiDetections.length > 0 ? 1 : 0,
    pii_entity_types: t.piiDetections.map((x) => s(x.entityType)),
    pii_starts: t.piiDetections.map((x) => x.start),
    pii_ends: t.piiDetections.map((x) => x.end),
    pii_sources: t.piiDetections.map((x) => s(x.source)),
    pii_scores: t.piiDetections.map((x) => f(x.score, "pii_detections.score")),
    policy_ids: t.policyEvaluations.map((x) => s(x.policyId)),
    policy_names: t.policyEvaluations.map((x) => s(x.policyName)),
    policy_results: t.policyEvaluations.map((x) => s(x.result)),
    policy_actions: t.policyEvaluations.map((x) => s(x.actionTaken)),
    policies_fired: t.policiesFired.map((x) => s(x)),
    policies_evaluated: t.policiesEvaluated,
    policies_blocked: t.policiesBlocked,
    quality_scorers: t.qualityScores.map((x) => s(x.scorer)),
    quality_scores: t.qualityScores.map((x) => f(x.score, "quality_scores.score")),
    tool_names: t.toolCalls.map((x) => s(x.name)),
    tool_ids: t.toolCalls.map((x) => s(x.id)),
    prompt: storeRawPii ? s(t.prompt) : masked(t, t.prompt, "prompt"),
    completion: storeRawPii ? s(t.completion) : masked(t, t.completion, "completion"),
    input_extras: storeRawPii ? s(t.inputExtras) : masked(t, t.inputExtras, "input_extras"),
    streamed: t.streamed ? 1 : 0,
    version,
  };
}

function zip<T>(n: number, make: (i: number) => T): T[] {
  return Array.from({ length: n }, (_, i) => make(i));
}

/** A Float64 column's value as the store wrote it (written-double.ts: ClickHouse 18.16 may read it one ulp off). */
const f64 = (value: unknown): number => writtenDouble(num(value));
const f64Array = (value: unknown): number[] => numArray(value).map(writtenDouble);

/** The Trace of a row (prompt, completion and input_extras are "" when the row was read without them). */
export function rowToTrace(r: EngineRow): Trace {
  const spanStages = strArray(r["span_stages"]);
  const spanDurations = f64Array(r["span_durations_ms"]);
  const piiTypes = strArray(r["pii_entity_types"]);
  const piiStarts = numArray(r["pii_starts"]);
  const piiEnds = numArray(r["pii_ends"]);
  const piiSources = strArray(r["pii_sources"]);
  const piiScores = f64Array(r["pii_scores"]);
  const policyIds = strArray(r["policy_ids"]);
  const policyNames = strArray(r["policy_names"]);
  const policyResults = strArray(r["policy_results"]);
  const policyActions = strArray(r["policy_actions"]);
  const scorers = strArray(r["quality_scorers"]);
  const scores = f64Array(r["quality_scores"]);
  const toolNames = strArray(r["tool_names"]);
  const toolIds = strArray(r["tool_ids"]);
  const sessionId = nullableStr(r["session_id"]);
  return create(TraceSchema, {
    id: str(r["id"]),
    tenantId: str(r["tenant_id"]),
    agentId: str(r["agent_id"]),
    agentName: str(r["agent_name"]),
    environment: str(r["environment"]),
    ...(sessionId === undefined ? {} : { sessionId }),
    provider: str(r["provider"]),
    model: str(r["model"]),
    status: str(r["status"]),
    timestampMs: BigInt(num(r["timestamp_ms"])),
    requestId: str(r["request_id"]),
    httpStatus: num(r["http_status"]),
    errorCode: str(r["error_code"]),
    inputTokens: num(r["input_tokens"]),
    outputTokens: num(r["output_tokens"]),
    cachedInputTokens: num(r["cached_input_tokens"]),
    cacheWriteTokens: num(r["cache_write_tokens"]),
    tokensEstimated: bool(r["tokens_estimated"]),
    costUsd: f64(r["cost_usd"]),
    inputCost: f64(r["input_cost"]),
    outputCost: f64(r["output_cost"]),
    pricePerMillionInput: f64(r["price_per_million_input"]),
    pricePerMillionOutput: f64(r["price_per_million_output"]),
    priceVersion: str(r["price_version"]),
    priceMissing: bool(r["price_missing"]),
    latencyMs: f64(r["latency_ms"]),
    providerMs: f64(r["provider_ms"]),
    overheadMs: f64(r["overhead_ms"]),
    spans: zip(Math.min(spanStages.length, spanDurations.length), (i) =>
      create(SpanSchema, { stage: spanStages[i], durationMs: spanDurations[i] }),
    ),
    injectionScore: f64(r["injection_score"]),
    piiScanEnabled: bool(r["pii_scan_enabled"]),
    piiDetections: zip(
      Math.min(piiTypes.length, piiStarts.length, piiEnds.length, piiSources.length, piiScores.length),
      (i) =>
        create(PiiDetectionSchema, {
          entityType: piiTypes[i],
          start: piiStarts[i],
          end: piiEnds[i],
          source: piiSources[i],
          score: piiScores[i],
        }),
    ),
    policyEvaluations: zip(
      Math.min(policyIds.length, policyNames.length, policyResults.length, policyActions.length),
      (i) =>
        create(PolicyEvaluationSchema, {
          policyId: policyIds[i],
          policyName: policyNames[i],
          result: policyResults[i],
          actionTaken: policyActions[i],
        }),
    ),
    policiesFired: strArray(r["policies_fired"]),
    policiesEvaluated: num(r["policies_evaluated"]),
    policiesBlocked: num(r["policies_blocked"]),
    qualityScores: zip(Math.min(scorers.length, scores.length), (i) =>
      create(QualityScoreSchema, { scorer: scorers[i], score: scores[i] }),
    ),
    toolCalls: zip(Math.min(toolNames.length, toolIds.length), (i) =>
      create(ToolCallSchema, { name: toolNames[i], id: toolIds[i] }),
    ),
    prompt: str(r["prompt"]),
    completion: str(r["completion"]),
    streamed: bool(r["streamed"]),
    inputExtras: str(r["input_extras"]),
  });
}
