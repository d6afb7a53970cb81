// The forms a keyword may be written in, shared by its regex (the exact matcher, offsets included) and
// by the keyword automaton (keyword-automaton.ts: which lists occur at all in an ASCII text, one pass for
// every list).

/**
 * Invisible characters that may sit between a keyword's letters (soft hyphen, zero-width, word joiner,
 * BOM), as the body of a regex character class.
 */
export const INVISIBLES = "\\u00ad\\u200b-\\u200d\\u2060\\ufeff";
/** Letters a keyword's letter also stands for, beyond simple case folding. */
const ALSO: Readonly<Record<string, readonly string[]>> = {
  i: ["İ", "ı", "i\u0307"],
  İ: ["i", "ı"],
  ı: ["i", "İ"],
  ß: ["ss", "ẞ"],
  ẞ: ["ss", "ß"],
};

/**
 * For each character of the keyword (NFC), the strings that stand for it: itself, its decomposed form,
 * its full-width form (ASCII only), the ALSO letters. A text matches the keyword where it holds one form of
 * each character in turn, compared case-insensitively (simple case folding), invisible characters allowed
 * between them.
 */
export function keywordCharForms(word: string): string[][] {
  const out: string[][] = [];
  for (const ch of word.normalize("NFC")) {
    const forms = new Set<string>([ch, ch.normalize("NFD")]);
    const code = ch.codePointAt(0)!;
    if (code > 0x20 && code < 0x7f) forms.add(String.fromCodePoint(code + 0xfee0)); // full-width form
    for (const f of ALSO[ch] ?? ALSO[ch.toLowerCase()] ?? []) forms.add(f);
    out.push([...forms]);
  }
  return out;
}

// Only syntax characters may be escaped in a "u" regex (an escaped "-" is a syntax error there).
export const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/**
 * A keyword as a regex source (for flags `iu`) for the forms a text may write it in without changing
 * what it says: composed or decomposed accents ("café" / "cafe\u0301"), full-width Latin letters and
 * digits ("ｓｅｃｒｅｔ"), invisible characters between its letters ("se\u200bcret"), ß as ss, the dotted
 * and dotless i. A literal match only let any of these through a block keyword. Matched on the text as it
 * is, so the offsets (for redaction) are the text's own.
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
function asciiMatches(ch: string): string[] {
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

/**
 * A regex source for one character: any character of the keyword's forms, compared case-insensitively
 * (with `iu`), or an invisible character. A non-ASCII character of a text that matches it may take part
 * in a keyword match; one that does not (a curly quote, an emoji, most accented letters) cannot.
 */
export function formCharacterClass(words: Iterable<string>): string {
  const chars = new Set<string>();
  for (const word of words) for (const forms of keywordCharForms(word)) for (const form of forms) for (const ch of form) chars.add(ch);
  const body = [...chars].map((ch) => `\\u{${ch.codePointAt(0)!.toString(16)}}`).join("");
  return `[${body}${INVISIBLES}]`;
}
