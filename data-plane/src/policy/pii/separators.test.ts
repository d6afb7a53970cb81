// Separators a value may be written with beyond its usual shape (session 25, QA F6): mixed spaces and
// hyphens in a card, a card, SSN or e-mail wrapped at a line end, tab- or slash-separated card groups.
// The weak shapes need a context word, so tables and lists of 4-digit numbers stay what they are.
import test from "ava";
import { detectPii } from "./detect-pii.js";

const found = (text: string): [string, string][] => detectPii(text).map((f) => [f.entityType, text.slice(f.start, f.end)]);

const positives: readonly [string, string, string][] = [
  ["credit_card", "my card is 4111-1111 1111-1111 thanks", "4111-1111 1111-1111"],
  ["credit_card", "ref 4111-1111 1111-1111", "4111-1111 1111-1111"], // spaces and hyphens: no card word needed
  ["credit_card", "my card is 4111 1111\n1111 1111 thanks", "4111 1111\n1111 1111"],
  ["credit_card", "card number:\n4111 1111 1111\r\n1111", "4111 1111 1111\r\n1111"],
  ["credit_card", "my card is 4111\t1111\t1111\t1111 thanks", "4111\t1111\t1111\t1111"],
  ["credit_card", "my card is 4111/1111/1111/1111 thanks", "4111/1111/1111/1111"],
  ["ssn", "my SSN is 536-22-\n8726", "536-22-\n8726"],
  ["ssn", "SSN: 536-\r\n22-8726.", "536-\r\n22-8726"],
  ["email", "mail jane.doe@\nexample.com now", "jane.doe@\nexample.com"],
  ["email", "write to jane.doe@\r\nexample.com", "jane.doe@\r\nexample.com"],
];

for (const [type, text, value] of positives) {
  test(`${type}: ${JSON.stringify(text)}`, (t) => {
    t.deepEqual(found(text), [[type, value]]);
  });
}

test("weak shapes without a context word, rows of more groups, more than one line break: not found", (t) => {
  for (const text of [
    "4111\t1111\t1111\t1111", // a TSV row of four 4-digit numbers
    "ids 4111/1111/1111/1111",
    "totals\n4111 1111\n1111 1111",
    "card 1111\t4111\t1111\t1111\t1111", // a longer row
    "card 4111\t1111\t1111\t1111\t2222",
    "card 4111\n1111\n1111\n1111", // a list, one number a line
    "ticket 536-22-\n8726",
    "SSN 536\n22\n8726",
    "SSN 536-22-\n\n8726",
    "jane.doe@\n\nexample.com",
  ]) {
    t.deepEqual(found(text).filter(([type]) => type !== "phone"), [], JSON.stringify(text));
  }
});
