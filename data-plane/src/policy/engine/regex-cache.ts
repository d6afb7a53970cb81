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
function re2Pattern(re: RE2JS, prefix: string | undefined): TextPattern {
  // A text that cannot hold the pattern's literal prefix cannot match: an ASCII text is ruled out by one
  // indexOf on its lower-case form (~1 ns a character against re2js's ~5: an 8 KB prompt 43 → ~5 µs).
  // re2js drops its own prefix search for case-insensitive patterns. Only ASCII texts: case folding
  // maps some ASCII letters to others outside ASCII (k ~ U+212A KELVIN SIGN, s ~ U+017F LONG S), which
  // ASCII lower-casing does not know; in an ASCII text none of those can occur.
  const cannotMatch = prefix === undefined ? () => false : (text: string) => {
    const lower = asciiLowerCase(text);
    return lower !== undefined && !lower.includes(prefix);
  };
  return {
    test: (text) => !cannotMatch(text) && re.test(text),
    matches(text) {
      if (cannotMatch(text) || !re.test(text)) return [];
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

/** Regex syntax characters: a literal run of a pattern ends at the first of them. */
const SYNTAX = new Set("\\.[](){}*+?|^$");
const QUANTIFIERS = new Set("*+?{");

/**
 * The literal text every match of `pattern` starts with, lower-cased, when it is at least 3 printable
 * ASCII characters; undefined otherwise, and for any pattern with an alternation (conservative: a
 * prefix that is not required would rule out texts that match). A quantifier after the run applies to
 * its last character, which is then not required.
 */
export function requiredPrefix(pattern: string): string | undefined {
  if (pattern.includes("|")) return undefined;
  let end = 0;
  while (end < pattern.length) {
    const c = pattern.charCodeAt(end);
    if (c < 0x20 || c > 0x7e || SYNTAX.has(pattern[end]!)) break;
    end++;
  }
  if (end < pattern.length && QUANTIFIERS.has(pattern[end]!)) end--;
  return end >= 3 ? pattern.slice(0, end).toLowerCase() : undefined;
}

/**
 * The last text lower-cased, or undefined when it is not all ASCII (a policy phase asks for the same text
 * once per pattern, and a stream governor for the same region). Holds the last text and its copy until
 * the next one comes.
 */
let lastText = "";
let lastLower: string | undefined = "";
const NON_ASCII = /[^\x00-\x7f]/;
function asciiLowerCase(text: string): string | undefined {
  if (text !== lastText) {
    lastText = text;
    lastLower = NON_ASCII.test(text) ? undefined : text.toLowerCase();
  }
  return lastLower;
}

export function compiledRegex(pattern: string): TextPattern | null {
  let re = regexes.get(pattern);
  if (re === undefined) {
    try {
      re = re2Pattern(RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE), requiredPrefix(pattern));
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
