// US ABA routing transit numbers: nine digits with a valid prefix and checksum, and a context word.

import { abaValid } from "../aba.js";
import { boostWithContext } from "../context.js";
import { contextWordsRe } from "../context-words.js";
import { scanNearDigitRuns, type DigitRuns, type DigitScan } from "../digit-runs.js";
import type { PiiFinding, Recognizer } from "../types.js";

// Nine digits, also dashed 4-4-1 ("0210-0002-1", the check digit apart) or 3-3-3 ("021-000-021").
const ROUTING_RE = /(?<![\w.-])(?:\d{9}|\d{4}-\d{4}-\d|\d{3}-\d{3}-\d{3})(?![\w-]|\.\d)/g;
/** Every match has a run of 3 digits and is at most 11 characters long. */
export const routingDigitScan: DigitScan = { re: ROUTING_RE, minRun: 3, maxLen: 11 };
const DASH_RE = /-/g;
/** Also as identifiers: "routing_number", "routingNumber", "bank_routing" (context-words.ts). */
const CONTEXT_RE = contextWordsRe(["routing", "aba", "rtn", "transit", "bank", "wire", "ach", "bankleitzahl"]);

export const usBankRoutingRecognizer: Recognizer = {
  entityType: "us_bank_routing",
  scan(text: string, out: PiiFinding[], runs: DigitRuns | null): void {
    scanNearDigitRuns(text, routingDigitScan, runs, (m, start) => {
      if (!abaValid(m[0].length === 9 ? m[0] : m[0].replace(DASH_RE, ""))) return;
      // 1 in 27 random 9-digit numbers passes prefix + checksum: without context the score stays below threshold.
      out.push({ entityType: "us_bank_routing", start, end: start + m[0].length, score: boostWithContext(text, start, 0.35, CONTEXT_RE) });
    });
  },
};
