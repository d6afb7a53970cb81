// Dates of birth: a valid calendar date (numeric or with a month name) shortly after a birth context word.

import { CONTEXT_BOOST } from "../context.js";
import { atContextWordBoundary, contextWordsScanRe } from "../context-words.js";
import { scanAfterContext } from "../near-context.js";
import type { DigitRuns } from "../digit-runs.js";
import type { PiiFinding, Recognizer } from "../types.js";

/** English month names and their abbreviations, as a regex source (also used by policy/stream/growing-tail). */
export const MONTHS =
  "jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|jun(?:e)?|jul(?:y)?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?";
const YEAR = "(?:19|20)\\d{2}";
/** A 4-digit year, or 2 digits ("03/14/85"): the birth word in front keeps these from matching at random. */
const YEAR_OR_YY = `${YEAR}|\\d{2}`;
/** An ISO 8601 time after a y-m-d date ("1985-03-14T00:00:00Z", as JSON serialisers write a date). */
const ISO_TIME = "(?:T\\d{2}:\\d{2}(?::\\d{2}(?:\\.\\d{1,9})?)?(?:Z|[+-]\\d{2}:?\\d{2})?)?";
const DATE_RE = new RegExp(
  "(?<![\\w/.-])(?:" +
    `(\\d{1,2})[/.-](\\d{1,2})[/.-](${YEAR_OR_YY})` + // 03/14/1985, 14.03.1985, 03/14/85, 14.03.85
    `|(${YEAR})([-/.])(\\d{1,2})\\5(\\d{1,2})${ISO_TIME}` + // 1985-03-14, 1985/03/14, 1985-3-14, 1985-03-14T00:00:00Z
    `|(${YEAR})(\\d{2})(\\d{2})` + // 19850314
    `|(\\d{1,2})(?:st|nd|rd|th)? (?:of )?(${MONTHS})\\.?,? (${YEAR})` + // 14 March 1985
    `|(${MONTHS})\\.? (\\d{1,2})(?:st|nd|rd|th)?,? (${YEAR})` + // March 14, 1985
    `|(\\d{1,2})([-/])(${MONTHS})\\18(${YEAR_OR_YY})` + // 14-Mar-1985, 14/Mar/85
    ")(?![\\w/-]|\\.\\d)",
  "gi",
);
/** Birth words, also as identifiers ("date_of_birth", "dateOfBirth", "patient_dob"; see context-words.ts). */
const CONTEXT_RE = contextWordsScanRe([
  "dob", "d\\.o\\.b", "date of birth", "birth date", "birthday", "born(?: on)?", "geburtsdatum", "geboren(?: am)?",
  "date de naissance", "n[ée]e? le", "fecha de nacimiento", "nacid[oa]", "data di nascita", "nat[oa] il",
  "data de nascimento", "geboortedatum",
]);
/** A validated date (base 0.3) with a birth context word. */
const SCORE = 0.3 + CONTEXT_BOOST;
/** Longest date the pattern can match ("1985-03-14T00:00:00.123456789+05:30" and the like). */
const MAX_DATE_LEN = 40;

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
  if (m[4] !== undefined) return validDay(Number(m[7]), Number(m[6]));
  if (m[8] !== undefined) return validDay(Number(m[10]), Number(m[9]));
  if (m[11] !== undefined) return validDay(Number(m[11]), monthOf(m[12]!));
  if (m[14] !== undefined) return validDay(Number(m[15]), monthOf(m[14]));
  if (m[17] !== undefined) return validDay(Number(m[17]), monthOf(m[19]!));
  return false;
}

/**
 * Every date has a 4-digit year, or a 2-digit one right after "/", "." or "-" ("03/14/85", "14-Mar-85"):
 * without either, no date can match (prose with "12%" or "120 words" skips the context scan).
 */
function hasYyRun(text: string, runs: DigitRuns): boolean {
  for (let i = 0; i < runs.starts.length; i++) {
    const start = runs.starts[i]!;
    if (runs.ends[i]! - start !== 2 || start === 0) continue;
    const c = text.charCodeAt(start - 1);
    if (c === 47 /* / */ || c === 46 /* . */ || c === 45 /* - */) return true;
  }
  return false;
}

export const dateOfBirthRecognizer: Recognizer = {
  entityType: "date_of_birth",
  scan(text: string, out: PiiFinding[], runs: DigitRuns | null): void {
    if (runs !== null && runs.longest < 4 && !hasYyRun(text, runs)) return;
    scanAfterContext(text, CONTEXT_RE, DATE_RE, MAX_DATE_LEN, (m, start) => {
      if (validDate(m)) out.push({ entityType: "date_of_birth", start, end: start + m[0].length, score: SCORE });
    }, atContextWordBoundary);
  },
};
