// Where the text of a stream may still be growing into a value. A quote (a citation, a grounding
// segment, an annotation) can force the release of held text before its window has passed; that
// release must not let out the first part of a value whose rest has not arrived ("jo.smith@exa" before
// "mple.com"), which no detector recognises yet. So a forced release stops before the trailing run of
// characters that can belong to a value: letters, digits and the punctuation of addresses, URLs and
// keys, across short separators between groups of digits ("536 22 87", "+1 (555) 123-45", "DE89 3704").
// Hand-written: no library decides this, and it runs only when a quote forces a release.

/** Letters, digits and the punctuation values are written with (e-mail, URL, key, IBAN, phone). */
const VALUE_CHAR = /[\p{L}\p{N}._%+\-@:/#=&?~'*$!]/u;
/** Separators between groups of a value (card, phone, SSN, IBAN), at most this long. */
const SEPARATOR = /[ ()./-]/;
const MAX_SEPARATOR = 2;
const DIGIT = /\p{N}/u;

/**
 * The start of the run at the end of `text` that may still grow into a value (text.length when the
 * text ends with no such run), never below `floor`.
 */
export function growingTailStart(text: string, floor: number): number {
  let i = text.length;
  while (i > floor) {
    const c = text[i - 1]!;
    if (VALUE_CHAR.test(c)) {
      i--;
      continue;
    }
    // A short separator continues the run when it joins two groups of digits.
    let j = i;
    while (j > floor && i - j < MAX_SEPARATOR && SEPARATOR.test(text[j - 1]!)) j--;
    if (j === i || j === floor) break;
    const before = text[j - 1]!;
    const after = text[i];
    // At the very end, a separator after a digit may be followed by the next group ("536 22 " + "8726").
    const joins = DIGIT.test(before) && (after === undefined || DIGIT.test(after));
    if (!joins) break;
    i = j;
  }
  return Math.max(i, floor);
}
