// Card numbers followed by their expiry and CVV are cards; a group that continues the grouping (a
// longer number) still cancels the match. The windows around digit runs keep reporting what full scans do.

import test from "ava";
import { detectPii } from "./detect-pii.js";
import { findDigitRuns } from "./digit-runs.js";
import { windowedScanEqualsFull } from "./fixtures/windowed-scan.js";
import { createRng } from "./fixtures/prng.js";
import { luhnCheckDigit } from "./luhn.js";
import { cardDigitScan, creditCardRecognizer } from "./recognizers/credit-card.js";
import type { PiiFinding } from "./types.js";

function cards(text: string): string[] {
  return detectPii(text)
    .filter((f) => f.entityType === "credit_card")
    .map((f) => text.slice(f.start, f.end));
}

/** A Luhn-valid card number of `len` digits starting with `prefix`, the filler drawn from `seed`. */
function card(prefix: string, len: number, seed: number): string {
  const rng = createRng(seed);
  let p = prefix;
  while (p.length < len - 1) p += rng.digits(1);
  return p + luhnCheckDigit(p);
}

function group(d: string, sizes: readonly number[], sep: string): string {
  const out: string[] = [];
  let i = 0;
  for (const s of sizes) {
    out.push(d.slice(i, i + s));
    i += s;
  }
  return out.join(sep);
}

const BRANDS: readonly [string, string, number, readonly number[]][] = [
  ["visa16", "4881", 16, [4, 4, 4, 4]],
  ["visa19", "4845", 19, [4, 4, 4, 4, 3]],
  ["mastercard", "5190", 16, [4, 4, 4, 4]],
  ["mastercard 2-series", "2548", 16, [4, 4, 4, 4]],
  ["amex", "3483", 15, [4, 6, 5]],
  ["discover", "6011", 16, [4, 4, 4, 4]],
  ["diners", "3009", 14, [4, 6, 4]],
  ["jcb", "3530", 16, [4, 4, 4, 4]],
  ["unionpay19", "6212", 19, [4, 4, 4, 4, 3]],
];

for (const [brand, prefix, len, sizes] of BRANDS) {
  test(`a ${brand} card followed by its expiry and CVV is a card`, (t) => {
    for (let seed = 1; seed <= 3; seed++) {
      const d = card(prefix, len, seed);
      for (const sep of [" ", "-", "."]) {
        const grouped = group(d, sizes, sep);
        t.deepEqual(cards(`Card: ${grouped} 12/27 123`), [grouped], `Card: ${grouped} 12/27 123`);
        t.deepEqual(cards(`card ${grouped} 05/2027 cvv 123`), [grouped]);
      }
      t.deepEqual(cards(`cc ${d} 0527 123`), [d], `cc ${d} 0527 123`);
      t.deepEqual(cards(`cc ${d} 12/27 123`), [d]);
      t.deepEqual(cards(`${d}|05|2027|123|Jane Doe`), [d]);
    }
  });
}

test("a 16-digit card and its CVV: the card, not a failed 19-digit number", (t) => {
  t.deepEqual(cards("card 4111 1111 1111 1111 123"), ["4111 1111 1111 1111"]);
  t.deepEqual(cards("card 4111-1111-1111-1111-123 ok"), ["4111-1111-1111-1111"]);
  // a valid 19-digit Visa stays one number
  const d = card("4845", 19, 7);
  const spaced = group(d, [4, 4, 4, 4, 3], " ");
  t.deepEqual(cards(`card ${spaced} 12/27`), [spaced]);
});

test("a group that continues the grouping is a longer number, not a card", (t) => {
  for (const text of [
    "4111 1111 1111 1111 1111",
    "card 4111 1111 1111 1111 2222 3333",
    "card 4111-1111-1111-1111-1111",
    "id 4111.1111.1111.1111.1111",
    "ref 1234 4111 1111 1111 1111",
    "card 4111 1111 1111 1111 123 456",
    "amount 4111111111111111.50",
    "id 4111111111111111-2",
    "Amex 3782 822463 10005 123",
  ]) {
    t.deepEqual(cards(text), [], text);
  }
});

test("digit-run windows report what a full scan reports for cards with expiry, CVV and longer groups", (t) => {
  const pieces = [" ", "-", ".", "/", "|", " 12/27 ", " 0527 ", " 123", " 1111", "card ", "cc ", "4111 1111 1111 1111", "4111111111111111", "3782 822463 10005"];
  const seen = windowedScanEqualsFull(t, cardDigitScan, 9090, pieces, (text) => {
    const a: PiiFinding[] = [];
    const b: PiiFinding[] = [];
    creditCardRecognizer.scan(text, a, null);
    creditCardRecognizer.scan(text, b, findDigitRuns(text));
    t.deepEqual(b, a);
  });
  t.true(seen > 300, `matches (${seen})`);
});

test("13-digit Visa grouped 4-3-3-3 and 12-digit Maestro (with a card word) are cards", (t) => {
  const visa13 = card("4715", 13, 31);
  const v = group(visa13, [4, 3, 3, 3], " ");
  t.deepEqual(cards(`card number: ${v}`), [v]);
  t.deepEqual(cards(`Card: ${v} 12/27 123`), [v]);
  t.deepEqual(cards(`card: ${group(visa13, [4, 3, 3, 3], "-")}`), [group(visa13, [4, 3, 3, 3], "-")]);
  t.deepEqual(cards(`ref ${v} 456`), [], "a further group continues the number");
  const maestro = card("6759", 12, 32);
  t.deepEqual(cards(`card number: ${maestro}`), [maestro]);
  t.deepEqual(cards(`{"card_number": "${group(maestro, [4, 4, 4], " ")}"}`), [group(maestro, [4, 4, 4], " ")]);
  t.deepEqual(cards(`UPC ${maestro}, model ${group(maestro, [4, 4, 4], "-")}`), [], "12 digits need a card word");
});
