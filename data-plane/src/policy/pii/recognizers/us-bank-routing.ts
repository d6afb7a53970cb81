// US ABA routing transit numbers: nine digits with a valid prefix and checksum, and a context word.

import { abaValid } from "../aba.js";
import { boostWithContext } from "../context.js";
import type { PiiFinding, Recognizer } from "../types.js";

const ROUTING_RE = /(?<![\w.-])\d{9}(?![\w-]|\.\d)/g;
const CONTEXT_RE = /\b(?:routing|aba|rtn|transit|bank|wire|ach|bankleitzahl)\b/i;

export const usBankRoutingRecognizer: Recognizer = {
  entityType: "us_bank_routing",
  scan(text: string, out: PiiFinding[]): void {
    ROUTING_RE.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = ROUTING_RE.exec(text)) !== null) {
      if (!abaValid(m[0])) continue;
      const start = m.index;
      // 1 in 27 random 9-digit numbers passes prefix + checksum: without context the score stays below threshold.
      out.push({ entityType: "us_bank_routing", start, end: start + 9, score: boostWithContext(text, start, 0.35, CONTEXT_RE) });
    }
  },
};
