// The forms a keyword may be written in, shared by its regex (the exact matcher, offsets included) and
// by the keyword automaton (keyword-automaton.ts: which lists occur at all in an ASCII text, one pass for
// every list).

/**
 * Invisible characters that may sit between a keyword's letters, as the body of a regex character class
 * (flag `u`): Unicode's Default_Ignorable_Code_Point set. Soft hyphen, zero-width space / (non-)joiner,
 * word joiner and the invisible operators U+2060–U+2064, BOM, LRM/RLM, bidi embeddings, overrides and
 * isolates (U+202A–U+202E, U+2066–U+2069), variation selectors (U+FE00–U+FE0F, U+E0100–U+E01EF),
 * U+034F, U+061C, U+180B–U+180F, the Hangul fillers U+115F, U+1160, U+3164, U+FFA0, and the tag block
 * U+E0000–U+E0FFF: a superset of what the injection scorer removes (injection/normalize.ts). The tag
 * characters of printable ASCII (U+E0020–U+E007E) are read as that ASCII (foldLookAlikes), so only the
 * others are invisible where the regex runs. Before session 25 only soft hyphen, U+200B–U+200D, U+2060
 * and BOM were, and `zorb\u2063laxquux` passed a block keyword (QA F7).
 */
export const INVISIBLES =
  "\\u00ad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u206f\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\u{e0000}-\\u{e0fff}";
/** Whether a code point is one of INVISIBLES. */
export function isInvisible(cp: number): boolean {
  if (cp < 0x2000) return cp === 0xad || cp === 0x34f || cp === 0x61c || cp === 0x115f || cp === 0x1160 || cp === 0x17b4 || cp === 0x17b5 || (cp >= 0x180b && cp <= 0x180f);
  if (cp < 0x3000) return (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x206f);
  return cp === 0x3164 || (cp >= 0xfe00 && cp <= 0xfe0f) || cp === 0xfeff || cp === 0xffa0 || (cp >= 0xe0000 && cp <= 0xe0fff);
}
/** Letters a keyword's letter also stands for, beyond simple case folding. */
const ALSO: Readonly<Record<string, readonly string[]>> = {
  i: ["İ", "ı", "i\u0307"],
  İ: ["i", "ı"],
  ı: ["i", "İ"],
  ß: ["ss", "ẞ"],
  ẞ: ["ss", "ß"],
};

/**
 * For each character of the keyword (NFC, look-alike characters folded), the strings that stand for it:
 * itself, its decomposed form, its full-width form (ASCII only), the ALSO letters. A text matches the keyword where it holds one form of
 * each character in turn, compared case-insensitively (simple case folding), invisible characters allowed
 * between them.
 */
export function keywordCharForms(word: string): string[][] {
  const out: string[][] = [];
  for (const ch of keywordLetters(word)) {
    const forms = new Set<string>([ch, ch.normalize("NFD")]);
    const code = ch.codePointAt(0)!;
    if (code > 0x20 && code < 0x7f) forms.add(String.fromCodePoint(code + 0xfee0)); // full-width form
    for (const f of ALSO[ch] ?? ALSO[ch.toLowerCase()] ?? []) forms.add(f);
    out.push([...forms]);
  }
  return out;
}

// Look-alike characters (session 25, QA F7): characters whose NFKC form is one ASCII letter or digit
// (mathematical bold, italic, script, fraktur, double-struck, sans-serif and monospace letters and digits,
// circled letters and digits, superscripts and subscripts, modifier letters, letter-like symbols, Roman
// numerals, ª º), and the Unicode tag characters U+E0020–U+E007E ("ASCII smuggling": models read them,
// humans do not see them). A keyword is matched on the text with these folded to their ASCII character
// (foldLookAlikes), not by adding them to its regex: as regex alternatives (about 35 per letter, most of
// them two UTF-16 units) they made a list's regex ~25× slower on a short window and ~5× on 8 KB. The
// fold keeps the length: a character of two units becomes its ASCII character and U+200B, an invisible
// character, which a keyword's regex skips between letters; a match that ends inside such a pair is
// widened to the pair (widenToCodePoint). Full-width forms, K (U+212A) and ſ are left to the regex, which
// already matches them. Cyrillic and Greek look-alikes are not folded: they spell another word, and
// Cyrillic or Greek text would match Latin keywords ("сор", "рис").

