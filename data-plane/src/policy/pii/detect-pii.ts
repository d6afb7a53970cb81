// detectPii: runs the recognizers, applies the score threshold and resolves overlapping spans.

import { apiKeyRecognizer } from "./recognizers/api-key.js";
import { creditCardRecognizer } from "./recognizers/credit-card.js";
import { dateOfBirthRecognizer } from "./recognizers/date-of-birth.js";
import { emailRecognizer } from "./recognizers/email.js";
import { ibanRecognizer } from "./recognizers/iban.js";
import { ipAddressRecognizer } from "./recognizers/ip-address.js";
import { phoneRecognizer } from "./recognizers/phone.js";
import { ssnRecognizer } from "./recognizers/ssn.js";
import { usBankRoutingRecognizer } from "./recognizers/us-bank-routing.js";
import { usPassportRecognizer } from "./recognizers/us-passport.js";
import { isAscii } from "../is-ascii.js";
import { scanForm, textEnd, textStart } from "./ascii-shadow.js";
import { findDigitRuns } from "./digit-runs.js";
import { resolveOverlaps } from "./resolve-overlaps.js";
import type { PiiFinding, PiiType, Recognizer } from "./types.js";

/** Findings scoring below this are dropped (Presidio's evaluation threshold). */
export const DEFAULT_PII_THRESHOLD = 0.4;

export interface DetectPiiOptions {
  /** Only these entity types are searched; default: all of PII_TYPES. */
  types?: readonly PiiType[];
  /** Minimum score of a reported finding; default DEFAULT_PII_THRESHOLD. */
  minScore?: number;
}

const RECOGNIZERS: readonly Recognizer[] = [
  apiKeyRecognizer,
  ibanRecognizer,
  creditCardRecognizer,
  emailRecognizer,
  ipAddressRecognizer,
  ssnRecognizer,
  usBankRoutingRecognizer,
  usPassportRecognizer,
  dateOfBirthRecognizer,
  phoneRecognizer,
];

/**
 * Finds PII in `text`. Offsets are UTF-16 code units, end exclusive; the result is sorted by
 * start and free of overlaps (higher score wins, then the longer span).
 * Non-ASCII text is scanned as its ASCII shadow (ascii-shadow.ts: other spaces, dashes and digits in
 * their ASCII form, same length), so `589‑31‑6325` or a card grouped with no-break spaces is found, and
 * without its invisible characters (`4111\u200b1111…`), whose offsets are turned back into the text's;
 * findings are always offsets into `text`, where callers mask them. ASCII text is scanned as it is.
 */
export function detectPii(text: string, opts?: DetectPiiOptions): PiiFinding[] {
  if (text.length === 0) return [];
  const types = opts?.types;
  const minScore = opts?.minScore ?? DEFAULT_PII_THRESHOLD;
  let scanned = text;
  let cuts: readonly number[] | null = null;
  if (!isAscii(text)) ({ text: scanned, cuts } = scanForm(text));
  const raw: PiiFinding[] = [];
  const digits = findDigitRuns(scanned); // one pass; most recognizers then look only near these runs
  for (const r of RECOGNIZERS) {
    if (types !== undefined && !types.includes(r.entityType)) continue;
    r.scan(scanned, raw, digits);
  }
  let n = 0;
  for (let i = 0; i < raw.length; i++) {
    const f = raw[i]!;
    if (f.score < minScore) continue;
    if (cuts !== null) {
      // Offsets of the scanned text without its invisible characters: back to the text's, the
      // invisible characters inside the value included.
      const end = textEnd(text, cuts, f.end);
      f.start = textStart(cuts, f.start);
      f.end = end;
    }
    raw[n++] = f;
  }
  raw.length = n;
  return resolveOverlaps(raw);
}
