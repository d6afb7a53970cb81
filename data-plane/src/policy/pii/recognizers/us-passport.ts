// US passport numbers (9 digits, or a letter and 8 digits): reported only after the word "passport".

import { CONTEXT_BOOST } from "../context.js";
import { scanAfterContext } from "../near-context.js";
import type { DigitRuns } from "../digit-runs.js";
import type { PiiFinding, Recognizer } from "../types.js";

const PASSPORT_RE = /(?<![\w-])(?:[A-Z]\d{8}|\d{9})(?![\w-])/g;
const CONTEXT_RE = /pass(?:port|eport|aport[oe])|reisepass|pasaporte/gi;
const REPEATED_RE = /^.?(\d)\1{7,8}$/;
/** Presidio's weak base score (0.1) plus the context boost. */
const SCORE = 0.1 + CONTEXT_BOOST;

export const usPassportRecognizer: Recognizer = {
  entityType: "us_passport",
  scan(text: string, out: PiiFinding[], runs: DigitRuns | null): void {
    if (runs !== null && runs.longest < 8) return; // every number has 8 digits in a row
    scanAfterContext(text, CONTEXT_RE, PASSPORT_RE, 9, (m, start) => {
      if (REPEATED_RE.test(m[0])) return;
      out.push({ entityType: "us_passport", start, end: start + m[0].length, score: SCORE });
    });
  },
};
