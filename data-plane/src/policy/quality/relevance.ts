// relevance: how many of the prompt's content words the answer uses (lexical overlap after
// stop-word removal and light stemming), saturating once enough of them are covered.

import { STOPWORDS, stem } from "./stopwords.js";
import { words } from "./tokenize.js";

/** Covering this many prompt content words (or all of them, if fewer) gives a score of 1. */
export const RELEVANCE_SATURATION = 8;
/** Only the first N content words of a very long prompt count (the question is usually near them or the end). */
const MAX_PROMPT_TERMS = 400;

function contentTerms(text: string, limit: number): Set<string> {
  const out = new Set<string>();
  for (const w of words(text)) {
    if (w.length < 2 || STOPWORDS.has(w)) continue;
    out.add(stem(w));
    if (out.size >= limit) break;
  }
  return out;
}

/**
 * |prompt terms ∩ answer terms| / min(|prompt terms|, RELEVANCE_SATURATION), capped at 1.
 * 0 for an empty answer; 1 when the prompt has no content words (nothing to check against).
 */
export function relevanceScore(prompt: string, completion: string): number {
  const answer = contentTerms(completion, Number.POSITIVE_INFINITY);
  if (answer.size === 0) return completion.trim().length === 0 ? 0 : 1;
  const asked = contentTerms(prompt, MAX_PROMPT_TERMS);
  if (asked.size === 0) return 1;
  let shared = 0;
  for (const t of asked) if (answer.has(t)) shared++;
  const score = shared / Math.min(asked.size, RELEVANCE_SATURATION);
  return score > 1 ? 1 : score;
}
