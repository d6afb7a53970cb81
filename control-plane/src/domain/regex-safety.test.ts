// Which policy regexes the control plane accepts (docs/decisions.md 5): RE2 syntax, backtracking-safe subset.
import test from "ava";
import { regexSafetyProblem } from "./regex-safety.js";

test("accepts the patterns policies are made of", (t) => {
  for (const p of [
    "\\b\\d{3}-\\d{2}-\\d{4}\\b",
    "[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}",
    "\\bproject-(alpha|beta)\\b",
    "(ab)+c",
    "(a+)?b",
    "(?:secret|confidential) doc",
    "(?P<word>\\p{L}+) end",
    "(\\p{Lu})+",
    "\\x{1F600}+",
    "x{2,5}",
  ]) t.is(regexSafetyProblem(p), undefined, p);
});

test("refuses what makes a backtracking engine exponential, and what does not compile", (t) => {
  const cases: [string, RegExp][] = [
    ["(a+)+$", /nested quantifiers/],
    ["(a*)*b", /nested quantifiers/],
    ["(x|xy)*z", /nested quantifiers/],
    ["(?:a|b){2,}", /nested quantifiers/],
    ["((ab)+)+", /nested quantifiers/],
    ["(\\w+)\\1", /backreferences/],
    ["(?<n>a)\\k<n>", /backreferences/],
    ["(?=a)b", /lookaround/],
    ["(?<!a)b", /lookaround/],
    ["[", /does not compile/],
    ["a**", /does not compile/],
    ["x".repeat(1001), /longer than 1000/],
  ];
  for (const [p, why] of cases) t.regex(regexSafetyProblem(p) ?? "accepted", why, p);
});