/**
 * The fold as ranges of UTF-16 units to look at: every BMP look-alike, and the first units of the
 * mathematical alphanumerics (U+D835) and of the tag characters (U+DB40). Squared letters
 * (U+1F130…, first unit U+D83C, shared with most emoji), outlined and segmented digits are not folded.
 * 12 ranges: the regex pass stays fast (see pii/ascii-shadow.ts on V8's 16-range classes).
 */
const FOLD_RANGES: readonly (readonly [number, number])[] = [
  [0xaa, 0xaa], [0xb2, 0xb3], [0xb9, 0xba], [0x2b0, 0x2e4], [0x1d2c, 0x1dbf], [0x2070, 0x209c], [0x2102, 0x217f],
  [0x2460, 0x24ea], [0x2c7c, 0x2c7d], [0xa7f1, 0xa7f4], [0xd835, 0xd835], [0xdb40, 0xdb40],
];
const hex4 = (c: number): string => "\\u" + c.toString(16).padStart(4, "0");
const FOLD_GATE = new RegExp(`[${FOLD_RANGES.map(([a, b]) => (a === b ? hex4(a) : `${hex4(a)}-${hex4(b)}`)).join("")}]`);
/** ASCII code a BMP unit folds to (0: none); for U+D835 and U+DB40, by the second unit's offset from U+DC00. */
const FOLD_BMP = new Uint8Array(0x10000);
const FOLD_MATH = new Uint8Array(0x400);
const FOLD_TAG = new Uint8Array(0x400);
/** The characters that fold to each ASCII character (lower case), for lookAlikeChars. */
const FOLDED_FROM = new Map<string, string[]>();
function addFold(cp: number, ascii: string): void {
  if (cp < 0x10000) FOLD_BMP[cp] = ascii.charCodeAt(0);
  else if (cp >= 0x1d400 && cp < 0x1d800) FOLD_MATH[cp - 0x1d400] = ascii.charCodeAt(0);
  else FOLD_TAG[cp - 0xe0000] = ascii.charCodeAt(0);
  const key = ascii.toLowerCase();
  let list = FOLDED_FROM.get(key);
  if (list === undefined) FOLDED_FROM.set(key, (list = []));
  list.push(String.fromCodePoint(cp));
}
for (const [from, to] of [...FOLD_RANGES.slice(0, -2), [0x1d400, 0x1d7ff]]) {
  for (let cp = from; cp <= to; cp++) {
    const k = String.fromCodePoint(cp).normalize("NFKC");
    if (k.length === 1 && /[0-9A-Za-z]/.test(k)) addFold(cp, k);
  }
}
for (let c = 0x20; c < 0x7f; c++) addFold(0xe0000 + c, String.fromCharCode(c));

/**
 * `text` with its look-alike characters as ASCII (see above), the same length; `text` itself when it has
 * none. One regex pass (~1 µs per KB of non-ASCII text) when it has none.
 */
export function foldLookAlikes(text: string): string {
  const first = text.search(FOLD_GATE);
  if (first < 0) return text;
  const parts: string[] = [];
  let from = 0;
  const n = text.length;
  for (let i = first; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    let ascii = FOLD_BMP[c]!;
    if (ascii !== 0) {
      parts.push(text.slice(from, i), String.fromCharCode(ascii));
      from = i + 1;
      continue;
    }
    if (c !== 0xd835 && c !== 0xdb40) continue;
    const lo = text.charCodeAt(i + 1) - 0xdc00;
    if (!(lo >= 0 && lo < 0x400)) continue; // NaN at the end
    ascii = c === 0xd835 ? FOLD_MATH[lo]! : FOLD_TAG[lo]!;
    if (ascii === 0) continue;
    parts.push(text.slice(from, i), String.fromCharCode(ascii), "\u200b");
    from = i + 2;
    i++;
  }
  if (from === 0) return text;
  parts.push(text.slice(from));
  return parts.join("");
}

/** A match's end in the text as it is: past the second unit of a look-alike folded to two characters. */
export function widenToCodePoint(text: string, end: number): number {
  return end < text.length && (text.charCodeAt(end) & 0xfc00) === 0xdc00 && (text.charCodeAt(end - 1) & 0xfc00) === 0xd800 ? end + 1 : end;
}

/** A keyword with its look-alike characters folded (an astral one to its ASCII character alone). */
function foldWord(word: string): string {
  if (foldLookAlikes(word) === word) return word;
  return [...word].map((ch) => (foldLookAlikes(ch) === ch ? ch : foldLookAlikes(ch)[0]!)).join("");
}

