// non_repetition: share of distinct word trigrams in the answer (distinct-3). Degenerate loops
// ("the the the…", a paragraph repeated) score low; ordinary prose scores close to 1.

import { words } from "./tokenize.js";

const N = 3;

/**
 * distinct n-grams / total n-grams over the answer's words; 1 when it has fewer than N words.
 * `completionWords` is words(completion) when the caller has it already (qualityScores shares it).
 */
export function nonRepetitionScore(completion: string, completionWords: readonly string[] = words(completion)): number {
  const w = completionWords;
  const total = w.length - N + 1;
  if (total <= 0) return 1;
  const seen = new Set<string>();
  for (let i = 0; i < total; i++) seen.add(`${w[i]}\u0000${w[i + 1]}\u0000${w[i + 2]}`);
  return seen.size / total;
}
