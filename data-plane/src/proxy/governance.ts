// The policy steps the hot path runs around the provider call, as thin glue over policy/: the prompt
// scan (PII, injection score), inbound redaction of the forwarded body, and the outbound phase of a
// JSON answer (completion PII, evaluation, redaction of the returned body). Policy semantics live in
// policy/engine; streamed answers are governed by a StreamGovernor (stream-governor.ts).
import { mapSlots } from "../providers/text-slots.js";
import { extraPartsWithKinds, mapExtrasInPlace, toolDefinitionTexts, type InputExtraKind } from "../providers/input-extras.js";
import type { Agent, Policy } from "@agentgov/proto";
import { performance } from "node:perf_hooks";
import { detectPii, withFindingsAcrossParts, type PiiFinding } from "../policy/pii/index.js";
import { evaluatePhase, redactSpans, applyRedaction, partRedactor } from "../policy/engine/evaluate.js";
import { applicablePolicies } from "../policy/engine/applicable.js";
import type { ScopedThinking } from "../policy/thinking/index.js";
import type { ProviderAdapter } from "../providers/index.js";
import { withoutRedactedValues } from "../providers/quotes.js";
import type { GovernanceState } from "../state/governance-state.js";
import type { ExtrasPiiFinding, TraceDraft } from "../trace/builder.js";

/** The whole text the policies were evaluated on (parts joined) and its PII findings (null: scanning off). */
export interface ScannedText {
  text: string;
  pii: readonly PiiFinding[] | null;
}

/**
 * Rewrites every text part with the spans the matched redact policies select ([REDACTED:<type>]). With
 * `scanned`, the spans are those found in the whole text (what the trace records and the policies
 * matched on, context across parts included), cut per part; a part is scanned alone only as a fallback.
 */
function redactor(redactors: readonly Policy[], piiOn: boolean, scanned?: ScannedText, neverEmpty = false): (part: string) => string {
  const alone = (part: string) => applyRedaction(part, redactSpans(part, redactors, piiOn ? detectPii(part) : null));
  if (!scanned) return alone;
  return partRedactor(scanned.text, redactSpans(scanned.text, redactors, piiOn ? scanned.pii : null), alone, neverEmpty);
}

/**
 * For a quote that cannot be placed on the answer (Cohere citation, Gemini grounding segment) and each
 * tool-call argument leaf (JSON answers, a held Gemini JSON-array stream): its text
 * scanned alone, then every value redacted in the whole answer replaced by its label (values the quote's
 * own text lacks the context to find, such as an SSN without the word "SSN").
 */
export function quoteRedactor(redactors: readonly Policy[], piiOn: boolean, scanned?: ScannedText): (text: string) => string {
  const alone = redactor(redactors, piiOn);
  const values = new Map<string, string>();
  if (scanned) for (const s of redactSpans(scanned.text, redactors, piiOn ? scanned.pii : null)) values.set(scanned.text.slice(s.start, s.end), s.label);
  return (text) => withoutRedactedValues(alone(text), values);
}

/** The forwarded body with inbound redactions applied to each prompt part (a copy; `body` is untouched). */
export function redactPrompt(adapter: ProviderAdapter, body: unknown, redactors: readonly Policy[], piiOn: boolean, scanned?: ScannedText): unknown {
  return adapter.mapPromptText(body, redactor(redactors, piiOn, scanned, true));
}

/** Where one part of the scanned extras text begins, and the kind of the group it stands in. */
export interface ExtrasPartStart {
  kind: InputExtraKind;
  start: number;
}

/**
 * The input outside the prompt as scanned: its text and PII findings, each tool definition's text, and
 * where each part begins in the text (in order), so a finding can be told which kind it lies in.
 */
export interface ScannedExtras extends ScannedText {
  toolTexts: string[];
  parts: ExtrasPartStart[];
}

/**
 * What inbound policies judge beside the prompt (adapter.inputExtraSlots: tool definitions, response
 * schemas, predicted output, names): their non-empty texts joined by "\n\n", its PII findings (null:
 * scanning off), each tool definition's text (scored for injection on its own) and each part's kind and
 * start offset. Undefined when the request has none, so a request without them does no more work than before.
 */
