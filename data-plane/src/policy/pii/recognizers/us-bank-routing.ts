// US ABA routing transit numbers: nine digits with a valid prefix and checksum, and a context word.

import { abaValid } from "../aba.js";
import { boostWithContext } from "../context.js";
import { contextWordsRe } from "../context-words.js";
import { scanNearDigitRuns, type DigitRuns, type DigitScan } from "../digit-runs.js";
import type { PiiFinding, Recognizer } from "../types.js";

const ROUTING_RE = /(?<![\w.-])\d{9}(?![\w-]|\.\d)/g;
/** Nine digits, nothing else. */
export const routingDigitScan: DigitScan = { re: ROUTING_RE, minRun: 9, maxLen: 9 };
/** Also as identifiers: "routing_number", "routingNumber", "bank_routing" (context-words.ts). */
const CONTEXT_RE = contextWordsRe(["routing", "aba", "rtn", "transit", "bank", "wire", "ach", "bankleitzahl"]);

export const usBankRoutingRecognizer: Recognizer = {
  entityType: "us_bank_routing",
  scan(text: string, out: PiiFinding[], runs: DigitRuns | null): void {
    scanNearDigitRuns(text, routingDigitScan, runs, (m, start) => {
      if (!abaValid(m[0])) return;
      // 1 in 27 random 9-digit numbers passes prefix + checksum: without context the score stays below threshold.
      out.push({ entityType: "us_bank_routing", start, end: start + 9, score: boostWithContext(text, start, 0.35, CONTEXT_RE) });
    });
  },
};
