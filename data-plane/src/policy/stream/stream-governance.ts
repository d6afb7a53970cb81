// The proxy's StreamGovernorFactory (proxy/stream-governor.ts): outbound policies of a streamed answer.
// - SSE with block/redact policies: the windowed governor (governor.ts) rewrites text deltas in place and
//   may end the stream with the provider's native error event;
// - a non-SSE stream (Gemini's JSON-array stream) with block/redact policies is held whole and governed
//   as one JSON answer at its end (it cannot be rewritten piecewise);
// - only log policies: bytes pass through untouched.
// In every case the outbound phase is recorded on the trace draft when the stream ends (or is ended):
// every applicable outbound policy evaluated on the whole output (the completion, then the reasoning
// the model showed beside it: policy/thinking governedOutputText), its PII, fired policies, and status
// `blocked` when a block policy ended the stream.
import { performance } from "node:perf_hooks";
import type { Policy } from "@agentgov/proto";
import type { ResponseFacts, StreamObserver } from "../../providers/index.js";
import { estimateTokens } from "../../providers/index.js";
import { JsonArrayStream } from "../../providers/json-array-stream.js";
import type { StreamGovernor as ProxyStreamGovernor, StreamGovernorContext, StreamGovernorFactory } from "../../proxy/stream-governor.js";
import { detectPii } from "../pii/index.js";
import { governedOutputText } from "../thinking/index.js";
import { mapSlots, toolArgumentsText } from "../../providers/text-slots.js";
import { quoteRedactor } from "../../proxy/governance.js";
import { applicablePolicies } from "../engine/applicable.js";
import { evaluatePolicies, partRedactor, redactSpans, applyRedaction, textEvidence, withStreamBlock, type PhaseOutcome } from "../engine/evaluate.js";
import { createStreamGovernor, type StreamGovernor } from "./governor.js";

const EMPTY = Buffer.alloc(0);

export const governStream: StreamGovernorFactory = (ctx) => {
  const policies = applicablePolicies(ctx.policies, ctx.agent, "outbound");
  if (policies.length === 0) return undefined;
  return new RecordingGovernor(ctx, policies);
};

/**
 * A held JSON-array stream's body: the whole JSON when it parses (a leading UTF-8 BOM skipped), else the
 * complete elements of the array it began (those the stream observer read; none when it is no array);
 * null when empty.
 */
function heldBody(raw: Buffer): { whole: true; json: unknown } | { whole: false; elements: unknown[] } | null {
  let text = raw.toString("utf8");
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.trim() === "") return null;
  try {
    return { whole: true, json: JSON.parse(text) as unknown };
  } catch {
    // not whole: below
  }
  const elements: unknown[] = [];
  if (text.trimStart().startsWith("[")) {
    const split = new JsonArrayStream((element) => {
      try {
        elements.push(JSON.parse(element));
      } catch {
        // an element that does not parse is dropped (the observer skipped it too)
      }
    });
    split.push(text);
    split.end();
  }
  return { whole: false, elements };
}

class RecordingGovernor implements ProxyStreamGovernor {
  private readonly observer: StreamObserver;
  private readonly inner: StreamGovernor | null;
  /** Non-SSE stream with block/redact policies: held whole, governed at the end. */
  private readonly held: Buffer[] | null;
  private readonly inputTokens: number;
  private finished = false;
  private blocked: Policy | undefined;
  private spentMs = 0;
  /** The whole-output judgement made at the stream's end marker (finalCheck). */
  private final: { facts: ResponseFacts; outcome: PhaseOutcome } | undefined;
  /** What the last evaluation judged: the output text, it plus the tool arguments, and its PII. */
  private judged: { text: string; judged: string; pii: ReturnType<typeof detectPii> | null } = { text: "", judged: "", pii: null };
  /** The part of spentMs spent scanning the completion for PII: reported as pii_scan, not policy_eval. */
  private piiMs = 0;

