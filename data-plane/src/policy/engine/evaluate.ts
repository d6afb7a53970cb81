// Evaluates every applicable policy of a phase (DESIGN.md §6, §11): conditions are AND-ed, every
// evaluation is recorded, the highest-priority matching `block` decides, `redact` collects spans.
import type { Agent, Policy } from "@agentgov/proto";
import type { PiiFinding } from "../pii/index.js";
import { applicablePolicies, type Phase } from "./applicable.js";
import { compiledRegex } from "./regex-cache.js";

export interface PhaseInput {
  agent: Agent;
  phase: Phase;
  text: string;
  model: string;
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
  blockedBy?: Policy;
  blockedCount: number;
  fired: string[];
  /** Redact policies that matched, with the conditions that say what to redact. */
  redactors: Policy[];
}

function matches(p: Policy, i: PhaseInput): boolean {
  const c = p.conditions;
  if (!c) return true;
  if (c.piiTypes.length > 0) {
    if (!i.pii || !i.pii.some((f) => c.piiTypes.includes(f.entityType))) return false;
  }
  if (c.injectionScoreGte !== undefined && !(i.injectionScore >= c.injectionScoreGte)) return false;
  if (c.models.length > 0 && c.models.includes(i.model)) return false;
  if (c.maxInputTokens !== undefined && !(i.inputTokens > c.maxInputTokens)) return false;
  if (c.keywords.length > 0) {
    const lower = i.text.toLowerCase();
    if (!c.keywords.some((k) => lower.includes(k.toLowerCase()))) return false;
  }
  if (c.regex !== undefined) {
    const re = compiledRegex(c.regex);
    if (!re) return false;
    re.lastIndex = 0;
    if (!re.test(i.text)) return false;
  }
  return true;
}

export function evaluatePhase(ordered: readonly Policy[], input: PhaseInput): PhaseOutcome {
  const out: PhaseOutcome = { evaluations: [], blockedCount: 0, fired: [], redactors: [] };
  for (const p of applicablePolicies(ordered, input.agent, input.phase)) {
    const hit = matches(p, input);
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

/** Spans to redact in `text` for the matched redact policies: their PII types, keywords and regex. */
export function redactSpans(text: string, redactors: readonly Policy[], pii: readonly PiiFinding[] | null): RedactSpan[] {
  const spans: RedactSpan[] = [];
  for (const p of redactors) {
    const c = p.conditions;
    const types = c?.piiTypes ?? [];
    if (pii) for (const f of pii) if (types.length === 0 || types.includes(f.entityType)) spans.push({ start: f.start, end: f.end, label: f.entityType });
    if (c) {
      const lower = text.toLowerCase();
      for (const k of c.keywords) {
        const needle = k.toLowerCase();
        for (let at = lower.indexOf(needle); at >= 0 && needle; at = lower.indexOf(needle, at + needle.length)) {
          spans.push({ start: at, end: at + needle.length, label: "keyword" });
        }
      }
      if (c.regex !== undefined) {
        const re = compiledRegex(c.regex);
        if (re) {
          re.lastIndex = 0;
          for (let m = re.exec(text); m; m = re.exec(text)) {
            if (m[0].length === 0) {
              re.lastIndex++;
              continue;
            }
            spans.push({ start: m.index, end: m.index + m[0].length, label: "regex" });
          }
        }
      }
    }
  }
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const merged: RedactSpan[] = [];
  for (const s of spans) {
    const last = merged[merged.length - 1];
    if (last && s.start < last.end) last.end = Math.max(last.end, s.end);
    else merged.push({ ...s });
  }
  return merged;
}

export function applyRedaction(text: string, spans: readonly RedactSpan[]): string {
  let out = "";
  let at = 0;
  for (const s of spans) {
    out += text.slice(at, s.start) + `[REDACTED:${s.label}]`;
    at = s.end;
  }
  return out + text.slice(at);
}
