// Evaluates every applicable policy of a phase (DESIGN.md §6, §11): conditions are AND-ed, every
// evaluation is recorded, the highest-priority matching `block` decides (every matching block counts),
// `redact` policies say which spans to replace with `[REDACTED:<type>]`.
//
// Conditions are judged on *evidence* (PII types found, keyword lists and regexes that matched, model,
// input tokens, injection score) so that a complete text (JSON bodies, prompts) and a text that grows
// (SSE streams, policy/stream/) are judged by the same rules.
import type { Agent, Policy } from "@agentgov/proto";
import type { PiiFinding } from "../pii/index.js";
import { applicablePolicies, type Phase } from "./applicable.js";
import { allMatches, compiledRegex, hasMatch, keywordRegex, registerKeywordLists } from "./regex-cache.js";

export interface PhaseInput {
  agent: Agent;
  phase: Phase;
  text: string;
  model: string;
  /** The sidecar's token count of the prompt text (the same number in both phases). */
  inputTokens: number;
  /** null when PII scanning is off for the agent: PII conditions never match. */
  pii: readonly PiiFinding[] | null;
  injectionScore: number;
}

export interface Evaluation {
  policyId: string;
  policyName: string;
  result: "pass" | "fail";
  actionTaken: "none" | "block" | "redact" | "log";
}

export interface RedactSpan {
  start: number;
  end: number;
  label: string;
}

export interface PhaseOutcome {
  evaluations: Evaluation[];
  /** The highest-priority matching block policy: it decides the answer. */
  blockedBy?: Policy;
  /** Every matching block policy counts (policies_blocked). */
  blockedCount: number;
  /** Names of the policies that matched, in evaluation order (policiesFired). */
  fired: string[];
  /** Redact policies that matched, with the conditions that say what to redact. */
  redactors: Policy[];
}

/** What the conditions of a policy are judged on. */
export interface Evidence {
  /** PII types found; null when PII scanning is off (then PII conditions never match). */
  piiTypes: ReadonlySet<string> | null;
  /** Whether any keyword of the list occurs (case-insensitive substring). */
  keywordHit(keywords: readonly string[]): boolean;
  regexHit(pattern: string): boolean;
  model: string;
  inputTokens: number;
  injectionScore: number;
}

/** Evidence from a complete text. */
export function textEvidence(i: Omit<PhaseInput, "agent" | "phase">): Evidence {
  return {
    piiTypes: i.pii ? new Set(i.pii.map((f) => f.entityType)) : null,
    keywordHit: (keywords) => {
      const re = keywordRegex(keywords);
      return re !== null && hasMatch(re, i.text);
    },
    regexHit: (pattern) => {
      const re = compiledRegex(pattern);
      return re !== null && hasMatch(re, i.text);
    },
    model: i.model,
    inputTokens: i.inputTokens,
    injectionScore: i.injectionScore,
  };
}

/**
 * Conditions (all optional, AND-ed; a policy without conditions matches every request of its direction):
 * - `pii_types`: any of the types was found (never when scanning is off);
 * - `injection_score_gte`: the prompt's injection score is at least the value;
 * - `models`: the request's model is NOT in the list (an allow-list);
 * - `max_input_tokens`: the prompt has more tokens than the value;
 * - `keywords`: any keyword occurs, case-insensitively;
 * - `regex`: the pattern matches (case-insensitive).
 */
export function conditionsMatch(p: Policy, e: Evidence): boolean {
  const c = p.conditions;
  if (!c) return true;
  if (c.piiTypes.length > 0) {
    const found = e.piiTypes;
    if (!found || !c.piiTypes.some((t) => found.has(t))) return false;
  }
  if (c.injectionScoreGte !== undefined && !(e.injectionScore >= c.injectionScoreGte)) return false;
  if (c.models.length > 0 && c.models.includes(e.model)) return false;
  if (c.maxInputTokens !== undefined && !(e.inputTokens > c.maxInputTokens)) return false;
  if (c.keywords.length > 0 && !e.keywordHit(c.keywords)) return false;
  if (c.regex !== undefined && !e.regexHit(c.regex)) return false;
  return true;
}

/** Evaluates `policies` (already the applicable ones, in priority order) on `e`. */
export function evaluatePolicies(policies: readonly Policy[], e: Evidence): PhaseOutcome {
  const out: PhaseOutcome = { evaluations: [], blockedCount: 0, fired: [], redactors: [] };
  for (const p of policies) {
    const hit = conditionsMatch(p, e);
    const action = p.action as "block" | "redact" | "log";
    out.evaluations.push({ policyId: p.id, policyName: p.name, result: hit ? "fail" : "pass", actionTaken: hit ? action : "none" });
    if (!hit) continue;
    out.fired.push(p.name);
    if (action === "block") {
      out.blockedCount++;
      out.blockedBy ??= p;
    } else if (action === "redact") out.redactors.push(p);
  }
  return out;
}

/** Policy sets whose keyword lists are registered with the keyword automaton (built once per set). */
const registeredSets = new WeakSet<readonly Policy[]>();

export function evaluatePhase(ordered: readonly Policy[], input: PhaseInput): PhaseOutcome {
  if (!registeredSets.has(ordered)) {
    registeredSets.add(ordered);
    registerKeywordLists(ordered.flatMap((p) => (p.conditions && p.conditions.keywords.length > 0 ? [p.conditions.keywords] : [])));
  }
  return evaluatePolicies(applicablePolicies(ordered, input.agent, input.phase), textEvidence(input));
}