  constructor(
    private readonly ctx: StreamGovernorContext,
    private readonly policies: Policy[],
  ) {
    this.observer = ctx.adapter.streamObserver();
    const sse = ctx.contentType.includes("text/event-stream");
    this.inputTokens = policies.some((p) => p.conditions?.maxInputTokens !== undefined) ? estimateTokens(ctx.draft.prompt) : 0;
    const acting = policies.some((p) => p.action === "block" || p.action === "redact");
    this.inner = sse
      ? createStreamGovernor({
          wire: ctx.adapter.wire,
          policies,
          piiDetection: ctx.agent.piiDetection,
          model: ctx.draft.model,
          inputTokens: this.inputTokens,
          injectionScore: ctx.draft.injectionScore,
          errorEvent: (p) => this.errorEvent(p),
          finalCheck: () => this.finalCheck(),
          ...(ctx.redactedThinking ? { redactedThinking: ctx.redactedThinking } : {}),
        })
      : null;
    this.held = !sse && acting ? [] : null;
  }

  get stopped(): boolean {
    return this.blocked !== undefined;
  }

  transform(chunk: Buffer): Buffer {
    if (this.finished) return EMPTY;
    const t = performance.now();
    try {
      this.observer.push(chunk);
      if (this.held) {
        this.held.push(chunk);
        return EMPTY;
      }
      if (!this.inner) return chunk;
      const out = this.inner.transform(chunk);
      if (this.inner.stopped) this.finish(this.inner.blockedBy, this.final?.facts, this.final?.outcome);
      return out ?? EMPTY;
    } finally {
      this.spentMs += performance.now() - t;
    }
  }

  end(): Buffer {
    const t = performance.now();
    try {
      if (this.finished) return EMPTY;
      if (this.held) return this.endHeld();
      if (!this.inner) {
        this.finish(undefined);
        return EMPTY;
      }
      // The whole completion is judged once more before the held tail leaves: a block that only the
      // complete text shows ends the stream instead of releasing the tail (at the end marker already,
      // when the stream has one: finalCheck).
      const facts = this.final?.facts ?? this.observer.end();
      const outcome = this.final?.outcome ?? this.evaluate(facts);
      if (outcome.blockedBy) {
        this.finish(outcome.blockedBy, facts, outcome);
        return Buffer.from(this.errorEvent(outcome.blockedBy), "utf8");
      }
      // A stream cut before its end marker: the held tail is an unfinished piece, dropped (governor.ts end).
      const { extra } = this.inner.end(facts.endedEarly === true);
      if (this.inner.stopped) {
        this.finish(this.inner.blockedBy, facts);
        return extra ?? EMPTY;
      }
      this.finish(undefined, facts, outcome);
      return extra ?? EMPTY;
    } finally {
      this.spentMs += performance.now() - t;
      const spans = this.ctx.draft.timing.spans;
      // The completion's PII scans (the windowed ones and the final one) are pii_scan, the rest policy_eval.
      const piiMs = this.piiMs + (this.inner ? this.inner.piiMs : 0);
      spans.policy_eval = (spans.policy_eval ?? 0) + (this.spentMs - piiMs);
      if (piiMs > 0) spans.pii_scan = (spans.pii_scan ?? 0) + piiMs;
    }
  }

  /**
   * A JSON-array stream held whole: redacted or replaced by an error element, as one answer. A body that
   * does not parse (the provider's body ended, or its connection broke, before the closing "]") is never
   * passed on as it came (its unfinished tail was judged by nobody): its complete elements, the ones the
   * observer read and the policies judged, are governed the same way and written as a JSON array ending
   * with an error element, and the trace records the failure (`unreadable_answer`; the proxy puts its
   * upstream failure code there when the connection broke).
   */
  private endHeld(): Buffer {
    const raw = Buffer.concat(this.held ?? []);
    const facts = this.observer.end();
    const outcome = this.evaluate(facts);
    this.finish(outcome.blockedBy, facts, outcome);
    if (outcome.blockedBy) {
      const p = outcome.blockedBy;
      return Buffer.from(JSON.stringify([{ error: { code: 403, message: `response blocked by policy "${p.name}"`, status: "PERMISSION_DENIED", policy_id: p.id, trace_id: this.ctx.draft.id } }]), "utf8");
    }
    const body = heldBody(raw);
    if (body === null) return raw; // empty: nothing to judge
    if (!body.whole) {
      this.ctx.draft.status = "error";
      this.ctx.draft.errorCode = "unreadable_answer";
    }
    if (outcome.redactors.length === 0) {
      return body.whole ? raw : Buffer.from(JSON.stringify([...body.elements, this.cutElement()]), "utf8");
    }
    const json = body.whole ? body.json : body.elements;
    const { text, judged, pii } = this.judged;
    const spans = redactSpans(judged, outcome.redactors, pii);
    const fallback = (part: string) => applyRedaction(part, redactSpans(part, outcome.redactors, this.ctx.agent.piiDetection ? detectPii(part) : null));
    // One redactor over completion then reasoning parts, in the order governedOutputText joins them.
    const r = partRedactor(text, spans, fallback);
    let redacted = this.ctx.adapter.mapReasoningText(this.ctx.adapter.mapCompletionText(json, r), r);
    this.ctx.adapter.afterRedaction?.(json, redacted, fallback); // grounding segments and citation sources point into the answer
    if (judged !== text && this.ctx.adapter.answerToolSlots) {
      // The functionCall args, leaf by leaf, as a JSON answer's are: each scanned alone, then every value
      // redacted anywhere replaced.
      redacted = mapSlots(redacted, this.ctx.adapter.answerToolSlots, quoteRedactor(outcome.redactors, this.ctx.agent.piiDetection, { text: judged, pii }));
    }
    return Buffer.from(JSON.stringify(body.whole ? redacted : [...(redacted as unknown[]), this.cutElement()]), "utf8");
  }

