// Policy regexes must compile on RE2 (the sidecar matches them with re2js, linear in the text) and,
// to keep them portable to any backtracking engine too, stay in the backtracking-safe subset.
// The subset: no backreferences, no lookaround, and no quantified group that itself contains a
// quantifier or an alternation (star height ≤ 1), which is what makes backtracking exponential.
// Cost is bounded too: RE2 is linear in the text, but its per-character cost grows with the number of
// NFA states alive at once, i.e. with counted repetitions (`[^\n]{1000}%` took 1.7 s per 100 KB of
// base64). So every `{n}` / `{n,m}` bound is at most MAX_REPEAT, and the compiled program (RE2's
// own "cost" measure, which counts repetitions expanded) at most MAX_PROGRAM_SIZE instructions.
import { RE2JS } from "re2js";

/** Largest bound a counted repetition (`{n}`, `{n,}`, `{n,m}`) may have. */
export const MAX_REPEAT = 100;
/** Largest compiled RE2 program (instructions) a policy regex may have. */
export const MAX_PROGRAM_SIZE = 250;

export function regexSafetyProblem(pattern: string): string | undefined {
  if (pattern.length > 1000) return "regex is longer than 1000 characters";
  if (/\\[1-9]|\\k</.test(pattern)) return "backreferences are not allowed (not linear-time)";
  if (/\(\?<?[=!]/.test(pattern)) return "lookaround is not allowed (not linear-time)";
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE);
  } catch (e) {
    return `regex does not compile (RE2 syntax, as the sidecar matches it): ${(e as Error).message}`;
  }
  // Walk groups; a group whose body has a quantifier or '|' must not be quantified itself.
  const stack: { risky: boolean }[] = [];
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === "\\") {
      // \p{…}, \P{…}, \x{…}: the braces belong to the escape, not a quantifier.
      if ("pPx".includes(pattern[i + 1] ?? "") && pattern[i + 2] === "{") {
        const close = pattern.indexOf("}", i + 3);
        i = close === -1 ? pattern.length : close;
      } else i++;
      continue;
    }
    if (inClass) {
      if (ch === "]") inClass = false;
      continue;
    }
    if (ch === "[") {
      inClass = true;
      continue;
    }
    if (ch === "(") {
      stack.push({ risky: false });
      continue;
    }
    if (ch === "{") {
      // Only a well-formed `{n}`, `{n,}` or `{n,m}` is a repetition (RE2 reads any other `{` literally).
      const rep = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i));
      const bound = rep ? Math.max(Number(rep[1]), Number(rep[3] || 0)) : 0;
      if (bound > MAX_REPEAT) return `counted repetition {${rep![0].slice(1, -1)}} exceeds the limit of ${MAX_REPEAT} (cost grows with the count)`;
    }
    const top = stack[stack.length - 1];
    if (ch === "|" && top) top.risky = true;
    if ((ch === "*" || ch === "+" || ch === "?" || ch === "{") && top) {
      if (ch !== "?" || pattern[i - 1] !== "(") top.risky = true;
    }
    if (ch === ")") {
      const group = stack.pop();
      const next = pattern[i + 1];
      const quantified = next === "*" || next === "+" || (next === "{" && /^\{\d*,?\d*\}/.test(pattern.slice(i + 1)) && !/^\{0?,?1\}/.test(pattern.slice(i + 1)));
      if (group?.risky && quantified) return "nested quantifiers are not allowed (not linear-time)";
      const parent = stack[stack.length - 1];
      if (parent && (group?.risky || quantified)) parent.risky = true;
    }
  }
  const size = compiled.programSize();
  if (size > MAX_PROGRAM_SIZE) return `regex is too costly: its compiled program has ${size} instructions, the limit is ${MAX_PROGRAM_SIZE} (shorten it or lower its repetition counts)`;
  return undefined;
}
