// Which policy regexes the control plane accepts (docs/decisions.md 5): RE2 syntax, backtracking-safe subset.
import test from "ava";
import { MAX_PROGRAM_SIZE, MAX_REPEAT, regexSafetyProblem } from "./regex-safety.js";

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
    "sk-[A-Za-z0-9]{48}",
    "[a-z]{1,100}q",
    "[a-z0-9]{100}x",
    "\\{1000\\}",
    "[{1000}]",
    "\\b(?:alpha|beta|gamma|delta|epsilon|zeta|eta|theta|iota|kappa|lambda|omicron)\\b",
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

// re2js is linear in the text, but its cost per character grows with the NFA states alive at once:
// `[^\n]{1000}%` took 1.7 s per 100 KB of base64, `[a-z]{10,1000}q` 3.1 s per 100 KB of "a".
test("refuses counted repetitions above the limit and programs above the size limit, naming the limit", (t) => {
  t.is(MAX_REPEAT, 100);
  for (const p of ["[^\\n]{1000}%", "[a-z]{10,1000}q", "[a-z0-9]{200}x", "\\w{101}", "x{101,}", "x{2,101}", "(?:ab){101}"]) {
    t.regex(regexSafetyProblem(p) ?? "accepted", new RegExp(`\\{[\\d,]+\\} exceeds the limit of ${MAX_REPEAT}`), p);
  }
  // Within every per-repetition bound, but too large a program in total (written out or chained).
  for (const p of [".".repeat(300) + "%", "[a-z]{100}[a-z]{100}[a-z]{100}q", "a?".repeat(200) + "q"]) {
    t.regex(regexSafetyProblem(p) ?? "accepted", new RegExp(`the limit is ${MAX_PROGRAM_SIZE}`), p);
  }
});
