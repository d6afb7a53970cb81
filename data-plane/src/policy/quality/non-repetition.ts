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
  // Each word is numbered by first occurrence and a trigram is one number (a·k² + b·k + c): a Set of
  // numbers instead of one joined string per trigram (~3x cheaper; scored before a gated answer's last
  // bytes leave). k³ stays below 2^53 for up to 208,063 distinct words; past that, the joined strings.
  const k = w.length + 1;
  if (k > 208_063) {
    const joined = new Set<string>();
    for (let i = 0; i < total; i++) joined.add(`${w[i]}\u0000${w[i + 1]}\u0000${w[i + 2]}`);
    return joined.size / total;
  }
  const ids = new Map<string, number>();
  const id = (s: string): number => {
    let v = ids.get(s);
    if (v === undefined) ids.set(s, (v = ids.size));
    return v;
  };
  // The trigram numbers go into a reused array, sorted, and the distinct ones counted: no Set per answer.
  if (grams.length < total) grams = new Float64Array(Math.max(total, grams.length * 2));
  let a = id(w[0]!);
  let b = id(w[1]!);
  for (let i = 0; i < total; i++) {
    const c = id(w[i + 2]!);
    grams[i] = (a * k + b) * k + c;
    a = b;
    b = c;
  }
  const sorted = grams.subarray(0, total).sort();
  let distinct = 1;
  for (let i = 1; i < total; i++) if (sorted[i] !== sorted[i - 1]) distinct++;
  return distinct / total;
}

/** Trigram numbers of the answer being scored (reused; grown as needed). */
let grams = new Float64Array(256);