/** The characters of a keyword as its regex matches them: NFC, look-alike characters folded. */
export function keywordLetters(word: string): string[] {
  return [...foldWord(word.normalize("NFC"))];
}

/**
 * The characters that fold to the ASCII character `ch` (either case; see foldLookAlikes): what a text
 * may write that keyword character with beyond keywordCharForms. None for other characters.
 */
export function lookAlikeChars(ch: string): readonly string[] {
  const code = ch.length === 1 ? ch.charCodeAt(0) : 0;
  if (code < 0x20 || code >= 0x7f) return [];
  return FOLDED_FROM.get(ch.toLowerCase()) ?? [];
}

const classChar = (c: string): string => `\\u{${c.codePointAt(0)!.toString(16)}}`;

// Only syntax characters may be escaped in a "u" regex (an escaped "-" is a syntax error there).
export const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/**
 * A keyword as a regex source (for flags `iu`) for the forms a text may write it in without changing
 * what it says: composed or decomposed accents ("café" / "cafe\u0301"), full-width Latin letters and
 * digits ("ｓｅｃｒｅｔ"), invisible characters between its letters ("se\u200bcret"), ß as ss, the dotted
 * and dotless i. A literal match only let any of these through a block keyword. Matched on the text with
 * its look-alike characters folded (foldLookAlikes: mathematical, circled or tag letters…), which keeps
 * the length, so the offsets (for redaction) are the text's own.
 */
export function keywordSource(word: string): string {
  return keywordCharForms(word)
    .map((forms) => {
      const alts = forms.map(escapeRegex);
      return alts.length === 1 ? alts[0]! : `(?:${alts.join("|")})`;
    })
    .join(`[${INVISIBLES}]*`);
}

/** The ASCII characters (lower case) that match `ch` under the `iu` flags, e.g. "k" for K (U+212A). */
const asciiMatchesOf = new Map<string, string[]>();
export function asciiMatches(ch: string): string[] {
  let out = asciiMatchesOf.get(ch);
  if (out === undefined) {
    const re = new RegExp(`^${escapeRegex(ch)}$`, "iu");
    const found = new Set<string>();
    for (let c = 0; c < 0x80; c++) {
      const a = String.fromCharCode(c);
      if (re.test(a)) found.add(a.toLowerCase());
    }
    out = [...found];
    asciiMatchesOf.set(ch, out);
  }
  return out;
}

/**
 * Every ASCII string (lower case) the keyword's regex matches in an ASCII text, or undefined when there
 * are more than `cap` of them. Invisible characters are not ASCII, so in an ASCII text a match is one
 * ASCII spelling of each character's forms in turn; a form with a character that matches no ASCII
 * character (a combining accent, a full-width letter) spells nothing. An empty list: the keyword cannot
 * occur in an ASCII text ("café").
 */
export function asciiSpellings(word: string, cap: number): string[] | undefined {
  let spellings = [""];
  for (const forms of keywordCharForms(word)) {
    const next = new Set<string>();
    for (const form of forms) {
      let parts = [""];
      for (const ch of form) {
        const options = asciiMatches(ch);
        parts = parts.flatMap((p) => options.map((o) => p + o));
        if (parts.length === 0) break;
      }
      for (const prefix of spellings) for (const p of parts) next.add(prefix + p);
      if (next.size > cap) return undefined;
    }
    spellings = [...next];
    if (spellings.length === 0) return [];
  }
  return spellings;
}

/** Every character of the words' forms and look-alike characters (keywordCharForms, lookAlikeChars). */
export function formCharacters(words: Iterable<string>): Set<string> {
  const chars = new Set<string>();
  for (const word of words) {
    const letters = keywordLetters(word);
    keywordCharForms(word).forEach((forms, i) => {
      for (const form of forms) for (const ch of form) chars.add(ch);
      for (const ch of lookAlikeChars(letters[i]!)) chars.add(ch);
    });
  }
  return chars;
}

/**
 * A regex source for one character: any character of the keywords' forms and look-alike characters,
 * compared case-insensitively (with `iu`). A non-ASCII character of a text that matches it may take part
 * in a keyword match; one that does not (a curly quote, an emoji, most accented letters) cannot, except
 * an invisible character (INVISIBLES) between two that can.
 */
export function formCharacterClass(words: Iterable<string>): string {
  return `[${[...formCharacters(words)].map(classChar).join("")}]`;
}
