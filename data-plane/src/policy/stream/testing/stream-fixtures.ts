// Fixtures of the stream governance tests: an outbound policy and the trace draft of a streamed call.
import { create } from "@bufbuild/protobuf";
import { PolicyConditionsSchema, PolicySchema, type Policy } from "@agentgov/proto";
import type { TraceDraft } from "../../../trace/builder.js";

/** An active outbound policy named after its action. */
export function outboundPolicy(action: "block" | "redact", conditions: Partial<{ piiTypes: string[]; keywords: string[] }>): Policy {
  return create(PolicySchema, { id: `pol_${action}`, name: action, status: "active", action, priority: 1, conditions: create(PolicyConditionsSchema, { direction: "outbound", ...conditions }) });
}

/** The draft of a streamed call to `provider` before its answer: nothing counted, nothing found yet. */
export function streamDraft(provider: string, model: string): TraceDraft {
  const usage = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0 };
  return {
    id: "trc_test",
    tenantId: "ten_test",
    agentId: "agt_test",
    agentName: "test",
    environment: "test",
    provider,
    model,
    requestId: "req_test",
    receivedAtMs: 0,
    streamed: true,
    status: "success",
    httpStatus: 200,
    errorCode: "",
    prompt: "hello",
    completion: "",
    piiScanEnabled: true,
    promptPii: [],
    completionPii: [],
    inputExtras: "",
    inputExtrasPii: [],
    injectionScore: 0,
    evaluations: [],
    fired: [],
    blockedCount: 0,
    usage,
    tokensEstimated: false,
    cost: { inputCost: 0, outputCost: 0, totalCost: 0, pricePerMillionInput: 0, pricePerMillionOutput: 0, priceMissing: false, priceVersion: "" },
    timing: { totalMs: 0, providerMs: 0, spans: {} },
    toolCalls: [],
  };
}
