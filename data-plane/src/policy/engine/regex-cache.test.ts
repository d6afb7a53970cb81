// Policy regexes on the sidecar: patterns saved before the control plane bounded their cost are still
// enforced (compiled as they are, fail closed), and a search that needs no positions stays cheap.
import test from "ava";
import { randomBytes } from "node:crypto";
import { RE2JS } from "re2js";
import { createRng } from "../pii/fixtures/prng.js";
import { allMatches, compiledRegex, hasMatch, requiredPrefix } from "./regex-cache.js";

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

test("requiredPrefix: the literal run every match starts with, without a quantified last character; none with an alternation", (t) => {
  t.is(requiredPrefix("order-\\d{6}"), "order-");
  t.is(requiredPrefix("Project Falcon"), "project falcon");
  t.is(requiredPrefix("invoices?"), "invoice");
  t.is(requiredPrefix("abcd{2,}"), "abc");
  t.is(requiredPrefix("ab{2}"), undefined, "too short once the quantified b is left out");
  t.is(requiredPrefix("order-(?:\\d+)"), "order-");
  t.is(requiredPrefix("^order"), undefined);
  t.is(requiredPrefix("order|invoice"), undefined);
  t.is(requiredPrefix("[|]order"), undefined);
  t.is(requiredPrefix("\\border"), undefined);
  t.is(requiredPrefix("café-\\d"), "caf", "non-ASCII ends the run");
});

test("the prefix check's premise: under RE2's case folding only K (U+212A) and ſ (U+017F) match a printable ASCII character besides its own cases", (t) => {
  const re = RE2JS.compile("[\\x20-\\x7e]", RE2JS.CASE_INSENSITIVE);
  const others: string[] = [];
  for (let cp = 0x80; cp <= 0x10ffff; cp++) if ((cp < 0xd800 || cp > 0xdfff) && re.test(String.fromCodePoint(cp))) others.push(`U+${cp.toString(16).toUpperCase()}`);
  t.deepEqual(others, ["U+17F", "U+212A"]);
  t.is("\u212a".toLowerCase(), "k", "lower-casing makes K a k; ſ is replaced by s");
});

// The prefix only rules out texts; it must never rule out one that matches. Random patterns with literal
// prefixes against random texts that hold the prefix in other cases, partly, or with the characters
// case folding maps ASCII letters to (K U+212A for k, ſ U+017F for s): the same answers as re2js alone.
test("a regex with a required prefix answers as re2js alone on every text (ASCII and not)", (t) => {
  const rng = createRng(23);
  const letters = "abcdefghijklmnopqrstuvwxyzKS0123456789- _:/#";
  const tails = ["", "\\d{2}", "[a-z]+", ".*x", "s?", "-?\\d", "\\s+[0-9]{3}", "(?:ab)*c"];
  const noise = ["", " ", "x", "ſ", "\u212a", "é", "İ", "order", "\n", "0"];
  let checked = 0;
  for (let i = 0; i < 300; i++) {
    let lit = "";
    const n = rng.int(3, 8);
    for (let k = 0; k < n; k++) lit += rng.pick([...letters]);
    const pattern = lit + rng.pick(tails);
    const plain = RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE);
    const re = compiledRegex(pattern)!;
    for (let j = 0; j < 20; j++) {
      const variant = [...lit].map((c) => (rng.chance(0.3) ? c.toUpperCase() : rng.chance(0.1) ? (c === "k" ? "\u212a" : c === "s" ? "ſ" : c) : c)).join("");
      const cut = rng.chance(0.2) ? variant.slice(0, rng.int(0, variant.length - 1)) : variant;
      const text = rng.pick(noise) + cut + rng.pick(["12", "abc", "x", " 123", "ababc", "S", ""]) + rng.pick(noise);
      const expected = plain.test(text);
      if (hasMatch(re, text) !== expected) return t.fail(`test ${JSON.stringify(pattern)} on ${JSON.stringify(text)}`);
      const m = plain.matcher(text);
      const positions: [number, number][] = [];
      while (m.find()) if (m.end() > m.start()) positions.push([m.start(), m.end()]);
      if (JSON.stringify(allMatches(re, text)) !== JSON.stringify(positions)) return t.fail(`matches ${JSON.stringify(pattern)} on ${JSON.stringify(text)}`);
      checked++;
    }
  }
  t.is(checked, 6000);
});
