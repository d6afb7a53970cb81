// injectionScore: a transparent weighted scorer. Each feature that fires contributes its weight w_i
// and score = 1 − Π(1 − w_i). Features run on normalised text and on readings that undo evasions
// (leetspeak, de-spaced letters, decoded base64/hex/percent/tag-character payloads).

import { decodePayloads } from "./decode-payloads.js";
import { CONFUSABLES } from "./confusables.js";
import { DERIVED_WEIGHTS, FEATURES, scoredInToolDefinitions } from "./features.js";
import type { Feature } from "./features.js";
import { mapRange, normalizeForScan } from "./normalize.js";
import type { NormalizedText } from "./normalize.js";
import { buildTriggerIndex } from "./trigger-index.js";
import { despacedVariant, leetVariant, reversedSegments, rot13Variant } from "./variants.js";

/** Scores at or above this are treated as a likely injection (calibrated on the fixtures; see README). */
export const DEFAULT_INJECTION_THRESHOLD = 0.5;

export interface InjectionSignal {
  feature: string;
  weight: number;
  /** UTF-16 offsets into the scored text, when the evidence maps back to it. */
  start?: number;
  end?: number;
}

/**
 * Which text is scored: `input` (the default: user messages, tool results, documents…) with every
 * feature; `tool_definition` (a tool's description and parameter schema, which its developer or a
 * third-party MCP server wrote) with the features scoredInToolDefinitions allows (features.ts).
 */
export type InjectionScope = "input" | "tool_definition";

export interface InjectionResult {
  /** In [0,1]. */
  score: number;
  /** One entry per feature that fired, highest weight first. */
  signals: InjectionSignal[];
}

const TRIGGERS = buildTriggerIndex(FEATURES);
/** Per feature index: whether it counts in a tool definition. */
const TOOL_DEFINITION_ENABLED: readonly boolean[] = FEATURES.map(scoredInToolDefinitions);
const NATIVE_SCRIPT_RE = /[\u0400-\u04ff\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]/;
/** Decoded payloads are rescanned at most this deep (base64 inside base64…). */
const MAX_DECODE_DEPTH = 2;

type Found = Map<string, InjectionSignal>;

function add(found: Found, feature: string, weight: number, start?: number, end?: number): boolean {
  if (found.has(feature)) return false;
  const s: InjectionSignal = { feature, weight };
  if (start !== undefined && end !== undefined) {
    s.start = start;
    s.end = end;
  }
  found.set(feature, s);
  return true;
}

/** Text searched before / after a trigger hit: every feature pattern spans well under this. */
const WINDOW_BEFORE = 200;
const WINDOW_AFTER = 400;

/**
 * First match of `pattern` in `target` that lies in a window around one of `positions`
 * (windows merged; an empty list means the whole text). Returns [start, end] or null.
 */
function matchNear(pattern: RegExp, target: string, positions: readonly number[]): [number, number] | null {
  if (positions.length === 0 || target.length <= WINDOW_BEFORE + WINDOW_AFTER) {
    const m = pattern.exec(target);
    return m === null ? null : [m.index, m.index + m[0].length];
  }
  let i = 0;
  while (i < positions.length) {
    const from = Math.max(0, positions[i]! - WINDOW_BEFORE);
    let to = Math.min(target.length, positions[i]! + WINDOW_AFTER);
    while (i + 1 < positions.length && positions[i + 1]! - WINDOW_BEFORE <= to) {
      i++;
      to = Math.min(target.length, positions[i]! + WINDOW_AFTER);
    }
    i++;
    const m = pattern.exec(target.slice(from, to));
    if (m !== null) return [from + m.index, from + m.index + m[0].length];
  }
  return null;
}

/**
 * Runs the "lower" features whose triggers occur in `lower` (only those `enabled` allows, when given);
 * calls `hit` for each match.
 */
function scanLower(lower: string, hit: (feat: Feature, start: number, end: number) => void, casedText: (() => string) | null, enabled: readonly boolean[] | null): void {
  for (const [i, positions] of TRIGGERS.candidates(lower)) {
    const feat = FEATURES[i]!;
    if (feat.input === "native" || (enabled !== null && !enabled[i])) continue;
    const target = feat.input === "cased" ? (casedText === null ? null : casedText()) : lower;
    if (target === null) continue;
    // Cased text has the same length as `lower` only for ASCII input; otherwise search all of it.
    const m = matchNear(feat.pattern, target, target.length === lower.length ? positions : []);
    if (m !== null) hit(feat, m[0], m[1]);
  }
}

/** The characters isInvisible() accepts, as one regex (tag characters are surrogate pairs U+DB40 U+DC00–DC7F). */
const INVISIBLE_RE = /[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]|\u034f|[\ufe00-\ufe0f]|\udb40[\udc00-\udc7f]/g;

function stripInvisible(text: string): string {
  return text.replace(INVISIBLE_RE, "");
}

function containsConfusable(s: string): boolean {
  for (const ch of s) if (CONFUSABLES.has(ch.codePointAt(0)!)) return true;
  return false;
}

