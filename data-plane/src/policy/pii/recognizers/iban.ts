// IBANs: country code + check digits + grouped BBAN, trimmed to the country length, then mod-97.

import { boostWithContext } from "../context.js";
import { IBAN_LENGTHS, ibanMod97 } from "../iban-check.js";
import type { PiiFinding, Recognizer } from "../types.js";

const IBAN_RE = /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])/g;
const CONTEXT_RE = /\b(?:iban|bank|account|transfer|wire|sepa|kontonummer|konto|compte|cuenta|conto)\b/i;

/**
 * Returns the length in `raw` (spaces included) of the IBAN it starts with, or -1.
 * A candidate longer than the country length is cut only at a group boundary
 * ("…0130 00 1234" → "…0130 00"), as Presidio does for trailing tokens.
 */
export function ibanSpanLength(raw: string): number {
  const expected = IBAN_LENGTHS[raw.slice(0, 2)];
  if (expected === undefined) return -1;
  let compact = "";
  let i = 0;
  for (; i < raw.length && compact.length < expected; i++) {
    const ch = raw[i]!;
    if (ch !== " ") compact += ch;
  }
  if (compact.length !== expected) return -1;
  if (i < raw.length && raw[i] !== " ") return -1;
  return ibanMod97(compact) === 1 ? i : -1;
}

export const ibanRecognizer: Recognizer = {
  entityType: "iban",
  scan(text: string, out: PiiFinding[]): void {
    IBAN_RE.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = IBAN_RE.exec(text)) !== null) {
      const len = ibanSpanLength(m[0]);
      if (len < 0) continue;
      const start = m.index;
      out.push({ entityType: "iban", start, end: start + len, score: boostWithContext(text, start, 1, CONTEXT_RE) });
    }
  },
};
