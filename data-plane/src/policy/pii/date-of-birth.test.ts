// Date-of-birth formats after a birth word: 2-digit years, d-Mon-y, y/m/d, y-m-d with 1-digit parts,
// compact yyyymmdd and ISO 8601 date-times; dates stay validated.

import test from "ava";
import { detectPii } from "./detect-pii.js";

function dob(text: string): string[] {
  return detectPii(text, { types: ["date_of_birth"] }).map((f) => text.slice(f.start, f.end));
}

const FORMATS = ["03/14/85", "14.03.85", "14-Mar-1985", "14-Mar-85", "14/Mar/1985", "1985/03/14", "1985-3-14", "1985.03.14", "19850314", "1985-03-14T00:00:00Z", "1985-03-14T00:00:00.000+05:30", "3/4/85"];

test("date_of_birth: every format is found whole right after DOB:, a birth sentence and a JSON key", (t) => {
  for (const d of FORMATS) {
    for (const text of [`DOB: ${d}`, `Jane was born on ${d} in Ohio.`, `Date of Birth: ${d}`, `{"dateOfBirth": "${d}"}`]) {
      t.deepEqual(dob(text), [d], text);
    }
  }
});

test("date_of_birth: the new formats are validated and need a birth word", (t) => {
  for (const text of ["DOB: 02/30/85", "DOB: 13.13.85", "DOB: 31-Feb-1985", "DOB: 1985/13/14", "DOB: 19851340", "DOB: 1985-02-30T00:00:00Z"]) {
    t.deepEqual(dob(text), [], text);
  }
  for (const text of ["Meeting on 03/14/85", "build 19850314", "deadline 1985-03-14T00:00:00Z", "14-Mar-1985 release"]) {
    t.deepEqual(dob(text), [], text);
  }
  // Not glued to more digits or a longer path.
  t.deepEqual(dob("DOB: 198503141"), []);
  t.deepEqual(dob("DOB: 03/14/851"), []);
});
