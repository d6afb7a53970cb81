// buildTrace writes the messages as plain literals: the result equals what create(TraceSchema, …) built
// (the reference below is the builder as first written) and encodes to the same bytes.
import test from "ava";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { PiiDetectionSchema, PolicyEvaluationSchema, QualityScoreSchema, SpanSchema, ToolCallSchema, TraceSchema, type Trace } from "@agentgov/proto";
import { maskSpans } from "../policy/pii/index.js";
import { buildTrace, qualityAmendment, type ExtrasPiiFinding, type TraceDraft } from "./builder.js";
import { encodeTrace } from "./trace-encoding.js";

function reference(d: TraceDraft, storeRawPii: boolean): Trace {
  const overhead = Math.max(0, d.timing.totalMs - d.timing.providerMs);
  const spans = Object.entries({ ...d.timing.spans, overhead }).map(([stage, ms]) => create(SpanSchema, { stage, durationMs: Math.round(ms * 1000) / 1000 }));
  return create(TraceSchema, {
    id: d.id, tenantId: d.tenantId, agentId: d.agentId, agentName: d.agentName, environment: d.environment, sessionId: d.sessionId,
    provider: d.provider, model: d.model, status: d.status, timestampMs: BigInt(d.receivedAtMs), requestId: d.requestId, keyId: d.keyId ?? "",
    httpStatus: d.httpStatus, errorCode: d.errorCode, inputTokens: d.usage.inputTokens, outputTokens: d.usage.outputTokens,
    cachedInputTokens: d.usage.cachedInputTokens, cacheWriteTokens: d.usage.cacheWriteTokens, tokensEstimated: d.tokensEstimated,
    costUsd: d.cost.totalCost, inputCost: d.cost.inputCost, outputCost: d.cost.outputCost, pricePerMillionInput: d.cost.pricePerMillionInput,
    pricePerMillionOutput: d.cost.pricePerMillionOutput, priceVersion: d.cost.priceVersion, priceMissing: d.cost.priceMissing,
    latencyMs: Math.round(d.timing.totalMs * 1000) / 1000, providerMs: Math.round(d.timing.providerMs * 1000) / 1000, overheadMs: Math.round(overhead * 1000) / 1000,
    spans, injectionScore: d.injectionScore, piiScanEnabled: d.piiScanEnabled,
    piiDetections: [
      ...d.promptPii.map((f) => create(PiiDetectionSchema, { entityType: f.entityType, start: f.start, end: f.end, source: "prompt", score: f.score })),
      ...d.inputExtrasPii.map((f) => create(PiiDetectionSchema, { entityType: f.entityType, start: f.start, end: f.end, source: f.source, score: f.score })),
      ...d.completionPii.map((f) => create(PiiDetectionSchema, { entityType: f.entityType, start: f.start, end: f.end, source: "completion", score: f.score })),
    ],
    policyEvaluations: d.evaluations.map((e) => create(PolicyEvaluationSchema, e)),
    policiesFired: d.fired, policiesEvaluated: d.evaluations.length, policiesBlocked: d.blockedCount,
    qualityScores: [],
    toolCalls: d.toolCalls.map((t) => create(ToolCallSchema, { name: t.name, id: t.id ?? "" })),
    prompt: storeRawPii ? d.prompt : maskSpans(d.prompt, [...d.promptPii], "star"),
    completion: storeRawPii ? d.completion : maskSpans(d.completion, [...d.completionPii], "star"),
    streamed: d.streamed,
    inputExtras: d.inputExtrasPii.length === 0 ? "" : storeRawPii ? d.inputExtras : maskSpans(d.inputExtras, [...d.inputExtrasPii], "star"),
  });
}

// The extras text of a request with a tool, a response schema, a prediction and a participant name, each
// part holding PII (joined by "\n\n" as governance.ts scanInputExtras joins them).
const EXTRAS_PARTS: [ExtrasPiiFinding["source"], string, string][] = [
  ["tool_definition", "Look up a customer, e.g. SSN 536-22-8741.", "536-22-8741"],
  ["response_schema", "The contact, like a@b.co", "a@b.co"],
  ["prediction", "card: 4111 1111 1111 1111", "4111 1111 1111 1111"],
  ["name", "536-22-8741", "536-22-8741"],
];
const EXTRAS = EXTRAS_PARTS.map(([, text]) => text).join("\n\n");
const EXTRAS_PII: ExtrasPiiFinding[] = (() => {
  let at = 0;
  return EXTRAS_PARTS.map(([source, text, value]) => {
    const start = at + text.indexOf(value);
    at += text.length + 2;
    return { entityType: source === "response_schema" ? "email" : source === "prediction" ? "credit_card" : "ssn", start, end: start + value.length, score: 0.9, source };
  });
})();

