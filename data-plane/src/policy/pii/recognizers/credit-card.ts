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
// Last (session 25, QA F6): 4-4-4-4 whose separators are spaces, hyphens, tabs, slashes or a line break,
// not all spaces, hyphens or dots ("4111-1111 1111-1111", a card wrapped at a line end
// "4111 1111\n1111 1111", tab- or slash-separated), and not a row of more 4-digit groups (tables: not
// after or before another such group). Spaces and hyphens mixed score as a contiguous number (0.6); with
// a tab, a slash or a line break the number needs a card word (0.3), since tab-, slash- or line-separated
// 4-digit columns pass the issuer and Luhn checks by chance one time in fifty; more than one line break
// is not a card.
const MIXED = "(?:[ \\t/-]|\\r?\\n)";
// It is tried first: otherwise "4111 1111 1111\n1111" would be taken as 4-4-4 and its last group lost.
// When it matches 4-4-4-4 with one separator throughout, the first alternative would have matched the
// same (its look-ahead is looser), and the number scores as grouped.
const CARD_RE = new RegExp(
  `(?<![\\w-])(?<!\\d[ .-])(?:(?<!\\d${MIXED})\\d{4}(${MIXED})\\d{4}${MIXED}\\d{4}${MIXED}\\d{4}(?!${MIXED}\\d{3})` +
    "|\\d{4}([ .-])\\d{4}\\2\\d{4}(?:\\2\\d{4}(?:\\2\\d{3})?)?(?!\\2\\d{3})|\\d{4}([ .-])\\d{6}\\3\\d{4,5}(?!\\3\\d{3})" +
    "|\\d{4}([ .-])\\d{3}\\4\\d{3}\\4\\d{3}(?!\\4\\d{3})|\\d{12,19})(?![\\w-]|\\.\\d)",
  "g",
);
/**
 * Every match has a run of 4 digits and is at most 4-4-4-4-3 with separators long; look-aheads reach 4
 * characters past it, or 5 for the mixed-separator alternative, whose matches are at most 22 long (so
 * within maxLen + MARGIN of their start too).
 */
export const cardDigitScan: DigitScan = { re: CARD_RE, minRun: 4, maxLen: 23 };
/** Also as identifiers: "card_number", "ccNumber", "cc_pan" (context-words.ts). */
const CONTEXT_RE = contextWordsRe([
  "credit", "debit", "card", "cards", "visa", "master card", "amex", "american express", "discover", "jcb", "diners", "maestro", "cc", "ccn", "pan", "unionpay",
]);
const NON_DIGIT_RE = /[^0-9]/g;
const SAME_SEPARATOR_RE = /^\d{4}([ -])\d{4}\1\d{4}\1\d{4}$/;

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
      const mixed = m[1] !== undefined;
      const grouped = mixed || m[2] !== undefined || m[3] !== undefined || m[4] !== undefined;
      if (mixed && raw.indexOf("\n") !== raw.lastIndexOf("\n")) return;
      let digits = grouped ? raw.replace(NON_DIGIT_RE, "") : raw;
      if (!valid(digits) && m[2] !== undefined && digits.length === 19) {
        // 4-4-4-4 and a 3-digit group: a 16-digit card and its CVV ("4111 1111 1111 1111 123").
        raw = raw.slice(0, 19);
        digits = digits.slice(0, 16);
      }
      if (!valid(digits)) return;
      // Grouped card-shaped numbers are strong; a bare digit run passing Luhn is weaker; 12 digits (Maestro
      // only: UPCs and tracking numbers have that length too) need a card word.
      const base =
        digits.length === 12 ? 0.3 : mixed && /[\t\n/]/.test(raw) ? 0.3 : mixed && !SAME_SEPARATOR_RE.test(raw) ? 0.6 : grouped ? 0.9 : 0.6;
      out.push({ entityType: "credit_card", start, end: start + raw.length, score: boostWithContext(text, start, base, CONTEXT_RE) });
    });
  },
};
