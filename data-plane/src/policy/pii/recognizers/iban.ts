// IBANs: country code + check digits + grouped BBAN, trimmed to the country length, then mod-97.

import { boostWithContext } from "../context.js";
import { scanNearDigitRuns, type DigitRuns, type DigitScan } from "../digit-runs.js";
import { IBAN_LENGTHS, ibanMod97 } from "../iban-check.js";
import type { PiiFinding, Recognizer } from "../types.js";

// Upper or lower case, groups separated by spaces or hyphens ("gb82 west …", "GB82-WEST-…"): the
// country length and mod-97 check decide.
const IBAN_RE = /(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[ -]?[A-Za-z0-9]{4}){2,7}(?:[ -]?[A-Za-z0-9]{1,3})?(?![A-Za-z0-9])/g;
/** Every match has its two check digits in a row and is at most 2 + 2 + 7 spaced groups of 4 + a spaced group of 3 long. */
export const ibanDigitScan: DigitScan = { re: IBAN_RE, minRun: 2, maxLen: 43 };
const CONTEXT_RE = /\b(?:iban|bank|account|transfer|wire|sepa|kontonummer|konto|compte|cuenta|conto)\b/i;

/**
 * Returns the length in `raw` (spaces included) of the IBAN it starts with, or -1.
 * A candidate longer than the country length is cut only at a group boundary
 * ("…0130 00 1234" → "…0130 00"), as Presidio does for trailing tokens.
 */
export function ibanSpanLength(raw: string): number {
  const expected = IBAN_LENGTHS[raw.slice(0, 2).toUpperCase()];
  if (expected === undefined) return -1;
  let compact = "";
  let i = 0;
  for (; i < raw.length && compact.length < expected; i++) {
    const ch = raw[i]!;
    if (ch !== " " && ch !== "-") compact += ch;
  }
  if (compact.length !== expected) return -1;
  if (i < raw.length && raw[i] !== " " && raw[i] !== "-") return -1;
  return ibanMod97(compact.toUpperCase()) === 1 ? i : -1;
}

export const ibanRecognizer: Recognizer = {
  entityType: "iban",
  scan(text: string, out: PiiFinding[], runs: DigitRuns | null): void {
    scanNearDigitRuns(text, ibanDigitScan, runs, (m, start) => {
      const len = ibanSpanLength(m[0]);
      if (len < 0) return;
      out.push({ entityType: "iban", start, end: start + len, score: boostWithContext(text, start, 1, CONTEXT_RE) });
    });
  },
};
