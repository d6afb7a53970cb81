// Policy regexes and keyword lists, compiled once, both matched case-insensitively.
// Policy regexes run on RE2 (re2js: linear time in the text for every pattern), because V8's
// backtracking engine is quadratic or worse on failed searches even for "safe" patterns, and prompts
// may be megabytes long. Keyword lists are literal alternations, which V8 matches in linear time.
import { RE2JS } from "re2js";
import { KeywordAutomaton, type KeywordScan } from "./keyword-automaton.js";
import { isAscii } from "../is-ascii.js";
import { foldLookAlikes, keywordSource, widenToCodePoint } from "./keyword-forms.js";

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
  // A text that cannot hold the pattern's literal prefix cannot match: ruled out by one indexOf on its
  // lower-case form (~1 ns a character against re2js's ~5: an 8 KB prompt 43 → ~5 µs). re2js drops its
  // own prefix search for case-insensitive patterns. Under RE2's case folding the only characters
  // besides an ASCII character's own two cases that match it are K (U+212A, as k) and ſ (U+017F, as s),
  // checked over every code point (decisions.md); lower-casing makes K a k, and ſ is replaced by s. Other
  // changes lower-casing makes (İ → i + U+0307) can only add a false "may match", which re2js then decides.
  const cannotMatch = prefix === undefined ? () => false : (text: string) => !foldedLowerCase(text).includes(prefix);
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
 * The last text lower-cased, ſ as s (a policy phase asks for the same text once per pattern, and a stream
 * governor for the same region). Holds the last text and its copy until the next one comes.
 */
let lastText = "";
let lastLower = "";
function foldedLowerCase(text: string): string {
  if (text !== lastText) {
    lastText = text;
    const lower = text.toLowerCase();
    lastLower = lower.includes("ſ") ? lower.replaceAll("ſ", "s") : lower;
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

/** Cache key of a keyword list (also used to remember which lists were seen in a stream). */
export const keywordListKey = (keywords: readonly string[]): string => keywords.join("\u0000");

/**
 * Keyword lists known to the shared automaton (keyword-automaton.ts), which decides for all of them in
 * one pass over a text. A policy set's lists are registered together (registerKeywordLists: the automaton
 * is rebuilt once); a list that comes on its own is left to its regex until the lists waiting are a
 * quarter of those built, so lists asked for one at a time cost rebuilds in geometric steps, not one
 * each. Past its bound the registry starts afresh (lists of policies since removed then drop out).
 */
const MAX_REGISTERED_LISTS = 2000;
const registry = { version: 0, lists: [] as (readonly string[])[], automaton: undefined as KeywordAutomaton | undefined };
interface Registration {
  version: number;
  index: number;
}
interface KeywordList {
  key: string;
  words: readonly string[];
  registration?: Registration;
}
const registrations = new Map<string, Registration>();

function register(key: string, words: readonly string[]): Registration {
  let r = registrations.get(key);
  if (r !== undefined && r.version === registry.version) return r;
  if (registry.lists.length >= MAX_REGISTERED_LISTS) {
    registry.version++;
    registry.lists = [];
    registry.automaton = undefined;
    registrations.clear();
  }
  r = { version: registry.version, index: registry.lists.length };
  registry.lists.push(words);
  registrations.set(key, r);
  return r;
}

/** Registers lists that will be asked about together (a policy set), so that the automaton is built once. */
export function registerKeywordLists(lists: Iterable<readonly string[]>): void {
  const before = registry.lists.length;
  const version = registry.version;
  for (const list of lists) {
    const words = list.filter((k) => k.length > 0);
    if (words.length > 0) register(keywordListKey(list), words);
  }
  if (registry.lists.length !== before || registry.version !== version) registry.automaton = undefined;
}

function currentAutomaton(): KeywordAutomaton {
  let a = registry.automaton;
  const waiting = a === undefined ? 0 : registry.lists.length - a.covered.length;
  if (a === undefined || (waiting > 0 && waiting * 4 >= a.covered.length)) a = registry.automaton = new KeywordAutomaton(registry.lists.slice());
  return a;
}

/** The last text scanned and what the scan found (undefined: the regexes decide for the whole text). */
let scannedText: string | undefined;
let scannedBy: KeywordAutomaton | undefined;
let scannedResult: KeywordScan | undefined;

/** Whether the list occurs in `text`, by the automaton and `exact` on its windows; undefined when `exact` must say for the whole text. */
function automatonHit(list: KeywordList, exact: TextPattern, text: string): boolean | undefined {
  // The list remembers its registration: one Map lookup less per evaluation while the registry holds.
  const r = list.registration?.version === registry.version ? list.registration : (list.registration = register(list.key, list.words));
  const automaton = currentAutomaton();
  if (automaton.covered[r.index] !== 1) return undefined; // not covered, or registered since the build
  if (scannedBy !== automaton || scannedText !== text) {
    scannedBy = automaton;
    scannedText = text;
    scannedResult = automaton.scan(text);
  }
  const scan = scannedResult;
  if (scan === undefined) return undefined;
  if (scan.hits[r.index] === 1) return true;
  const w = scan.windows;
  for (let i = 0; i < w.length; i += 2) if (exact.test(foldLookAlikes(text.slice(w[i], w[i + 1])))) return true;
  return false;
}

/** The last text with its look-alike characters folded (keyword-forms.ts foldLookAlikes: same length). */
let foldInput = "";
let foldOutput = "";
function folded(text: string): string {
  if (text !== foldInput) {
    foldInput = text;
    foldOutput = isAscii(text) ? text : foldLookAlikes(text);
  }
  return foldOutput;
}

/**
 * A keyword list: whether any keyword occurs, and where. The automaton answers whether for most texts
 * (all lists in one pass); the list's regex, one case-insensitive alternation of the keywords
 * (keywordSource), longest first so that the longest keyword at a position wins, finds where, and answers
 * for the texts the automaton leaves to it; it runs on the text with its look-alike characters folded
 * (foldLookAlikes: mathematical and circled letters, tag characters…, the same length). A regex rather than `toLowerCase().indexOf` keeps offsets
 * exact for characters whose lower-case form has another length (e.g. "İ").
 */
export function keywordRegex(keywords: readonly string[]): TextPattern | null {
  const key = keywordListKey(keywords);
  let re = keywordLists.get(key);
  if (re === undefined) {
    const words = [...new Set(keywords.filter((k) => k.length > 0))].sort((a, b) => b.length - a.length);
    if (words.length === 0) re = null;
    else {
      const exact = nativePattern(new RegExp(words.map(keywordSource).join("|"), "giu"));
      const list: KeywordList = { key, words };
      re = {
        test: (text) => automatonHit(list, exact, text) ?? exact.test(folded(text)),
        matches(text) {
          if (automatonHit(list, exact, text) === false) return [];
          const spans = exact.matches(folded(text));
          for (const span of spans) span[1] = widenToCodePoint(text, span[1]);
          return spans;
        },
      };
    }
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
