// US ABA routing transit numbers: nine digits with a valid prefix and checksum, and a context word.

import { abaValid } from "../aba.js";
import { boostWithContext } from "../context.js";
import { scanNearDigitRuns, type DigitRuns, type DigitScan } from "../digit-runs.js";
import type { PiiFinding, Recognizer } from "../types.js";

const ROUTING_RE = /(?<![\w.-])\d{9}(?![\w-]|\.\d)/g;
/** Nine digits, nothing else. */
export const routingDigitScan: DigitScan = { re: ROUTING_RE, minRun: 9, maxLen: 9 };
const CONTEXT_RE = /\b(?:routing|aba|rtn|transit|bank|wire|ach|bankleitzahl)\b/i;

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
