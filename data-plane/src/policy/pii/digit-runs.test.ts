// The digit-run windows must change nothing: every recognizer that scans only near digit runs
// reports exactly what its full scan reports, on the labelled corpus and on random digit-dense text
// (runs next to each other, separators, context words, text edges, prompts padded with prose).

import test from "ava";
import { findDigitRuns, MAX_DIGIT_RUNS, scanNearDigitRuns, type DigitScan } from "./digit-runs.js";
import { loadPiiCorpus } from "./fixtures/corpus.js";
import { createRng, type Rng } from "./fixtures/prng.js";
import { cardDigitScan, creditCardRecognizer } from "./recognizers/credit-card.js";
import { dateOfBirthRecognizer } from "./recognizers/date-of-birth.js";
import { ibanDigitScan, ibanRecognizer } from "./recognizers/iban.js";
import { phoneDigitScan, phoneRecognizer } from "./recognizers/phone.js";
import { ssnDigitScan, ssnRecognizer } from "./recognizers/ssn.js";
import { routingDigitScan, usBankRoutingRecognizer } from "./recognizers/us-bank-routing.js";
import { usPassportRecognizer } from "./recognizers/us-passport.js";
import type { PiiFinding, Recognizer } from "./types.js";

const DIGIT_AWARE: readonly Recognizer[] = [
  creditCardRecognizer,
  ssnRecognizer,
  usBankRoutingRecognizer,
  ibanRecognizer,
  phoneRecognizer,
  usPassportRecognizer,
  dateOfBirthRecognizer,
];

function scanBothWays(r: Recognizer, text: string): { windowed: PiiFinding[]; full: PiiFinding[] } {
  const windowed: PiiFinding[] = [];
  const full: PiiFinding[] = [];
  r.scan(text, windowed, findDigitRuns(text));
  r.scan(text, full, null);
  return { windowed, full };
}

const SCANS: Readonly<Record<string, DigitScan>> = {
  card: cardDigitScan, ssn: ssnDigitScan, routing: routingDigitScan, iban: ibanDigitScan, phone: phoneDigitScan,
};

/** Every regex match (before validation): the windows must see the same ones, in the same order. */
function rawMatches(scan: DigitScan, text: string, windowed: boolean): string[] {
  const out: string[] = [];
  scanNearDigitRuns(text, scan, windowed ? findDigitRuns(text) : null, (m, start) => out.push(`${start}:${m[0]}`));
  return out;
}

const PIECES = [
  " ", " ", " ", "-", ".", "/", "(", ")", "+", ":", ", ", "\n", "  ", "\t", "\r\n",
  "card", "visa", "ssn", "social security", "routing", "aba", "bank", "iban", "DE", "GB", "FR", "phone", "tel", "call",
  "passport", "born", "date of birth", "DOB", "March", "14th of", "Sept.", "x", "A", "ZZ", "order", "the", "v",
];
const SAMPLES = [
  "4111 1111 1111 1111", "4111-1111-1111-1111", "378282246310005", "5555555555554444", "3782 822463 10005",
  "078-05-1120", "219-09-9999", "536-22-1234", "536 22 1234", "536221234",
  "021000021", "011401533", "DE89 3704 0044 0532 0130 00", "DE89370400440532013000", "GB82WEST12345698765432",
  "+1 415 555 0132", "(415) 555-0132", "+44 20 7946 0958", "020 7946 0958", "0049 30 901820",
  "03/14/1985", "14.03.1985", "1985-03-14", "C12345678", "123456789", "192.168.0.1",
  "born 03/14/1985", "DOB: 14 March 1985", "date of birth 1985-03-14", "born on Sept. 3, 1990", "passport C12345678", "passport no. 912345678",
  // Dates of birth with 2-digit years (skipped without a 4-digit run unless a 2-digit run follows "/", "." or "-").
  "DOB: 03/14/85", "dob 14.03.85", "born 3/4/85", "patient_dob: 14-Mar-85", "dateOfBirth 14/Mar/85", "DOB 19850314", "dob=1985-3-14T00:00:00Z",
  "customer_ssn=536221234", "routing_number 021000021",
  // Session 25: mixed, tab, slash and line-break separators in cards, a wrapped SSN.
  "4111-1111 1111-1111", "4111 1111\n1111 1111", "4111\t1111\t1111\t1111", "4111/1111/1111/1111", "4111\r\n1111 1111-1111", "536-22-\n8726", "536-\r\n22-8726",
];

function randomText(rng: Rng): string {
  let s = rng.chance(0.3) ? "" : rng.pick(PIECES);
  const parts = rng.int(1, 40);
  for (let i = 0; i < parts; i++) {
    const roll = rng.next();
    if (roll < 0.3) s += rng.digits(rng.int(1, 20));
    else if (roll < 0.4) s += Array.from({ length: rng.int(2, 12) }, () => rng.digits(rng.int(1, 2))).join(rng.pick([" ", "-", ".", " - "]));
    else if (roll < 0.55) s += rng.pick(SAMPLES);
    else s += rng.pick(PIECES);
  }
  return s;
}

