// Phone numbers in links and after a colon, international numbers that start like a date, context words
// written as identifiers, and a number followed by "24/7".

import test from "ava";
import { detectPii } from "./detect-pii.js";
import { windowedScanEqualsFull } from "./fixtures/windowed-scan.js";
import { maskSpans } from "./mask.js";
import { phoneDigitScan } from "./recognizers/phone.js";

function phones(text: string): string[] {
  return detectPii(text)
    .filter((f) => f.entityType === "phone")
    .map((f) => text.slice(f.start, f.end));
}

test("a number glued to a colon: tel: links and 'Phone:+1…'", (t) => {
  t.deepEqual(phones("tel:+14155550132"), ["+14155550132"]);
  t.deepEqual(phones("Phone:+14155550132"), ["+14155550132"]);
  t.deepEqual(phones("WhatsApp:+34 612 34 56 78"), ["+34 612 34 56 78"]);
  const md = "[Call us](tel:+14155550132) or <a href=\"tel:+442079460958\">+44 20 7946 0958</a>";
  t.is(maskSpans(md, detectPii(md), "redact"), "[Call us](tel:[REDACTED:phone]) or <a href=\"tel:[REDACTED:phone]\">[REDACTED:phone]</a>");
});

test("times and addresses after a colon stay no phone", (t) => {
  for (const text of ["at 12:30:45 today", "ts:1711460733", "http://10.0.0.1:8080/health", "id:4155550132", "2001:0db8:0000:0000:0000:ff00:0042:8329"]) {
    t.deepEqual(phones(text), [], text);
  }
});

test("an international number with a 00 prefix is no date", (t) => {
  t.deepEqual(phones("phone: 0033 6 12 34 56 78"), ["0033 6 12 34 56 78"]);
  t.deepEqual(phones("Tel. 0044 7400 123456"), ["0044 7400 123456"]);
  t.deepEqual(phones("phone: +33 6 12 34 56 78"), ["+33 6 12 34 56 78"]);
  // dates still are
  t.deepEqual(phones("phone log of 2024 6 12 34 56 78"), []);
  t.deepEqual(phones("call at 2024-03-18 14:05:33"), []);
});

test("context words written as identifiers: snake_case, camelCase, SCREAMING_CASE", (t) => {
  t.deepEqual(phones('{"phone_number": "4155550132"}'), ["4155550132"]);
  t.deepEqual(phones('{"phoneNumber": "4155550132"}'), ["4155550132"]);
  t.deepEqual(phones("mobile_phone=4155550132"), ["4155550132"]);
  t.deepEqual(phones("PHONE_NUMBER=4155550132"), ["4155550132"]);
  t.deepEqual(phones("customer:\n  contactPhone: 4155550132"), ["4155550132"]);
  t.deepEqual(phones("phone2: 4155550132"), ["4155550132"]);
  // the letters inside another word are no context word
  for (const text of ["hotel 4155550132", "callback_id 4155550132", "telemetry 4155550132", "string 4155550132", "smartphones 4155550132"]) {
    t.deepEqual(phones(text), [], text);
  }
});

test("a number followed by 24/7 or a time is a phone; one glued to another group is not", (t) => {
  t.deepEqual(phones("Call 201-555-0123 24/7"), ["201-555-0123"]);
  t.deepEqual(phones("Call 415-555-0132 24/7 for support."), ["415-555-0132"]);
  t.deepEqual(phones("Call (415) 555-0132 24/7"), ["(415) 555-0132"]);
  t.deepEqual(phones("phone 415-555-0132 14:30"), ["415-555-0132"]);
  t.deepEqual(phones("tel 415 555 0132 2024"), []);
  t.deepEqual(phones("tel 415 555 0132 20 24"), []);
});

test("digit-run windows report what a full scan reports for the phone regex (colons, 24/7, 00 prefixes)", (t) => {
  const pieces = [" ", "-", ":", "tel:", "Phone:", "+", "(", ")", " 24/7", " 14:30", "/", "00", "0033 6 12 34 56 78", "+14155550132", "415-555-0132", "phone_number: "];
  const seen = windowedScanEqualsFull(t, phoneDigitScan, 5150, pieces);
  t.true(seen > 300, `matches (${seen})`);
});

test("national formats of more countries: with a trunk 0 on their own, without one next to a phone word", (t) => {
  for (const n of ["06 12345678", "06-12345678", "020 123 4567", "0412 345 678", "(02) 9876 5432", "090-1234-5678", "03-1234-5678", "06 1234 5678"]) {
    t.deepEqual(phones(`Reach Anna at ${n} after lunch.`), [n], n);
  }
  for (const n of ["612 34 56 78", "912 345 678", "347 123 4567", "(11) 91234-5678"]) {
    t.deepEqual(phones(`Her mobile: ${n}`), [n], n);
    t.deepEqual(phones(`Invoice total ${n} units`), [], `${n} without a phone word`);
  }
  // Digit groups that are no number of any of those countries.
  for (const text of ["order 123 456 789 shipped", "ref 0000 000 000", "build 03-1234-0000-9"]) t.deepEqual(phones(text), [], text);
});