function draft(over: Partial<TraceDraft> = {}): TraceDraft {
  return {
    id: "trc_01JZ00000000000000000000AB", tenantId: "ten_1", agentId: "agt_1", agentName: "bot", environment: "prod", sessionId: "ses_1",
    provider: "openai", model: "gpt-4o-mini", requestId: "req_1", keyId: "key_1", receivedAtMs: 1_760_000_000_123, streamed: false,
    status: "success", httpStatus: 200, errorCode: "", prompt: "mail me at a@b.co please", completion: "ok, a@b.co noted",
    piiScanEnabled: true,
    promptPii: [{ entityType: "email", start: 11, end: 17, score: 0.99 } as TraceDraft["promptPii"][number]],
    completionPii: [{ entityType: "email", start: 4, end: 10, score: 0.98 } as TraceDraft["completionPii"][number]],
    inputExtras: EXTRAS,
    inputExtrasPii: EXTRAS_PII,
    injectionScore: 0.1,
    evaluations: [{ policyId: "pol_1", policyName: "redact", result: "fail", actionTaken: "redact" }],
    fired: ["pol_1"], blockedCount: 0,
    usage: { inputTokens: 12, outputTokens: 5, cachedInputTokens: 1, cacheWriteTokens: 0 }, tokensEstimated: false,
    cost: { inputCost: 0.1, outputCost: 0.2, totalCost: 0.3, pricePerMillionInput: 0.15, pricePerMillionOutput: 0.6, priceMissing: false, priceVersion: "v1" },
    timing: { totalMs: 12.34567, providerMs: 10.1, spans: { pii_scan: 0.12345, policy_eval: 0.0421, provider: 10.1, quality_score: 0.05 } },
    toolCalls: [{ name: "f", id: "call_1" }, { name: "g" }],
    ...over,
  };
}

test("buildTrace equals the create()-built trace and encodes to the same bytes", (t) => {
  const cases: [string, TraceDraft][] = [
    ["full", draft()],
    ["no session, no key", draft({ sessionId: undefined, keyId: undefined })],
    ["empty session", draft({ sessionId: "" })],
    ["empty lists", draft({ promptPii: [], completionPii: [], inputExtrasPii: [], evaluations: [], fired: [], toolCalls: [], timing: { totalMs: 1, providerMs: 2, spans: {} } })],
    ["no input outside the prompt", draft({ inputExtras: "", inputExtrasPii: [] })],
    ["an 'overhead' stage keeps its place", draft({ timing: { totalMs: 5, providerMs: 1, spans: { pii_scan: 1, overhead: 99, provider: 1 } } })],
  ];
  for (const [name, d] of cases) {
    for (const raw of [false, true]) {
      const got = buildTrace(d, raw);
      const want = reference(d, raw);
      t.deepEqual(got, want, name);
      t.is("sessionId" in got, "sessionId" in want, `${name}: session_id presence`);
      t.deepEqual(encodeTrace(got), Buffer.from(toBinary(TraceSchema, want)), `${name}: bytes`);
    }
  }
});

test("qualityAmendment: the scores and a rounded quality_score span, which appended to the trace's encoding give the scored trace", (t) => {
  const a = qualityAmendment([{ scorer: "relevance", score: 0.5 }, { scorer: "non_repetition", score: 1 }], 0.0456789);
  t.deepEqual(a, {
    qualityScores: [create(QualityScoreSchema, { scorer: "relevance", score: 0.5 }), create(QualityScoreSchema, { scorer: "non_repetition", score: 1 })],
    spans: [create(SpanSchema, { stage: "quality_score", durationMs: 0.046 })],
  });
  const trace = buildTrace(draft(), false);
  const fields = toBinary(TraceSchema, create(TraceSchema, { qualityScores: a.qualityScores, spans: a.spans }));
  const amended = fromBinary(TraceSchema, Buffer.concat([encodeTrace(trace), fields]));
  t.deepEqual(amended.qualityScores, a.qualityScores);
  t.deepEqual(amended.spans.map((s) => s.stage), [...trace.spans.map((s) => s.stage), "quality_score"]);
  t.is(amended.prompt, trace.prompt);
});

test("input outside the prompt: each finding has its part's kind as source and offsets into input_extras, which is masked like the prompt", (t) => {
  const trace = buildTrace(draft(), false);
  const extras = trace.piiDetections.filter((d) => d.source !== "prompt" && d.source !== "completion");
  t.deepEqual(extras.map((d) => d.source), ["tool_definition", "response_schema", "prediction", "name"]);
  // Input first: the prompt's findings, the extras', then the completion's.
  t.deepEqual(trace.piiDetections.map((d) => d.source), ["prompt", "tool_definition", "response_schema", "prediction", "name", "completion"]);
  for (const [i, d] of extras.entries()) {
    const value = EXTRAS_PARTS[i]![2];
    t.is(EXTRAS.slice(d.start, d.end), value, `${d.source}: the offsets select the value in the text`);
    t.is(trace.inputExtras.slice(d.start, d.end), "*".repeat(value.length), `${d.source}: stored masked`);
  }
  t.is(trace.inputExtras.length, EXTRAS.length);
  t.is(trace.inputExtras, "Look up a customer, e.g. SSN ***********.\n\nThe contact, like ******\n\ncard: *******************\n\n***********");
  // Raw storage keeps the text as it was read.
  t.is(buildTrace(draft(), true).inputExtras, EXTRAS);
});

test("input outside the prompt without a finding is not stored: input_extras stays empty", (t) => {
  for (const raw of [false, true]) {
    const trace = buildTrace(draft({ inputExtras: "a 20 KB tool definition without PII", inputExtrasPii: [] }), raw);
    t.is(trace.inputExtras, "");
    t.deepEqual(trace.piiDetections.map((d) => d.source), ["prompt", "completion"]);
  }
});
