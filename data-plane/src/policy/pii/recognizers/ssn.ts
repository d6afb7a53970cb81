// US Social Security Numbers: 3-2-4 digits with one consistent delimiter, Presidio's invalid ranges.

import { boostWithContext } from "../context.js";
import { contextWordsRe } from "../context-words.js";
import { scanNearDigitRuns, type DigitRuns, type DigitScan } from "../digit-runs.js";
import { ssnPlausible } from "../ssn-check.js";
import type { PiiFinding, Recognizer } from "../types.js";

const SSN_RE = /(?<![\w.-])(\d{3})([- .]?)(\d{2})\2(\d{4})(?![\w-]|\.\d)/g;
/** Every match ends in 4 digits and is at most 3-2-4 digits with two delimiters long. */
export const ssnDigitScan: DigitScan = { re: SSN_RE, minRun: 4, maxLen: 11 };
/** Also as identifiers: "customer_ssn", "socialSecurityNumber" (context-words.ts); a prefix match, as `\bssn` was. */
const CONTEXT_RE = contextWordsRe(["social", "security", "ssn", "ssns", "ss#", "ssid", "sozialversicherung"], { openEnd: true });

export const ssnRecognizer: Recognizer = {
  entityType: "ssn",
  scan(text: string, out: PiiFinding[], runs: DigitRuns | null): void {
    scanNearDigitRuns(text, ssnDigitScan, runs, (m, start) => {
      if (!ssnPlausible(m[1]!, m[3]!, m[4]!)) return;
      const sep = m[2];
      // Dashed 3-2-4 is the SSN shape; spaces/dots or no delimiter need a context word, before the
      // number or right after it ("589316325 is my social security number").
      const base = sep === "-" ? 0.6 : sep === "" ? 0.05 : 0.3;
      const end = start + m[0].length;
      out.push({ entityType: "ssn", start, end, score: boostWithContext(text, start, base, CONTEXT_RE, sep === "-" ? undefined : end) });
    });
  },
};