export function scanInputExtras(adapter: ProviderAdapter, body: unknown, piiOn: boolean): ScannedExtras | undefined {
  const groups = adapter.inputExtraSlots?.(body);
  if (groups === undefined || groups.length === 0) return undefined;
  const found = extraPartsWithKinds(groups);
  if (found.length === 0) return undefined;
  const parts: ExtrasPartStart[] = [];
  let at = 0;
  for (const p of found) {
    parts.push({ kind: p.kind, start: at });
    at += p.text.length + 2; // the "\n\n" the join puts after it
  }
  const texts = found.map((p) => p.text);
  const text = texts.join("\n\n");
  // A value split across two fields (a tool's description ending "SSN 536-22", a parameter's starting
  // "-8741") is read by the model as one: the junctions are scanned as the prompt parts' are.
  return { text, pii: piiOn ? withFindingsAcrossParts(text, texts, detectPii(text)) : null, toolTexts: toolDefinitionTexts(groups), parts };
}

/**
 * The kind of the part holding offset `at` of the extras text: the last part beginning at or before it.
 * An offset on the "\n\n" after a part counts as that part's.
 */
function kindAt(parts: readonly ExtrasPartStart[], at: number): InputExtraKind {
  let lo = 0;
  let hi = parts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (parts[mid]!.start <= at) lo = mid;
    else hi = mid - 1;
  }
  return parts[lo]!.kind;
}

/**
 * The extras' PII findings as the trace records them: offsets into the extras text (Trace.input_extras),
 * each with the kind of the part it starts in as its source. A finding running on past its part, across
 * the "\n\n" join into the next one (only an unterminated PEM private key does: its body may hold blank
 * lines), keeps its offsets and the kind it starts in: the trace reports and masks what was found, as
 * the policies matched it, rather than cutting one finding into several. Empty when scanning is off.
 */
export function extrasFindings(extras: ScannedExtras): ExtrasPiiFinding[] {
  if (!extras.pii) return [];
  return extras.pii.map((f) => ({ ...f, source: kindAt(extras.parts, f.start) }));
}

/**
 * Puts the extras' findings and text on the trace draft (the builder stores the text, masked, only when
 * there is a finding), so a call whose tool definition carried PII says so, whatever its outcome.
 */
export function recordInputExtras(draft: TraceDraft, extras: ScannedExtras | undefined): void {
  if (extras === undefined) return;
  const pii = extrasFindings(extras);
  if (pii.length === 0) return;
  draft.inputExtras = extras.text;
  draft.inputExtrasPii = pii;
}

/**
 * The text inbound policies are evaluated on: the prompt, then the extras after "\n\n", the extras'
 * findings moved by that offset (PII types decide a policy; the trace keeps the prompt's own findings).
 */
export function judgedInput(prompt: ScannedText, extras: ScannedText | undefined): ScannedText {
  if (extras === undefined) return prompt;
  if (prompt.text === "") return extras;
  const offset = prompt.text.length + 2;
  const pii = prompt.pii && extras.pii ? prompt.pii.concat(extras.pii.map((f) => ({ ...f, start: f.start + offset, end: f.end + offset }))) : prompt.pii;
  return { text: `${prompt.text}\n\n${extras.text}`, pii };
}

/**
 * Rewrites the extras of `copy` (a copy of the body, the redacted prompt's) in place with the spans the
 * matched redact policies select in `scanned` (the extras' own text and findings), cut per slot.
 */
export function redactInputExtras(adapter: ProviderAdapter, copy: unknown, redactors: readonly Policy[], piiOn: boolean, scanned: ScannedText): void {
  if (adapter.inputExtraSlots) mapExtrasInPlace(copy, adapter.inputExtraSlots, redactor(redactors, piiOn, scanned));
}

