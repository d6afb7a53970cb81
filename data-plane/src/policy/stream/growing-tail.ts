// Where the text of a stream may still be growing into a value. A quote (a citation, a grounding
// segment, an annotation) can force the release of held text before its window has passed; that
// release must not let out the first part of a value whose rest has not arrived ("jo.smith@exa" before
// "mple.com"), which no detector recognises yet. So a forced release stops before the trailing run of
// characters that can belong to a value: letters, digits and the punctuation of addresses, URLs and
// keys, across short separators between groups of a value ("536 22 87", "+1 (555) 123-45", "GB82 WEST 12",
// "March 3, 19").
// A date written with a month name can also end on a word and a space ("3 March " + "1990", "March " +
// "3, 1990", "14th of " + "March 1985"): such a tail is held from its first part.
// Hand-written: no library decides this, and it runs only when a quote forces a release.
import { MONTHS } from "../pii/recognizers/date-of-birth.js";

/** Letters, digits and the punctuation values are written with (e-mail, URL, key, IBAN, phone). */
const VALUE_CHAR = /[\p{L}\p{N}._%+\-@:/#=&?~'*$!]/u;
/** Separators between groups of a value (card, phone, SSN, IBAN), at most this long. */
const SEPARATOR = /[ ()./,-]/;
const MAX_SEPARATOR = 2;
const DIGIT = /\p{N}/u;
const ALNUM = /[\p{L}\p{N}]/u;
const UPPER = /\p{Lu}/u;

const DAY = "\\d{1,2}(?:st|nd|rd|th)?";
/**
 * The start of a date with a month name that the end of the text may be the first part of: a day and
 * "of", a month (after its day, or before the day to come), a month and its day ("March 3, "). The
 * dates of birth detector's forms (pii/recognizers/date-of-birth.ts), cut short.
 */
const DATE_PREFIX_AT_END = new RegExp(
  `(?<![\\p{L}\\p{N}])(?:(?:${DAY},? (?:of )?)?(?:${MONTHS})\\.?,? ?|${DAY} (?:of ?)?|(?:${MONTHS})\\.? ${DAY},? ?)$`,
  "iu",
);
/** Longest such prefix ("14th of September, "), plus room: only the end of the text is searched. */
const DATE_PREFIX_WINDOW = 32;

/** Where a date prefix at the end of `text` starts, or text.length. */
function datePrefixStart(text: string): number {
  const from = Math.max(0, text.length - DATE_PREFIX_WINDOW);
  const m = DATE_PREFIX_AT_END.exec(from === 0 ? text : text.slice(from));
  return m === null ? text.length : from + m.index;
}

/**
 * The start of the run at the end of `text` that may still grow into a value (text.length when the
 * text ends with no such run), never below `floor`. Reads `text` from `floor` on and its last
 * DATE_PREFIX_WINDOW characters only: the governor passes the end of a long text.
 */
export function growingTailStart(text: string, floor: number): number {
  let i = datePrefixStart(text);
  while (i > floor) {
    const c = text[i - 1]!;
    if (VALUE_CHAR.test(c)) {
      i--;
      continue;
    }
    // A short separator continues the run when it joins two groups of a value, one of them with a digit
    // at the join ("536 22 87", "GB82 WEST 1234", "March 3, 1990", "3 March"), or ends the text after a
    // digit or a capital, unless it closes a sentence or a link (the next group may follow: "536 22 " +
    // "8726", "GB82 WEST " + "1234"; a word and a space, "jo@example.com ", is complete).
    let j = i;
    while (j > floor && i - j < MAX_SEPARATOR && SEPARATOR.test(text[j - 1]!)) j--;
    if (j === i || j === floor) break;
    const before = text[j - 1]!;
    const after = text[i];
    const run = text.slice(j, i);
    const joins =
      ALNUM.test(before) &&
      (after === undefined
        ? (DIGIT.test(before) || UPPER.test(before)) && !run.includes(".") && (!run.includes(")") || DIGIT.test(before)) // a group ended, not a word, a sentence or a link
        : ALNUM.test(after) && (DIGIT.test(before) || DIGIT.test(after)));
    if (!joins) {
      if (text[i - 1] === "(" && after !== undefined && DIGIT.test(after)) i--; // a phone's "(415"
      break;
    }
    i = j;
  }
  return Math.max(i, floor);
}
