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
// not replaced. Invisible characters (zero-width space, soft hyphen) inside a value cannot be removed
// here without changing the length: scanForm below deletes them and keeps the map back to the text.

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

// Characters a same-length shadow cannot handle, or that the shadow's 16-range class has no room for
// (session 25, QA F5): `4111\u200b1111\u200b1111\u200b1111`, `536\u200b-22-8726` or `jane\u200b.doe@…`
// (the model reads the value, the recognizers saw two halves), `jane.doe﹫example.com` (U+FE6B, NFKC "@"),
// and digits written as mathematical digits (U+1D7CE–U+1D7FF, two UTF-16 units for one digit) or as
// superscripts/subscripts. scanForm deletes the invisible characters (Unicode's Default_Ignorable_Code_Point
// set, tag characters U+E0000–U+E0FFF included) and the second unit of an astral digit, so the scanned text
// is shorter; `cuts` says where, and textStart/textEnd turn an offset of the scanned text back into one of
// the text, so a finding covers the invisible characters inside the value as well. Non-ASCII text pays
// one more regex pass (below) and two `includes` (8 KB: ~3 µs when mostly ASCII, ~8–15 µs in Cyrillic or
// CJK); without any of these characters it is scanned as its same-length shadow, as before. ASCII text
// never comes here.

/**
 * Runs of the BMP characters scanForm deletes or replaces beyond asciiShadow (a superset is fine: they are
 * then kept), in 14 ranges (see the 16-range limit above). Mathematical digits and tag characters are two
 * units whose first, U+D835 / U+DB40, other astral characters do not share: a text holding either (rare,
 * `includes` costs ~0.2 µs on 8 KB) is scanned by a loop instead.
 */
const SCAN_FORM_RANGES: readonly (readonly [number, number])[] = [
  [0xad, 0xad], [0xb2, 0xb3], [0xb9, 0xb9], [0x34f, 0x34f], [0x61c, 0x61c], [0x115f, 0x1160], [0x180b, 0x180f],
  [0x200b, 0x200f], [0x202a, 0x202e], [0x2060, 0x2089], [0x3164, 0x3164], [0xfe00, 0xfe0f], [0xfe6b, 0xfe6b], [0xfeff, 0xfeff],
];
const SCAN_FORM_RE = new RegExp(`[${SCAN_FORM_RANGES.map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`)).join("")}]+`, "g");
const KEEP = 0;
const DELETE = 1;
const HIGH_SURROGATE = 2;
/** What scanForm does with a UTF-16 unit: KEEP, DELETE, HIGH_SURROGATE (look at the pair), or the ASCII code it becomes. */
const ACTION = new Uint8Array(0x10000);
for (const c of [0xad, 0x34f, 0x61c, 0x115f, 0x1160, 0x3164, 0xfeff]) ACTION[c] = DELETE;
for (const [from, to] of [[0x180b, 0x180f], [0x200b, 0x200f], [0x202a, 0x202e], [0x2060, 0x206f], [0xfe00, 0xfe0f]] as const) {
  for (let c = from; c <= to; c++) ACTION[c] = DELETE;
}
ACTION[0xb2] = 50; // ²
ACTION[0xb3] = 51; // ³
ACTION[0xb9] = 49; // ¹
ACTION[0x2070] = 48; // ⁰
for (let d = 4; d <= 9; d++) ACTION[0x2070 + d] = 48 + d; // ⁴–⁹
for (let d = 0; d <= 9; d++) ACTION[0x2080 + d] = 48 + d; // ₀–₉
ACTION[0xfe6b] = 64; // ﹫ → "@"
ACTION[0xd835] = HIGH_SURROGATE; // mathematical digits U+1D7CE–U+1D7FF
ACTION[0xdb40] = HIGH_SURROGATE; // tag characters and variation selectors U+E0000–U+E03FF: all ignorable

/** The text a recognizer scans, and where it lost UTF-16 units of the text (null: none, offsets are the text's). */
export interface ScanForm {
  readonly text: string;
  /**
   * Ascending offsets into `text` (the scanned one) before which one unit of the original was deleted,
   * one entry per deleted unit; null when none was.
   */
  readonly cuts: readonly number[] | null;
}

/**
 * The form of a non-ASCII text that detectPii scans: its ASCII shadow, then without invisible characters
 * and with superscript, subscript and mathematical digits and U+FE6B as ASCII. `cuts` null: the same
 * length as `text`.
 */
export function scanForm(text: string): ScanForm {
  const shadow = asciiShadow(text);
  if (shadow.includes("\ud835") || shadow.includes("\udb40")) return scanFormByUnits(shadow);
  const cuts: number[] = [];
  let removed = 0;
  SCAN_FORM_RE.lastIndex = 0;
  const scanned = shadow.replace(SCAN_FORM_RE, (run: string, offset: number) => {
    let out = "";
    for (let i = 0; i < run.length; i++) {
      const a = ACTION[run.charCodeAt(i)]!;
      if (a === KEEP) out += run[i];
      else if (a === DELETE) {
        cuts.push(offset - removed + out.length);
        removed++;
      } else out += String.fromCharCode(a);
    }
    return out;
  });
  return { text: scanned, cuts: cuts.length > 0 ? cuts : null };
}

/** scanForm of a text that holds U+D835 or U+DB40: one unit at a time. */
function scanFormByUnits(shadow: string): ScanForm {
  const n = shadow.length;
  const parts: string[] = [];
  const cuts: number[] = [];
  let from = 0; // start of the unchanged stretch not yet in parts
  let length = 0; // length of parts joined
  for (let i = 0; i < n; i++) {
    const c = shadow.charCodeAt(i);
    if (c < 0x80) continue;
    const a = ACTION[c]!;
    if (a === KEEP) continue;
    if (a === HIGH_SURROGATE) {
      const lo = shadow.charCodeAt(i + 1);
      if (!(lo >= 0xdc00 && lo <= 0xdfff)) continue; // NaN at the end of the text
      if (c === 0xdb40) {
        parts.push(shadow.slice(from, i));
        length += i - from;
        cuts.push(length, length);
      } else {
        const cp = 0x1d400 + lo - 0xdc00; // 0xd835 covers U+1D400–U+1D7FF
        if (cp < 0x1d7ce) continue;
        parts.push(shadow.slice(from, i), String.fromCharCode(48 + ((cp - 0x1d7ce) % 10)));
        length += i - from + 1;
        cuts.push(length);
      }
      from = i + 2;
      i++;
      continue;
    }
    parts.push(shadow.slice(from, i));
    length += i - from;
    if (a === DELETE) cuts.push(length);
    else {
      parts.push(String.fromCharCode(a));
      length++;
    }
    from = i + 1;
  }
  if (from === 0) return { text: shadow, cuts: null };
  parts.push(shadow.slice(from));
  return { text: parts.join(""), cuts: cuts.length > 0 ? cuts : null };
}

/** The offset in the original text of the scanned text's character at `k` (cuts from scanForm). */
export function textStart(cuts: readonly number[], k: number): number {
  // k + the number of cuts ≤ k (units deleted before that character).
  let lo = 0;
  let hi = cuts.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cuts[mid]! <= k) lo = mid + 1;
    else hi = mid;
  }
  return k + lo;
}

/** The offset in `text` (the original) just after the scanned text's character at `end - 1`. */
export function textEnd(text: string, cuts: readonly number[], end: number): number {
  const last = textStart(cuts, end - 1);
  const c = text.charCodeAt(last);
  return c >= 0xd800 && c <= 0xdbff ? last + 2 : last + 1; // a mathematical digit is two units
}