/**
 * The answer with outbound redactions applied to each completion part, then to each reasoning part when
 * it has any (a copy). `scanned.text` is governedOutputText (completion, then reasoning), so one
 * redactor walks both in that order. Signed reasoning (Anthropic thinking) that changed is remembered
 * in `thinking` with its original, for the client's next turn; fields that quote the text by offset
 * (Cohere citations, Gemini grounding segments) follow it, and one that cannot be placed is redacted on
 * its own; offsets without text (OpenAI url_citation annotations, Gemini citation sources) follow it
 * too, or stay as they were.
 */
export function redactAnswer(
  adapter: ProviderAdapter,
  json: unknown,
  redactors: readonly Policy[],
  piiOn: boolean,
  scanned: ScannedText | undefined,
  hasReasoning: boolean,
  thinking?: ScopedThinking,
  hasToolArguments = false,
): unknown {
  const redact = redactor(redactors, piiOn, scanned);
  const answer = adapter.mapCompletionText(json, redact);
  const out = hasReasoning ? adapter.mapReasoningText(answer, redact) : answer;
  if (hasReasoning && thinking && adapter.changedSignedReasoning) {
    for (const c of adapter.changedSignedReasoning(json, out)) thinking.remember(c.signature, c.redacted, c.original);
  }
  if (adapter.afterRedaction) adapter.afterRedaction(json, out, quoteRedactor(redactors, piiOn, scanned));
  // Tool-call arguments: each leaf redacted on its own (plus every value the answer had redacted).
  if (hasToolArguments && adapter.answerToolSlots) return mapSlots(out, adapter.answerToolSlots, quoteRedactor(redactors, piiOn, scanned));
  return out;
}

/**
 * Outbound phase of a complete answer: completion PII (timed as `pii_scan`), every applicable outbound
 * policy evaluated (timed as `policy_eval`) and appended to the trace's evaluations; returns the blocking
 * policy (if any) and the redactors.
 */
export function outboundPhase(draft: TraceDraft, agent: Agent, state: GovernanceState, completion: string): { block?: Policy; redactors: Policy[] } {
  const spans = draft.timing.spans;
  // The completion's PII scan goes to the pii_scan span (with the prompt's), the evaluation to policy_eval.
  const tp = performance.now();
  const pii: PiiFinding[] | null = agent.piiDetection ? detectPii(completion) : null;
  const t = performance.now();
  spans.pii_scan = (spans.pii_scan ?? 0) + (t - tp);
  draft.completionPii = pii ?? [];
  const out = evaluatePhase(state.orderedPolicies, {
    agent,
    phase: "outbound",
    text: completion,
    model: draft.model,
    inputTokens: draft.usage.inputTokens,
    pii,
    injectionScore: draft.injectionScore,
  });
  spans.policy_eval = (spans.policy_eval ?? 0) + (performance.now() - t);
  if (out.evaluations.length > 0) draft.evaluations = draft.evaluations.concat(out.evaluations);
  if (out.fired.length > 0) draft.fired = draft.fired.concat(out.fired);
  draft.blockedCount += out.blockedCount;
  return out.blockedBy ? { block: out.blockedBy, redactors: out.redactors } : { redactors: out.redactors };
}

/** Whether any active policy of this state has a max_input_tokens condition (computed once per state). */
const usesInputTokens = new WeakMap<GovernanceState, boolean>();
export function policiesNeedInputTokens(state: GovernanceState): boolean {
  let v = usesInputTokens.get(state);
  if (v === undefined) {
    v = state.orderedPolicies.some((p) => p.conditions?.maxInputTokens !== undefined);
    usesInputTokens.set(state, v);
  }
  return v;
}

/**
 * Whether an outbound `block` or `redact` policy applies to this agent's answers: such an answer must be
 * read to be judged (a `log` policy only records). Asked only when an answer could not be parsed.
 */
export function actsOnAnswers(state: GovernanceState, agent: Agent): boolean {
  return answerActor(state, agent) !== undefined;
}

/** The first (by priority) outbound `block` or `redact` policy that applies to this agent's answers. */
export function answerActor(state: GovernanceState, agent: Agent): Policy | undefined {
  return applicablePolicies(state.orderedPolicies, agent, "outbound").find((p) => p.action === "block" || p.action === "redact");
}
