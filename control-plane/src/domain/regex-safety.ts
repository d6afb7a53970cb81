// Policy regexes must run in linear time (DESIGN.md §6: RE2-safe). Without an RE2 engine on the hot path,
// we accept only the RE2-compatible, backtracking-safe subset: no backreferences, no lookaround,
// and no quantified group that itself contains a quantifier or an alternation (star height ≤ 1),
// which is what makes JavaScript's backtracking engine exponential.

export function regexSafetyProblem(pattern: string): string | undefined {
  if (pattern.length > 1000) return "regex is longer than 1000 characters";
  try {
    new RegExp(pattern, "iu");
  } catch (e) {
    return `regex does not compile: ${(e as Error).message}`;
  }
  if (/\\[1-9]|\\k</.test(pattern)) return "backreferences are not allowed (not linear-time)";
  if (/\(\?<?[=!]/.test(pattern)) return "lookaround is not allowed (not linear-time)";
  // Walk groups; a group whose body has a quantifier or '|' must not be quantified itself.
  const stack: { risky: boolean }[] = [];
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === "\\") {
      // \p{…}, \P{…}, \u{…}: the braces belong to the escape, not a quantifier.
      if ("pPu".includes(pattern[i + 1] ?? "") && pattern[i + 2] === "{") {
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
