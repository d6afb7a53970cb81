// ReDoS fuzzing: long pathological and random inputs must be processed completely (bounded
// quantifiers, anchored starts). Assertions are on the work done (every planted entity found,
// invariants hold), never on timing.

import test from "ava";
import { detectPii } from "./detect-pii.js";
import { createRng } from "./fixtures/prng.js";
import type { PiiFinding } from "./types.js";

const SIZE = 100 * 1024;

function repeatTo(unit: string, size = SIZE): string {
  return unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
}

function assertInvariants(t: import("ava").ExecutionContext, text: string, f: PiiFinding[]): void {
  for (let i = 0; i < f.length; i++) {
    const x = f[i]!;
    t.true(x.start >= 0 && x.end <= text.length && x.start < x.end);
    if (i > 0) t.true(x.start >= f[i - 1]!.end, "sorted and non-overlapping");
  }
}

const pathological: readonly [string, string][] = [
  ["digits", "1"],
  ["digits and spaces", "1 "],
  ["digits and dashes", "12-"],
  ["plus digits", "+1 "],
  ["parenthesised digits", "(1) "],
  ["dotted digits", "1."],
  ["colons", ":"],
  ["hex and colons", "a:"],
  ["double colons", "ab::"],
  ["at signs", "@"],
  ["local part run", "a"],
  ["local part then at", "a.b-c_d+"],
  ["domain labels", "a."],
  ["email-ish", "a@a."],
  ["uppercase digits", "AB12"],
  ["iban-ish groups", "DE89 1234 "],
  ["aws-ish", "AKIA"],
  ["jwt-ish", "eyJ"],
  ["jwt segments", "eyJabcdefgh."],
  ["pem headers", "-----BEGIN PRIVATE KEY-----"],
  ["pem json escapes", "-----BEGIN PRIVATE KEY-----\\nAb9/\\n"],
  ["pem header lines", "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n"],
  ["identifier context words", "customer_ssn routingNumber patient_dob dateOfBirth 12/12/"],
  ["slack-ish", "xoxb-"],
  ["openai-ish", "sk-"],
  ["base64 run", "Ab9/"],
  ["dates", "12/12/"],
  ["2-digit-year dates", "1/1/85 DOB "],
  ["slices", "xs[1::2] "],
  ["month names", "March 1, "],
  ["context words", "passport DOB ssn routing aws secret "],
];

for (const [name, unit] of pathological) {
  test(`100 KB of "${name}" is fully processed`, (t) => {
    const text = repeatTo(unit);
    const f = detectPii(text);
    assertInvariants(t, text, f);
    // The scan must also still work after a pathological input (no stuck lastIndex state).
    t.deepEqual(
      detectPii("mail jane@example.com").map((x) => x.entityType),
      ["email"],
    );
  });
}

test("100 KB of pathological text with a planted tail entity: the tail is still found", (t) => {
  for (const unit of ["1", "a", ":", "@", "1.", "AKIA", "a."]) {
    const text = repeatTo(unit) + " contact jane@example.com";
    const f = detectPii(text);
    const last = f.at(-1);
    t.truthy(last, unit);
    t.is(last!.entityType, "email", unit);
    t.is(text.slice(last!.start, last!.end), "jane@example.com", unit);
  }
});

test("12,800 planted emails in 100 KB are all reported", (t) => {
  const text = repeatTo("a@b.co, ", 8 * 12800);
  const f = detectPii(text);
  t.is(f.length, 12800);
  t.true(f.every((x) => x.entityType === "email"));
});

test("random inputs from a PII-heavy alphabet keep the invariants", (t) => {
  const rng = createRng(7);
  const alphabet = "0123456789 -.:/@+()ABCDEFabcdef_=\n";
  let processed = 0;
  for (let round = 0; round < 20; round++) {
    let s = "";
    for (let i = 0; i < 20000; i++) s += alphabet[rng.int(0, alphabet.length - 1)];
    const f = detectPii(s);
    assertInvariants(t, s, f);
    processed += s.length;
  }
  t.is(processed, 400000);
});
