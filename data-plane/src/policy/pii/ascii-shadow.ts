// The ASCII shadow of a non-ASCII text: the same text with the characters a number can be written with
// in Unicode (other spaces, other dashes, other digits) replaced by their ASCII form, one UTF-16 unit for
// one, so that every offset into the shadow is the same offset into the text. detectPii scans the shadow
// and reports (and callers mask) those offsets in the text itself: `SSN: 589‑31‑6325` (U+2011), a card
// grouped with no-break spaces or a full-width `５８９-３１-６３２５` were a one-character bypass of every
// numeric recognizer. ASCII text has nothing to replace and is never passed here.
//
// Replaced (only characters that are one UTF-16 unit, so the length never changes):
// - space separators (Zs) U+00A0, U+2000–U+200A, U+202F, U+205F, U+3000 → " " (U+1680, the Ogham
//   space mark, is left out, see below);
// - hyphens and dashes U+2010–U+2015, minus U+2212, small hyphen-minus U+FE63 → "-";
// - full-width ASCII U+FF01–U+FF5E → its ASCII character (digits, "-", "+", "(", ")", ".", ":", "/",
//   letters): the forms the keyword matcher also accepts for a keyword's characters (engine/regex-cache.ts,
//   session 15);
// - the decimal digits of the scripts that still write numbers with their own digits: Arabic-Indic,
//   Persian/Urdu, Devanagari, Bengali, Thai, Myanmar, Khmer → "0"–"9".
// The character class stays at 16 ranges: V8 compiles a class of up to 16 ranges to inline comparisons,
// and one more range made this pass 4–5× slower on 8 KB (3.5 → 17 µs on mostly-ASCII text, 9 → 45 µs on
// Cyrillic), so the other Nd blocks (Tamil, Gujarati, Lao…, written with ASCII digits in practice) are
// not replaced. Invisible characters (zero-width space, soft hyphen) inside a number are not handled
// either: removing them would change the length.

/** First code point ("zero") of each block of ten decimal digits (Nd) that the shadow replaces. */
export const SHADOWED_DIGIT_ZEROS: readonly number[] = [0x0660, 0x06f0, 0x0966, 0x09e6, 0x0e50, 0x1040, 0x17e0];

const hex = (c: number): string => "\\u" + c.toString(16).padStart(4, "0");
const SPACES = "\\u00a0\\u2000-\\u200a\\u202f\\u205f\\u3000";
const DASHES = "\\u2010-\\u2015\\u2212\\ufe63";
const FULL_WIDTH = "\\uff01-\\uff5e"; // full-width digits U+FF10–FF19 included
const DIGITS = SHADOWED_DIGIT_ZEROS.map((z) => `${hex(z)}-${hex(z + 9)}`).join("");
/** Runs of the characters the shadow replaces (a run per callback: "２０２４" is one), in 16 ranges (see above). */
const SHADOWED_RE = new RegExp(`[${SPACES}${DASHES}${FULL_WIDTH}${DIGITS}]+`, "g");

function asciiCode(c: number): number {
  if (c >= 0xff01) return c - 0xfee0;
  if ((c >= 0x2010 && c <= 0x2015) || c === 0x2212 || c === 0xfe63) return 45; // "-"
  for (const zero of SHADOWED_DIGIT_ZEROS) {
    if (c >= zero && c <= zero + 9) return 48 + c - zero;
  }
  return 32; // a space separator: nothing else is in SHADOWED_RE
}

function asciiForm(run: string): string {
  if (run.length === 1) return String.fromCharCode(asciiCode(run.charCodeAt(0)));
  let out = "";
  for (let i = 0; i < run.length; i++) out += String.fromCharCode(asciiCode(run.charCodeAt(i)));
  return out;
}

/**
 * `text` with other spaces, dashes and digits in their ASCII form, of the same length (offsets stay
 * valid); `text` itself when it has none. One regex pass: call it only on non-ASCII text.
 */
export function asciiShadow(text: string): string {
  SHADOWED_RE.lastIndex = 0;
  return text.replace(SHADOWED_RE, asciiForm);
}