/**
 * Scans one text (the input, or a decoded payload) into `found`; true when an attack feature fired.
 * For a payload, `payloadRange` is the encoded run's span in the input, used as every signal's offsets.
 * `enabled`: the features that count (null: all); a decoded payload is scanned with all of them (hidden
 * text is no developer's defensive instruction).
 */
function scanText(text: string, found: Found, depth: number, payloadRange: [number, number] | null, enabled: readonly boolean[] | null = null): boolean {
  const n: NormalizedText = normalizeForScan(text);
  const ascii = n.map === null;
  let fired = false;
  // Case-kept text for the acronym features; built only when one of their triggers occurs.
  let cased: string | null = ascii ? text : null;
  const casedText = (): string => (cased ??= stripInvisible(text).normalize("NFKC"));
  const range = (s: number, e: number): [number, number] | [undefined, undefined] => {
    if (payloadRange !== null) return payloadRange;
    return mapRange(n, s, e, text.length);
  };

  scanLower(
    n.text,
    (feat, s, e) => {
      let rs: number | undefined;
      let re: number | undefined;
      if (feat.input !== "cased") [rs, re] = range(s, e);
      else if (payloadRange !== null) [rs, re] = payloadRange;
      else if (ascii) [rs, re] = [s, e]; // the case-kept text equals the input only for ASCII input
      fired = true;
      add(found, feat.id, feat.weight, rs, re);
      if (n.foldedCount > 0 && rs !== undefined && payloadRange === null && containsConfusable(text.slice(rs, re))) {
        add(found, "obfuscated_match", DERIVED_WEIGHTS.obfuscated_match, rs, re);
      }
    },
    casedText,
    enabled,
  );

  // Cyrillic, CJK and Hangul features: no trigger pass, run when the script occurs. The normalised
  // text keeps these scripts intact (look-alike folding only touches runs next to Latin letters).
  if (NATIVE_SCRIPT_RE.test(n.text)) {
    for (const i of TRIGGERS.always) {
      const feat = FEATURES[i]!;
      if (feat.input !== "native" || (enabled !== null && !enabled[i])) continue;
      const m = feat.pattern.exec(n.text);
      if (m === null) continue;
      fired = true;
      const [rs, re] = range(m.index, m.index + m[0].length);
      add(found, feat.id, feat.weight, rs, re);
    }
  }

  // Evasion readings: leetspeak (same length, offsets valid) and de-spaced letters (no offsets).
  const leet = leetVariant(n.text);
  if (leet !== null) {
    scanLower(
      leet,
      (feat, s, e) => {
        if (feat.input === "cased") return;
        const [rs, re] = range(s, e);
        fired = true;
        // Counts as obfuscation only when the plain reading did not already match this feature.
        if (add(found, feat.id, feat.weight, rs, re)) add(found, "obfuscated_match", DERIVED_WEIGHTS.obfuscated_match, rs, re);
      },
      null,
      enabled,
    );
  }
  const despaced = despacedVariant(leet ?? n.text);
  if (despaced !== null) {
    scanLower(
      despaced,
      (feat) => {
        if (feat.input === "cased") return;
        const [rs, re] = payloadRange ?? [undefined, undefined];
        fired = true;
        if (add(found, feat.id, feat.weight, rs, re)) add(found, "obfuscated_match", DERIVED_WEIGHTS.obfuscated_match, rs, re);
      },
      null,
      enabled,
    );
  }

  if (n.invisibleCount >= 2) {
    add(found, "invisible_characters", DERIVED_WEIGHTS.invisible_characters, payloadRange?.[0], payloadRange?.[1]);
  }

  if (depth < MAX_DECODE_DEPTH) {
    const hidden: { start: number; end: number; text: string }[] = decodePayloads(text);
    if (n.tagPayload.length > 0) hidden.push({ start: 0, end: text.length, text: n.tagPayload });
    if (text.includes("\u202e")) hidden.push(...reversedSegments(text));
    const rot13 = rot13Variant(n.text);
    if (rot13 !== null) hidden.push({ start: 0, end: text.length, text: rot13 });
    for (const p of hidden) {
      const outer: [number, number] = payloadRange ?? [p.start, p.end];
      if (scanText(p.text, found, depth + 1, outer)) {
        fired = true;
        add(found, "encoded_hidden_instruction", DERIVED_WEIGHTS.encoded_hidden_instruction, outer[0], outer[1]);
      }
    }
  }
  return fired;
}

/** Scores `text` for prompt-injection risk, locally and deterministically (`scope`: InjectionScope). */
export function injectionScore(text: string, scope: InjectionScope = "input"): InjectionResult {
  const found: Found = new Map();
  if (text.length > 0) scanText(text, found, 0, null, scope === "tool_definition" ? TOOL_DEFINITION_ENABLED : null);
  let keep = 1;
  for (const s of found.values()) keep *= 1 - s.weight;
  const signals = [...found.values()].sort((a, b) => b.weight - a.weight);
  const score = 1 - keep;
  return { score: score < 0 ? 0 : score > 1 ? 1 : score, signals };
}
