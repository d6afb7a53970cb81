// Policy regexes must compile on RE2 (the sidecar matches them with re2js, linear in the text) and,
// to keep them portable to any backtracking engine too, stay in the backtracking-safe subset.
// The subset: no backreferences, no lookaround, and no quantified group that itself contains a
// quantifier or an alternation (star height ≤ 1), which is what makes backtracking exponential.
import { RE2JS } from "re2js";

export function regexSafetyProblem(pattern: string): string | undefined {
  if (pattern.length > 1000) return "regex is longer than 1000 characters";
  if (/\\[1-9]|\\k</.test(pattern)) return "backreferences are not allowed (not linear-time)";
  if (/\(\?<?[=!]/.test(pattern)) return "lookaround is not allowed (not linear-time)";
  try {
    RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE);
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
  return undefined;
}
