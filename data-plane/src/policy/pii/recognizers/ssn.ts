// US Social Security Numbers: 3-2-4 digits with one consistent delimiter, Presidio's invalid ranges.

import { boostWithContext } from "../context.js";
import { contextWordsRe } from "../context-words.js";
import { scanNearDigitRuns, type DigitRuns, type DigitScan } from "../digit-runs.js";
import { ssnPlausible } from "../ssn-check.js";
import type { PiiFinding, Recognizer } from "../types.js";

// A dashed SSN may be wrapped after one of its dashes ("536-22-\n8726", session 25, QA F6): it then
// needs a context word, as spaced ones do (a line break after a dash is how text wraps, not a shape).
const SSN_RE = /(?<![\w.-])(\d{3})([- .]?)(\r?\n)?(\d{2})\2(\r?\n)?(\d{4})(?![\w-]|\.\d)/g;
/** Every match ends in 4 digits and is at most 3-2-4 digits with two delimiters and two line breaks long. */
export const ssnDigitScan: DigitScan = { re: SSN_RE, minRun: 4, maxLen: 15 };
/** Also as identifiers: "customer_ssn", "socialSecurityNumber" (context-words.ts); a prefix match, as `\bssn` was. */
const CONTEXT_RE = contextWordsRe(["social", "security", "ssn", "ssns", "ss#", "ssid", "sozialversicherung"], { openEnd: true });

export const ssnRecognizer: Recognizer = {
  entityType: "ssn",
  scan(text: string, out: PiiFinding[], runs: DigitRuns | null): void {
    scanNearDigitRuns(text, ssnDigitScan, runs, (m, start) => {
      const sep = m[2];
      const wrapped = m[3] !== undefined || m[5] !== undefined;
      if (wrapped && (sep !== "-" || (m[3] !== undefined && m[5] !== undefined))) return; // one line break, after a dash
      if (!ssnPlausible(m[1]!, m[4]!, m[6]!)) return;
      // Dashed 3-2-4 is the SSN shape; spaces/dots or no delimiter need a context word, before the
      // number or right after it ("589316325 is my social security number").
      const base = sep === "-" ? (wrapped ? 0.3 : 0.6) : sep === "" ? 0.05 : 0.3;
      const end = start + m[0].length;
      out.push({ entityType: "ssn", start, end, score: boostWithContext(text, start, base, CONTEXT_RE, sep === "-" && !wrapped ? undefined : end) });
    });
  },
};