test("every digit-aware recognizer finds the same with digit-run windows as with a full scan: labelled corpus", (t) => {
  const rows = loadPiiCorpus();
  let found = 0;
  for (const row of rows) {
    for (const r of DIGIT_AWARE) {
      const { windowed, full } = scanBothWays(r, row.text);
      found += full.length;
      if (JSON.stringify(windowed) !== JSON.stringify(full)) t.fail(`${r.entityType} differs on corpus row ${row.id}: ${row.text}`);
    }
  }
  t.true(found > 500, `the corpus exercises the recognizers (${found} raw findings)`);
});

test("every digit-aware recognizer finds the same with digit-run windows as with a full scan: random digit-dense text", (t) => {
  const rng = createRng(20261121);
  const perType = new Map<string, number>();
  for (let i = 0; i < 4000; i++) {
    const text = randomText(rng);
    for (const r of DIGIT_AWARE) {
      const { windowed, full } = scanBothWays(r, text);
      perType.set(r.entityType, (perType.get(r.entityType) ?? 0) + full.length);
      if (JSON.stringify(windowed) !== JSON.stringify(full)) {
        t.fail(`${r.entityType} differs on ${JSON.stringify(text)}: windowed ${JSON.stringify(windowed)} full ${JSON.stringify(full)}`);
        return;
      }
    }
  }
  for (const r of DIGIT_AWARE) t.true((perType.get(r.entityType) ?? 0) >= 10, `${r.entityType} is exercised (${perType.get(r.entityType) ?? 0} raw findings)`);
});

test("every recognizer regex matches the same with digit-run windows as with a full scan (before validation)", (t) => {
  const rng = createRng(7);
  const seen = new Map<string, number>();
  for (let i = 0; i < 6000; i++) {
    const text = randomText(rng);
    for (const [name, scan] of Object.entries(SCANS)) {
      const full = rawMatches(scan, text, false);
      const windowed = rawMatches(scan, text, true);
      seen.set(name, (seen.get(name) ?? 0) + full.length);
      if (JSON.stringify(windowed) !== JSON.stringify(full)) {
        t.fail(`${name} differs on ${JSON.stringify(text)}: windowed ${JSON.stringify(windowed)} full ${JSON.stringify(full)}`);
        return;
      }
    }
  }
  for (const name of Object.keys(SCANS)) t.true((seen.get(name) ?? 0) >= 100, `${name} regex is exercised (${seen.get(name) ?? 0} matches)`);
});

test("entities far apart in a long prose prompt: each window finds its own, nothing between them is scanned twice", (t) => {
  const prose = "The quarterly planning meeting covered the roadmap and the support rotation. ".repeat(20);
  const text = `${prose}card 4111 1111 1111 1111 ${prose}ssn 078-05-1120, routing 021000021${prose}call +1 415 555 0132${prose}IBAN DE89 3704 0044 0532 0130 00`;
  for (const r of DIGIT_AWARE) {
    const { windowed, full } = scanBothWays(r, text);
    t.deepEqual(windowed, full, r.entityType);
  }
  const cards: PiiFinding[] = [];
  creditCardRecognizer.scan(text, cards, findDigitRuns(text));
  t.is(cards.length, 1);
  t.is(text.slice(cards[0]!.start, cards[0]!.end), "4111 1111 1111 1111");
});

test("findDigitRuns: runs of two or more digits with their longest; null past MAX_DIGIT_RUNS", (t) => {
  t.deepEqual(findDigitRuns("a1 b22 c333 4444"), { starts: [4, 8, 12], ends: [6, 11, 16], longest: 4 });
  t.deepEqual(findDigitRuns("no digits at all, or 1 alone"), { starts: [], ends: [], longest: 0 });
  t.is(findDigitRuns("12 ".repeat(MAX_DIGIT_RUNS + 1)), null);
  t.not(findDigitRuns("12 ".repeat(MAX_DIGIT_RUNS)), null);
});

test("scanNearDigitRuns skips a text without a long enough run and continues after each match as a full scan does", (t) => {
  const scan: DigitScan = { re: /\d{4}(?:-\d{4})?/g, minRun: 4, maxLen: 9 };
  const seen: [string, number][] = [];
  scanNearDigitRuns("ab 123 cd 45", scan, findDigitRuns("ab 123 cd 45"), (m, start) => seen.push([m[0], start]));
  t.deepEqual(seen, []);
  const text = "x 1234-5678-9012 y 3456";
  scanNearDigitRuns(text, scan, findDigitRuns(text), (m, start) => seen.push([m[0], start]));
  t.deepEqual(seen, [["1234-5678", 2], ["9012", 12], ["3456", 19]]);
});
