// Dates of birth: a valid calendar date (numeric or with a month name) shortly after a birth context word.

import { CONTEXT_BOOST } from "../context.js";
import { scanAfterContext } from "../near-context.js";
import type { DigitRuns } from "../digit-runs.js";
import type { PiiFinding, Recognizer } from "../types.js";

/** English month names and their abbreviations, as a regex source (also used by policy/stream/growing-tail). */
export const MONTHS =
  "jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|jun(?:e)?|jul(?:y)?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?";
const YEAR = "(?:19|20)\\d{2}";
const DATE_RE = new RegExp(
  "(?<![\\w/.-])(?:" +
    `(\\d{1,2})[/.-](\\d{1,2})[/.-](${YEAR})` + // 03/14/1985, 14.03.1985
    `|(${YEAR})-(\\d{2})-(\\d{2})` + // 1985-03-14
    `|(\\d{1,2})(?:st|nd|rd|th)? (?:of )?(${MONTHS})\\.?,? (${YEAR})` + // 14 March 1985
    `|(${MONTHS})\\.? (\\d{1,2})(?:st|nd|rd|th)?,? (${YEAR})` + // March 14, 1985
    ")(?![\\w/-]|\\.\\d)",
  "gi",
);
const CONTEXT_RE =
  /\b(?:dob|d\.o\.b|date of birth|birth ?date|birthday|born(?: on)?|geburtsdatum|geboren(?: am)?|date de naissance|n[ée]e? le|fecha de nacimiento|nacid[oa]|data di nascita|nat[oa] il|data de nascimento|geboortedatum)(?![a-z])/gi;
/** A validated date (base 0.3) with a birth context word. */
const SCORE = 0.3 + CONTEXT_BOOST;
/** Longest date the pattern can match ("14th of September, 1985" and the like). */
const MAX_DATE_LEN = 28;

const MONTH_INDEX: Readonly<Record<string, number>> = {
  jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12,
};
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function validDay(day: number, month: number): boolean {
  return month >= 1 && month <= 12 && day >= 1 && day <= DAYS_IN_MONTH[month - 1]!;
}

function monthOf(name: string): number {
  return MONTH_INDEX[name.slice(0, 3).toLowerCase()] ?? 0;
}

/** True when the matched groups form a real calendar date (either m/d or d/m order for numeric forms). */
function validDate(m: RegExpExecArray): boolean {
  if (m[1] !== undefined) {
    const a = Number(m[1]);
    const b = Number(m[2]);
    return validDay(b, a) || validDay(a, b);
  }
  if (m[4] !== undefined) return validDay(Number(m[6]), Number(m[5]));
  if (m[7] !== undefined) return validDay(Number(m[7]), monthOf(m[8]!));
  if (m[10] !== undefined) return validDay(Number(m[11]), monthOf(m[10]));
  return false;
}

export const dateOfBirthRecognizer: Recognizer = {
  entityType: "date_of_birth",
  scan(text: string, out: PiiFinding[], runs: DigitRuns | null): void {
    if (runs !== null && runs.longest < 4) return; // every date has a 4-digit year
    scanAfterContext(text, CONTEXT_RE, DATE_RE, MAX_DATE_LEN, (m, start) => {
      if (validDate(m)) out.push({ entityType: "date_of_birth", start, end: start + m[0].length, score: SCORE });
    });
  },
};