/**
 * A stream that was ended by `blockedBy` is recorded as blocked by it even if the final text, judged
 * whole, would not match it (a provisional finding at a window edge): its evaluation says fail/block.
 */
export function withStreamBlock(outcome: PhaseOutcome, blockedBy: Policy): PhaseOutcome {
  if (outcome.blockedBy?.id === blockedBy.id) return outcome;
  const evaluations = outcome.evaluations.map((e) => (e.policyId === blockedBy.id && e.result === "pass" ? { ...e, result: "fail" as const, actionTaken: "block" as const } : e));
  const fired = outcome.fired.includes(blockedBy.name) ? outcome.fired : [...outcome.fired, blockedBy.name];
  const counted = outcome.evaluations.some((e) => e.policyId === blockedBy.id && e.result === "fail");
  return { ...outcome, evaluations, fired, blockedBy, blockedCount: outcome.blockedCount + (counted ? 0 : 1) };
}

/** Whether a redact policy names what to redact (PII types, keywords or a regex). */
export function hasSpanConditions(p: Policy): boolean {
  const c = p.conditions;
  return !!c && (c.piiTypes.length > 0 || c.keywords.length > 0 || c.regex !== undefined);
}

/**
 * The spans one redact policy replaces in `text`: findings of its `pii_types`, occurrences of its
 * keywords, matches of its regex. A redact policy that names none of these redacts every PII finding.
 * `pii` are findings in `text` (null when scanning is off). Spans may overlap; see mergeSpans.
 */
export function policySpans(text: string, p: Policy, pii: readonly PiiFinding[] | null, out: RedactSpan[] = []): RedactSpan[] {
  const c = p.conditions;
  const types = c?.piiTypes ?? [];
  if (pii && (types.length > 0 || !hasSpanConditions(p))) {
    for (const f of pii) if (types.length === 0 || types.includes(f.entityType)) out.push({ start: f.start, end: f.end, label: f.entityType });
  }
  if (c && c.keywords.length > 0) {
    const re = keywordRegex(c.keywords);
    if (re) for (const [start, end] of allMatches(re, text)) out.push({ start, end, label: "keyword" });
  }
  if (c?.regex !== undefined) {
    const re = compiledRegex(c.regex);
    if (re) for (const [start, end] of allMatches(re, text)) out.push({ start, end, label: "regex" });
  }
  return out;
}

/** Sorts spans and merges overlapping ones (the earliest-starting, then longest, span names the merge). */
export function mergeSpans(spans: RedactSpan[]): RedactSpan[] {
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const merged: RedactSpan[] = [];
  for (const s of spans) {
    const last = merged[merged.length - 1];
    if (last && s.start < last.end) last.end = Math.max(last.end, s.end);
    else merged.push({ ...s });
  }
  return merged;
}

/** Spans to redact in `text` for the matched redact policies, sorted and non-overlapping. */
export function redactSpans(text: string, redactors: readonly Policy[], pii: readonly PiiFinding[] | null): RedactSpan[] {
  const spans: RedactSpan[] = [];
  for (const p of redactors) policySpans(text, p, pii, spans);
  return mergeSpans(spans);
}

export function applyRedaction(text: string, spans: readonly RedactSpan[]): string {
  let out = "";
  let at = 0;
  for (const s of spans) {
    if (s.end <= at) continue;
    out += text.slice(at, Math.max(at, s.start)) + `[REDACTED:${s.label}]`;
    at = s.end;
  }
  return out + text.slice(at);
}

/**
 * A function for adapter.mapPromptText / mapCompletionText: `joined` is the text the spans were found
 * in (the parts joined by "\n\n", parts of one output group concatenated); it is called once per
 * non-empty part in order and redacts the part of each span that falls in it (a span cut by a part
 * boundary is labelled once, in the first part it covers; with `neverEmpty`, also in a later part it
 * would otherwise leave empty). A part that cannot be located in `joined`
 * goes to `fallback` (which scans the part alone).
 */
export function partRedactor(joined: string, spans: readonly RedactSpan[], fallback: (part: string) => string, neverEmpty = false): (part: string) => string {
  let cursor = 0;
  let lost = false;
  return (part) => {
    const prevEnd = cursor;
    let start = -1;
    if (!lost) {
      if (joined.startsWith(part, cursor)) start = cursor;
      else if (joined.startsWith("\n\n", cursor) && joined.startsWith(part, cursor + 2)) start = cursor + 2;
    }
    if (start < 0) {
      lost = true;
      return fallback(part);
    }
    const end = start + part.length;
    cursor = end;
    let out = "";
    let at = start;
    let label = "";
    for (const s of spans) {
      if (s.end <= at || s.start >= end) continue;
      out += joined.slice(at, Math.max(at, s.start));
      if (s.start >= prevEnd) out += `[REDACTED:${s.label}]`; // not already labelled in an earlier part
      label = s.label;
      at = Math.min(end, s.end);
    }
    out += joined.slice(at, end);
    // With neverEmpty (a request's prompt parts), a part wholly inside a span labelled in an earlier
    // part (a value split across parts) is labelled again rather than emptied: providers refuse empty
    // text parts (Anthropic: "text content blocks must be non-empty"), and mapPromptText's callers
    // count on redaction never emptying a part. Pieces of one answer text (stream chunks) may be empty.
    return neverEmpty && out === "" && part !== "" ? `[REDACTED:${label}]` : out;
  };
}
