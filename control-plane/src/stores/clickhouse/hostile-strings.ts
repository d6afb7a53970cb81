// Test support (not a test file): strings built to break SQL escaping and JSON transport — quotes,
// backslashes, NUL and every control byte, unicode edge cases, injection attempts — plus a seeded
// fuzz generator over the same alphabet.

import { seededRandom } from "./test-engines.js";

const CONTROL = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join("") + "\u007f";

export const HOSTILE_STRINGS: readonly string[] = [
  "",
  " ",
  "'",
  "''",
  "\\",
  "\\\\",
  "\\'",
  "'\\",
  "\\x41",
  "\\0",
  "\\n",
  "\0",
  "a\0b",
  CONTROL,
  "\r\n\t\b\f\v",
  "'; DROP TABLE traces; --",
  "' OR 1=1 OR '",
  "x' AND tenant_id != '",
  "\\'; SELECT 1; --",
  '"double" `back` $dollar ${tpl}',
  "%_ LIKE wildcards %",
  "é ß ñ ü",
  "日本語テキスト",
  "😀👍🏽 family: 👨‍👩‍👧",
  "\u2028\u2029\u200b\ufeff",
  "\u00a0non-breaking",
  "\ud800 lone high",
  "lone low \udc00",
  "x".repeat(70_000),
  "{\"json\": [1, 2, {\"a\": null}]}",
  "<script>alert(1)</script>",
];

const ALPHABET = ["'", "\\", "\0", "\n", "\r", "\t", "\x1f", "\x7f", '"', "`", "%", "_", "a", "Z", "0", " ", "é", "😀", "\u2028", ";", "-", "/", "*"];

/** `count` reproducible random strings over ALPHABET, length 0…24. */
export function fuzzStrings(count: number, seed = 1): string[] {
  const rnd = seededRandom(seed);
  return Array.from({ length: count }, () => {
    const n = Math.floor(rnd() * 25);
    let s = "";
    for (let i = 0; i < n; i++) s += ALPHABET[Math.floor(rnd() * ALPHABET.length)];
    return s;
  });
}
