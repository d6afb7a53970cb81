// US Social Security Numbers: 3-2-4 digits with one consistent delimiter, Presidio's invalid ranges.

import { boostWithContext } from "../context.js";
import { ssnPlausible } from "../ssn-check.js";
import type { PiiFinding, Recognizer } from "../types.js";

const SSN_RE = /(?<![\w.-])(\d{3})([- .]?)(\d{2})\2(\d{4})(?![\w-]|\.\d)/g;
const CONTEXT_RE = /\b(?:social|security|ssn|ssns|ss#|ssid|sozialversicherung)/i;

export const ssnRecognizer: Recognizer = {
  entityType: "ssn",
  scan(text: string, out: PiiFinding[]): void {
    SSN_RE.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = SSN_RE.exec(text)) !== null) {
      if (!ssnPlausible(m[1]!, m[3]!, m[4]!)) continue;
      const sep = m[2];
      // Dashed 3-2-4 is the SSN shape; spaces/dots or no delimiter need a context word.
      const base = sep === "-" ? 0.6 : sep === "" ? 0.05 : 0.3;
      const start = m.index;
      out.push({ entityType: "ssn", start, end: start + m[0].length, score: boostWithContext(text, start, base, CONTEXT_RE) });
    }
  },
};
