// Presidio-style context boost: a context word in a short window before a match raises its score.

/** Characters before a match that are searched for context words (≈ 5–7 words). */
export const CONTEXT_WINDOW = 48;
/** Added to the base score when a context word is present (Presidio's context_similarity_factor). */
export const CONTEXT_BOOST = 0.35;
/** A boosted score is at least this (Presidio's min_score_with_context_similarity). */
export const MIN_SCORE_WITH_CONTEXT = 0.4;

/** True when `re` (non-global) matches the window of text that ends at `start`. */
export function hasContextBefore(text: string, start: number, re: RegExp, window = CONTEXT_WINDOW): boolean {
  const from = start > window ? start - window : 0;
  return re.test(text.slice(from, start));
}

/** Returns `score` boosted when a context word precedes `start`; scores of 1 are returned unchanged. */
export function boostWithContext(text: string, start: number, score: number, re: RegExp | null): number {
  if (re === null || score >= 1) return score;
  if (!hasContextBefore(text, start, re)) return score;
  const boosted = score + CONTEXT_BOOST;
  return boosted < MIN_SCORE_WITH_CONTEXT ? MIN_SCORE_WITH_CONTEXT : boosted > 1 ? 1 : boosted;
}
