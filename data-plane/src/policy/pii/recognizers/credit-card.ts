// Payment card numbers: grouped or contiguous 13–19 digits, issuer prefix check, then Luhn.

import { boostWithContext } from "../context.js";
import { contextWordsRe } from "../context-words.js";
import { scanNearDigitRuns, type DigitRuns, type DigitScan } from "../digit-runs.js";
import { luhnValid } from "../luhn.js";
import type { PiiFinding, Recognizer } from "../types.js";

// Grouped 4-4-4-4(-3), grouped 4-6-4/5 (Amex, Diners), or contiguous 12–19 digits; groups separated by
// spaces, hyphens or dots ("4111.1111.1111.1111"), the same separator throughout.
// The look-behinds keep us from starting inside a longer digit run ("1234 4111 …"). After the number,
// only a group that continues its grouping cancels it (the same separator and 3 or more digits: a longer
// number, "4111 1111 1111 1111 2222"), or a decimal part (".5"): the expiry and CVV that follow a card
// ("4111 1111 1111 1111 12/27 123", "4111111111111111 0527 123") do not.
// Also 4-4-4 (12-digit Maestro) and 4-3-3-3 (13-digit Visa).
const CARD_RE =
  /(?<![\w-])(?<!\d[ .-])(?:\d{4}([ .-])\d{4}\1\d{4}(?:\1\d{4}(?:\1\d{3})?)?(?!\1\d{3})|\d{4}([ .-])\d{6}\2\d{4,5}(?!\2\d{3})|\d{4}([ .-])\d{3}\3\d{3}\3\d{3}(?!\3\d{3})|\d{12,19})(?![\w-]|\.\d)/g;
/** Every match has a run of 4 digits and is at most 4-4-4-4-3 with separators long; look-aheads reach 4 characters past it. */
export const cardDigitScan: DigitScan = { re: CARD_RE, minRun: 4, maxLen: 23 };
/** Also as identifiers: "card_number", "ccNumber", "cc_pan" (context-words.ts). */
const CONTEXT_RE = contextWordsRe([
  "credit", "debit", "card", "cards", "visa", "master card", "amex", "american express", "discover", "jcb", "diners", "maestro", "cc", "ccn", "pan", "unionpay",
]);
const NON_DIGIT_RE = /[ .-]/g;

/** Issuer identification: the leading digits and length must belong to a real card scheme. */
export function plausibleIssuer(d: string): boolean {
  const len = d.length;
  const c0 = d.charCodeAt(0) - 48;
  const two = c0 * 10 + (d.charCodeAt(1) - 48);
  const four = Number(d.slice(0, 4));
  switch (c0) {
    case 4: // Visa
      return len === 13 || len === 16 || len === 19;
    case 5: // Mastercard 51–55; Maestro 50, 56–59
      return two >= 51 && two <= 55 ? len === 16 : len >= 12 && len <= 19;
    case 2: // Mastercard 2221–2720
      return four >= 2221 && four <= 2720 && len === 16;
    case 3:
      if (two === 34 || two === 37) return len === 15; // Amex
      if (two === 36 || two === 38 || two === 39 || (four >= 3000 && four <= 3059)) return len >= 14 && len <= 19; // Diners
      if (four >= 3528 && four <= 3589) return len >= 16 && len <= 19; // JCB
      return false;
    case 6: // Discover, UnionPay; Maestro 6304, 6759, 6761–6763 also from 12 digits
      return (len >= 16 && len <= 19) || (len >= 12 && (four === 6304 || four === 6759 || (four >= 6761 && four <= 6763)));
    default:
      return false;
  }
}

function valid(digits: string): boolean {
  return plausibleIssuer(digits) && luhnValid(digits) && !/^(\d)\1+$/.test(digits);
}

export const creditCardRecognizer: Recognizer = {
  entityType: "credit_card",
  scan(text: string, out: PiiFinding[], runs: DigitRuns | null): void {
    scanNearDigitRuns(text, cardDigitScan, runs, (m, start) => {
      let raw = m[0];
      const grouped = m[1] !== undefined || m[2] !== undefined || m[3] !== undefined;
      let digits = grouped ? raw.replace(NON_DIGIT_RE, "") : raw;
      if (!valid(digits) && m[1] !== undefined && digits.length === 19) {
        // 4-4-4-4 and a 3-digit group: a 16-digit card and its CVV ("4111 1111 1111 1111 123").
        raw = raw.slice(0, 19);
        digits = digits.slice(0, 16);
      }
      if (!valid(digits)) return;
      // Grouped card-shaped numbers are strong; a bare digit run passing Luhn is weaker; 12 digits (Maestro
      // only: UPCs and tracking numbers have that length too) need a card word.
      const base = digits.length === 12 ? 0.3 : grouped ? 0.9 : 0.6;
      out.push({ entityType: "credit_card", start, end: start + raw.length, score: boostWithContext(text, start, base, CONTEXT_RE) });
    });
  },
};
