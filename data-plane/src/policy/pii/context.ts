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

/** Characters after a match searched by boostWithContext's `afterEnd` ("589316325 is my social security number"). */
export const CONTEXT_AFTER_WINDOW = 24;

/** True when a match of `re` (non-global) starts in the CONTEXT_AFTER_WINDOW characters from `end`. */
function hasContextAfter(text: string, end: number, re: RegExp): boolean {
  const m = re.exec(text.slice(end, end + CONTEXT_AFTER_WINDOW + 32));
  return m !== null && m.index < CONTEXT_AFTER_WINDOW;
}

/**
 * Returns `score` boosted when a context word precedes `start` or, when `afterEnd` is given, starts
 * within CONTEXT_AFTER_WINDOW characters after it; scores of 1 are returned unchanged.
 */
export function boostWithContext(text: string, start: number, score: number, re: RegExp | null, afterEnd?: number): number {
  if (re === null || score >= 1) return score;
  if (!hasContextBefore(text, start, re) && !(afterEnd !== undefined && hasContextAfter(text, afterEnd, re))) return score;
  const boosted = score + CONTEXT_BOOST;
  return boosted < MIN_SCORE_WITH_CONTEXT ? MIN_SCORE_WITH_CONTEXT : boosted > 1 ? 1 : boosted;
}
