// Policy regexes and keyword lists, compiled once, both matched case-insensitively.
// Policy regexes run on RE2 (re2js: linear time in the text for every pattern), because V8's
// backtracking engine is quadratic or worse on failed searches even for "safe" patterns, and prompts
// may be megabytes long. Keyword lists are literal alternations, which V8 matches in linear time.
import { RE2JS } from "re2js";

/** A compiled pattern: whether it occurs, and every non-empty match as [start, end) UTF-16 offsets. */
export interface TextPattern {
  test(text: string): boolean;
  matches(text: string): [number, number][];
}

const regexes = new Map<string, TextPattern | null>();
const keywordLists = new Map<string, TextPattern | null>();
const MAX_ENTRIES = 10_000;

// `test` asks for no positions, so re2js answers on its lazy DFA (falling back to the NFA when the DFA
// runs out of memory); a Matcher asks for positions and always runs the NFA, whose cost per character
// grows with the states alive at once (`[^\n]{1000}%` on 100 KB of base64: 1.9 s by Matcher, 5 ms by
// `test`). So `matches` only runs the Matcher when there is a match to locate.
function re2Pattern(re: RE2JS): TextPattern {
  return {
    test: (text) => re.test(text),
    matches(text) {
      if (!re.test(text)) return [];
      const out: [number, number][] = [];
      const m = re.matcher(text);
      while (m.find()) {
        const start = m.start();
        const end = m.end();
        if (end > start) out.push([start, end]);
      }
      return out;
    },
  };
}

function nativePattern(re: RegExp): TextPattern {
  return {
    test(text) {
      re.lastIndex = 0;
      const hit = re.test(text);
      re.lastIndex = 0;
      return hit;
    },
    matches(text) {
      const out: [number, number][] = [];
      re.lastIndex = 0;
      for (let m = re.exec(text); m; m = re.exec(text)) {
        if (m[0].length === 0) {
          re.lastIndex++;
          continue;
        }
        out.push([m.index, m.index + m[0].length]);
      }
      re.lastIndex = 0;
      return out;
    },
  };
}

export function compiledRegex(pattern: string): TextPattern | null {
  let re = regexes.get(pattern);
  if (re === undefined) {
    try {
      re = re2Pattern(RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE));
    } catch {
      re = null;
    }
    if (regexes.size > MAX_ENTRIES) regexes.clear();
    regexes.set(pattern, re);
  }
  return re;
}

// Only syntax characters may be escaped in a "u" regex (an escaped "-" is a syntax error there).
const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/** Cache key of a keyword list (also used to remember which lists were seen in a stream). */
export const keywordListKey = (keywords: readonly string[]): string => keywords.join("\u0000");

/** Invisible characters that may sit between a keyword's letters (soft hyphen, zero-width, word joiner, BOM). */
const INVISIBLES = "[\\u00ad\\u200b-\\u200d\\u2060\\ufeff]*";
/** Letters a keyword's letter also stands for, beyond simple case folding. */
const ALSO: Readonly<Record<string, readonly string[]>> = {
  i: ["İ", "ı", "i\u0307"],
  İ: ["i", "ı"],
  ı: ["i", "İ"],
  ß: ["ss", "ẞ"],
  ẞ: ["ss", "ß"],
};

/**
 * A keyword as a pattern for the forms a text may write it in without changing what it says: composed
 * or decomposed accents ("café" / "cafe\u0301"), full-width Latin letters and digits ("ｓｅｃｒｅｔ"),
 * invisible characters between its letters ("se\u200bcret"), ß as ss, the dotted and dotless i. A
 * literal match only let any of these through a block keyword. Matched on the text as it is, so the
 * offsets (for redaction) are the text's own.
 */
function keywordSource(word: string): string {
  const parts: string[] = [];
  for (const ch of word.normalize("NFC")) {
    const forms = new Set<string>([ch, ch.normalize("NFD")]);
    const code = ch.codePointAt(0)!;
    if (code > 0x20 && code < 0x7f) forms.add(String.fromCodePoint(code + 0xfee0)); // full-width form
    for (const f of ALSO[ch] ?? ALSO[ch.toLowerCase()] ?? []) forms.add(f);
    const alts = [...forms].map(escape);
    parts.push(alts.length === 1 ? alts[0]! : `(?:${alts.join("|")})`);
  }
  return parts.join(INVISIBLES);
}

/**
 * One case-insensitive alternation of the keywords (keywordSource), longest first so that the longest
 * keyword at a position wins. Matching with a regex rather than `toLowerCase().indexOf` keeps offsets
 * exact for characters whose lower-case form has another length (e.g. "İ").
 */
export function keywordRegex(keywords: readonly string[]): TextPattern | null {
  const key = keywordListKey(keywords);
  let re = keywordLists.get(key);
  if (re === undefined) {
    const words = [...new Set(keywords.filter((k) => k.length > 0))].sort((a, b) => b.length - a.length);
    re = words.length === 0 ? null : nativePattern(new RegExp(words.map(keywordSource).join("|"), "giu"));
    if (keywordLists.size > MAX_ENTRIES) keywordLists.clear();
    keywordLists.set(key, re);
  }
  return re;
}

/** Every non-empty match of `re` in `text` as [start, end) pairs (UTF-16 offsets). */
export function allMatches(re: TextPattern, text: string): [number, number][] {
  return re.matches(text);
}

export function hasMatch(re: TextPattern, text: string): boolean {
  return re.test(text);
}
