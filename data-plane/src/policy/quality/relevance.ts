// relevance: how many of the prompt's content words the answer uses (lexical overlap after
// stop-word removal and light stemming), saturating once enough of them are covered.

import { STOPWORDS, stem } from "./stopwords.js";
import { scanWords, words } from "./tokenize.js";
import { answerTermsByHash, MAX_SCAN_TERMS, NOT_ASCII, SCALE, scanAsciiPromptTerms } from "./ascii-terms.js";

/** Covering this many prompt content words (or all of them, if fewer) gives a score of 1. */
export const RELEVANCE_SATURATION = 8;
/** Only the first N content words of a very long prompt count (the question is usually near them or the end). */
const MAX_PROMPT_TERMS = 400;

/**
 * |prompt terms ∩ answer terms| / min(|prompt terms|, RELEVANCE_SATURATION), capped at 1, where the
 * prompt terms are its first MAX_PROMPT_TERMS distinct content terms.
 * 0 for an empty answer; 1 when the prompt has no content words (nothing to check against).
 * `completionWords` is words(completion) when the caller has it already (qualityScores shares it).
 *
 * The prompt is scanned word by word and the scan stops as soon as RELEVANCE_SATURATION shared terms
 * are found (the score is 1 whatever follows): a relevant answer to a long prompt costs a fraction of
 * the prompt's tokenisation.
 */
export function relevanceScore(prompt: string, completion: string, completionWords: readonly string[] = words(completion)): number {
  // An ASCII prompt is scanned in place (ascii-terms.ts); any other, as strings.
  const byHash = answerTermsByHash(completionWords);
  if (byHash !== null) {
    if (byHash.size === 0) return completion.trim().length === 0 ? 0 : 1;
    const r = scanAsciiPromptTerms(prompt, byHash, RELEVANCE_SATURATION, MAX_PROMPT_TERMS);
    if (r !== NOT_ASCII) return score(Math.floor(r / SCALE), r % SCALE);
  }
  const answer = new Set<string>();
  for (const w of completionWords) if (w.length >= 2 && !STOPWORDS.has(w)) answer.add(stem(w));
  if (answer.size === 0) return completion.trim().length === 0 ? 0 : 1;
  const asked = new Set<string>();
  let shared = 0;
  scanWords(prompt, (w) => {
    if (w.length < 2 || STOPWORDS.has(w)) return false;
    const term = stem(w);
    if (asked.has(term)) return false;
    asked.add(term);
    if (answer.has(term) && ++shared >= RELEVANCE_SATURATION) return true;
    return asked.size >= MAX_PROMPT_TERMS;
  });
  return score(shared, asked.size);
}

function score(shared: number, asked: number): number {
  if (asked === 0) return 1;
  const s = shared / Math.min(asked, RELEVANCE_SATURATION);
  return s > 1 ? 1 : s;
}

if (MAX_PROMPT_TERMS > MAX_SCAN_TERMS) throw new Error("MAX_PROMPT_TERMS exceeds the ASCII scan's table");