  /** The error element that ends a held JSON-array stream the provider did not finish (Gemini's error form). */
  private cutElement(): unknown {
    const d = this.ctx.draft;
    return { error: { code: 502, message: `${this.ctx.adapter.name} answer ended before it was complete: its unfinished part was dropped`, status: "UNAVAILABLE", trace_id: d.id, request_id: d.requestId } };
  }

  /**
   * The windowed governor met the stream's end marker: the whole output is judged now, before the held
   * tail and the marker leave (the observer has read every byte up to the marker). Kept for end().
   */
  private finalCheck(): Policy | undefined {
    const facts = this.observer.end();
    const outcome = this.evaluate(facts);
    this.final = { facts, outcome };
    return outcome.blockedBy;
  }

  private errorEvent(p: Policy): string {
    const d = this.ctx.draft;
    return this.ctx.adapter.errorEvent(`response blocked by policy "${p.name}"`, "policy_violation", {
      status: 403,
      details: { policy_id: p.id, trace_id: d.id, request_id: d.requestId },
    });
  }

  private piiOf(text: string) {
    if (!this.ctx.agent.piiDetection) return null;
    const t = performance.now();
    const pii = detectPii(text);
    this.piiMs += performance.now() - t;
    return pii;
  }

  /**
   * Every outbound policy on the whole output: the completion, the reasoning shown beside it, then the
   * string leaves of the tool calls' arguments (as JSON answers are judged: the agent runs the calls).
   */
  private evaluate(facts: ResponseFacts): PhaseOutcome {
    const text = governedOutputText(facts.completionText, facts.reasoningText);
    const tools = facts.toolArguments ? toolArgumentsText(facts.toolArguments) : "";
    const judged = tools === "" ? text : `${text}\n\n${tools}`;
    const pii = this.piiOf(judged);
    this.judged = { text, judged, pii };
    // Findings in the reasoning lie past the completion's end; maskSpans tolerates such offsets. Those in
    // the tool arguments are not the completion's.
    this.ctx.draft.completionPii = pii === null ? [] : judged === text ? pii : pii.filter((f) => f.start < text.length);
    return evaluatePolicies(
      this.policies,
      textEvidence({
        text: judged,
        model: this.ctx.draft.model,
        inputTokens: facts.usage?.inputTokens ?? this.inputTokens,
        pii,
        injectionScore: this.ctx.draft.injectionScore,
      }),
    );
  }

  /** Records the outbound phase on the draft, once. */
  private finish(blockedBy: Policy | undefined, facts?: ResponseFacts, outcome?: PhaseOutcome): void {
    if (this.finished) return;
    this.finished = true;
    const f = facts ?? this.observer.end();
    let o = outcome ?? this.evaluate(f);
    if (blockedBy) {
      o = withStreamBlock(o, blockedBy);
      this.blocked = blockedBy;
    }
    const d = this.ctx.draft;
    d.evaluations = d.evaluations.concat(o.evaluations);
    d.fired = d.fired.concat(o.fired);
    d.blockedCount += o.blockedCount;
    if (blockedBy) {
      d.status = "blocked";
      d.errorCode = "policy_violation";
    }
  }
}
