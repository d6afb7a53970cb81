// Policy regexes on the sidecar: patterns saved before the control plane bounded their cost are still
// enforced (compiled as they are, fail closed), and a search that needs no positions stays cheap.
import test from "ava";
import { randomBytes } from "node:crypto";
import { allMatches, compiledRegex, hasMatch } from "./regex-cache.js";

const base64 = randomBytes(75_000).toString("base64"); // 100 KB, no "%" and no newline

test("a stored pattern above today's repetition limit is still compiled and enforced", (t) => {
  const re = compiledRegex("[^\\n]{1000}%");
  t.truthy(re, "compiled as is, not dropped");
  const text = `intro\n${"z".repeat(1000)}% tail`;
  t.true(hasMatch(re!, text));
  t.deepEqual(allMatches(re!, text), [[6, 1007]]);
  t.false(hasMatch(re!, "z".repeat(999) + "%"));
  t.deepEqual(allMatches(re!, "z".repeat(999) + "%"), []);
});

// On re2js's Matcher (the NFA) these took 1.7–3.2 s per 100 KB; its lazy DFA (test()) answers in about
// 1 ms, and the NFA runs only to locate a match that test() found (speed: docs/decisions.md, no timing here).
test("costly patterns on 100 KB without a match: no match, no positions", (t) => {
  const cases: [string, string][] = [["[^\\n]{1000}%", base64], ["[^\\n]{1000}%", "a".repeat(100_000)], ["[a-z]{10,1000}q", "a".repeat(100_000)]];
  for (const [pattern, text] of cases) {
    const re = compiledRegex(pattern)!;
    t.false(hasMatch(re, text), pattern);
    t.deepEqual(allMatches(re, text), [], pattern);
  }
});

test("matches and test agree on ordinary patterns, case-insensitively, empty matches left out", (t) => {
  const text = "Ticket-1234 and TICKET-5678; ticket-9";
  const re = compiledRegex("ticket-\\d{4}")!;
  t.true(hasMatch(re, text));
  t.deepEqual(allMatches(re, text), [[0, 11], [16, 27]]);
  const empty = compiledRegex("x*")!;
  t.true(hasMatch(empty, "abc"));
  t.deepEqual(allMatches(empty, "abxxc"), [[2, 4]]);
  t.is(compiledRegex("("), null);
});
