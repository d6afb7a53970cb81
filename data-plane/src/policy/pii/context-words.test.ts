// Context words written as identifiers (agent tool results, CRM JSON): "customer_ssn", "routingNumber",
// "date_of_birth", "dateOfBirth", "patient_dob". The value must still validate.

import test from "ava";
import { atContextWordBoundary, contextWordsRe, contextWordsScanRe } from "./context-words.js";
import { detectPii } from "./detect-pii.js";
import type { PiiType } from "./types.js";

function found(text: string, type: PiiType): string[] {
  return detectPii(text, { types: [type] }).map((f) => text.slice(f.start, f.end));
}

test("contextWordsRe: prose, snake_case, camelCase, kebab-case and SCREAMING_CASE forms; not inside other words", (t) => {
  const re = contextWordsRe(["date of birth", "dob", "ssn"]);
  for (const s of ["date of birth", "date_of_birth", "dateOfBirth", "DateOfBirth", "DATE_OF_BIRTH", "date-of-birth", "patient_dob", "patientDob", "patientDOB", "DOB:", "customer_ssn", "customerSSN", "ssn"]) {
    t.true(re.test(s), s);
  }
  for (const s of ["adobe", "Adobe", "ADOBE", "dobson", "DOBSON", "lessn", "classnames", "ssns", "update ofbirth"]) t.false(re.test(s), s);
  t.true(contextWordsRe(["ssn"], { openEnd: true }).test("ssnLast4"));
});

test("contextWordsScanRe + atContextWordBoundary agree with contextWordsRe, except a word glued after a lower-case letter", (t) => {
  const words = ["dob", "date of birth", "birth date", "born(?: on)?"];
  const re = contextWordsRe(words);
  const scan = contextWordsScanRe(words);
  for (const s of ["patient_dob", "PATIENT_DOB", "adobe", "Dobson", "birthDate", "reborn", "bornOn", "DOBX", "x dob y", "date-of-birth", "dateOfBirth", "x_dob1"]) {
    scan.lastIndex = 0;
    let any = false;
    let m: RegExpExecArray | null;
    while ((m = scan.exec(s)) !== null) {
      if (atContextWordBoundary(s, m.index, m.index + m[0].length)) any = true;
      scan.lastIndex = m.index + 1;
    }
    t.is(any, re.test(s), s);
  }
  t.true(contextWordsRe(words).test("patientDob"));
  scan.lastIndex = 0;
  t.is(scan.exec("patientDob"), null, "the whole-text scan trades camelCase-glued words for speed");
});

const SSN_IDENTIFIER_CASES: readonly [string, string][] = [
  ["customer_ssn=589316325", "589316325"],
  ['{"customer_ssn": "589 31 6325"}', "589 31 6325"],
  ['{"customer_ssn": "589.31.6325"}', "589.31.6325"],
  ["customer:\n  customer_ssn: 589316325\n", "589316325"],
  ['{"customerSSN": "589316325"}', "589316325"],
];

test("ssn: spaced, dotted and bare SSNs under identifier keys", (t) => {
  for (const [text, value] of SSN_IDENTIFIER_CASES) t.deepEqual(found(text, "ssn"), [value], text);
  // Still validated: an invalid area (9xx) and a bare run without any SSN word stay unreported.
  t.deepEqual(found("customer_ssn=989316325", "ssn"), []);
  t.deepEqual(found("customer_id=589316325", "ssn"), []);
  t.deepEqual(found("lessn 589316325", "ssn"), []);
});

test("us_bank_routing: identifier keys count as context; the checksum still decides", (t) => {
  for (const key of ["routing_number", "routingNumber", "bank_routing", "ROUTING_NUMBER", "abaNumber"]) {
    const text = `{"${key}": "021000021"}`;
    t.deepEqual(found(text, "us_bank_routing"), ["021000021"], key);
  }
  t.deepEqual(found('{"routing_number": "021000022"}', "us_bank_routing"), [], "bad checksum");
  for (const text of ["wireless 021000021", "each 021000021", "transitive 021000021", "Bankruptcy 021000021"]) {
    t.deepEqual(found(text, "us_bank_routing"), [], text);
  }
});

test("date_of_birth: identifier keys count as birth words; not inside other words", (t) => {
  for (const key of ["date_of_birth", "dateOfBirth", "birth_date", "birthDate", "patient_dob", "PATIENT_DOB", "dob"]) {
    const text = `{"name": "Jane Doe", "${key}": "1985-03-14", "status": "active"}`;
    t.deepEqual(found(text, "date_of_birth"), ["1985-03-14"], key);
  }
  for (const text of ["adobe 1985-03-14", "Dobson 1985-03-14", "reborn 1985-03-14", "update_of 1985-03-14"]) {
    t.deepEqual(found(text, "date_of_birth"), [], text);
  }
  t.deepEqual(found('{"date_of_birth": "1985-02-30"}', "date_of_birth"), [], "invalid date");
});
