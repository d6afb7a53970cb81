// Which keyword lists occur in a text, for every list in one pass (Aho–Corasick over the lists' ASCII
// spellings). Each list's own regex (regex-cache.ts) costs ~15–27 µs per 8 KB, so an organization with
// twenty keyword policies spent ~0.5 ms a phase; one pass of this automaton costs ~15 µs for one list or
// twenty. Written by hand: it is the hot path, and it needs what the npm Aho–Corasick packages do not
// offer together (case folding by a class table, typed-array transitions, characters that end a match
// without ending the scan, and knowing when a text falls outside what it can decide).
//
// What it decides exactly: whether a list's regex would match. A match of the regex made of ASCII
// characters only is one ASCII spelling of a keyword (keyword-forms.ts `asciiSpellings`), which is what
// the automaton finds; a non-ASCII character ends any match in progress. Most non-ASCII characters
// cannot take part in a keyword match at all (curly quotes, emoji, other scripts). One that can (a
// full-width or mathematical letter, a tag character, K U+212A, an accented letter some keyword has, or
// an invisible character between two characters that can: "relevant") is part of every match it is in,
// and such a match lies within `reach` characters of it, or of the next relevant character of the same
// match: the scan returns those windows, merged, and a list the automaton did not find is decided by its
// regex on the windows alone (a zero-width space in an 8 KB prompt: one window of a few dozen
// characters, not the whole text). An invisible character sits only between two characters of a match
// (keywordSource), so a run of them opens a window only when the characters on both sides could be part
// of a match, and for two ASCII characters only when they can end one keyword character and start the
// next: the variation selector of "❤️", an emoji's zero-width joiner or an LRM between Hebrew words and
// "Q3" do not. A text mostly covered by windows is left to the regexes whole: scan answers undefined.
import { asciiMatches, asciiSpellings, formCharacterClass, isInvisible, keywordCharForms, keywordLetters, lookAlikeChars } from "./keyword-forms.js";

/** Spellings per keyword beyond which its list is left to its regex (e.g. a word of many ß and i). */
const MAX_SPELLINGS = 16;
/** States (spelling characters) beyond which further lists are left to their regexes: bounds the table. */
const MAX_STATES = 20_000;
/** Distinct non-ASCII characters whose relevance is remembered. */
const MAX_REMEMBERED = 4096;
/** What a non-ASCII character can be in a match: nothing, a character of a form, or an invisible character between two. */
const NONE = 0;
const FORM = 1;
const INVISIBLE = 2;

/** What one pass found. */
export interface KeywordScan {
  /** 1 at the index of each list the automaton found (read only where `covered`). */
  readonly hits: Uint8Array;
  /** [start, end) pairs, flat and in order: where a list not found may still match (by its regex). */
  readonly windows: readonly number[];
}

export class KeywordAutomaton {
  /** 1 where the list's answer comes from the automaton; 0: ask the list's regex. */
  readonly covered: Uint8Array;
  private readonly hits: Uint8Array;
  /** The text character's class (ASCII, case folded): 0 for characters no spelling has. */
  private readonly classOf = new Int32Array(0x80);
  /**
   * Transitions as a full table, row per state; entries are the next state's row offset, negative when
   * that state ends a spelling (the root, offset 0, ends none).
   */
  private readonly delta: Int32Array;
  private readonly classes: number;
  /** The lists each state ends a spelling of, by state number (its own and its suffixes'). */
  private readonly outputs: number[][];
  private readonly relevantChar: RegExp;
  private readonly relevance = new Map<number, number>();
  /** 1 for an ASCII character (either case) that matches a character of some form (see `relevance`). */
  private readonly formAscii = new Uint8Array(0x80);
  /**
   * 1 at [a * 128 + b] for ASCII characters a and b (either case) that may end one keyword character's
   * form and start the next one's: where an invisible character between two ASCII characters may sit.
   */
  private readonly asciiPairs = new Uint8Array(0x80 * 0x80);
  /**
   * At most how many UTF-16 units of a match are not invisible characters: per keyword character its
   * longest form, doubled (a form character's case variant might be a surrogate pair), or its longest
   * look-alike character (no case variants).
   */
  private readonly reach: number;
  private readonly windows: number[] = [];
  private readonly result: KeywordScan;

  constructor(lists: readonly (readonly string[])[]) {
    this.covered = new Uint8Array(lists.length);
    this.hits = new Uint8Array(lists.length);
    const patterns: { spelling: string; list: number }[] = [];
    const coveredWords: string[] = [];
    let states = 1;
    let reach = 0;
    lists.forEach((words, list) => {
      const spellings: string[] = [];
      for (const word of words) {
        if (word.length === 0) continue;
        const s = asciiSpellings(word, MAX_SPELLINGS);
        if (s === undefined) return;
        spellings.push(...s);
      }
      const size = spellings.reduce((n, s) => n + s.length, 0);
      if (states + size > MAX_STATES) return;
      states += size;
      this.covered[list] = 1;
      coveredWords.push(...words);
      for (const word of words) {
        const letters = keywordLetters(word);
        const units = keywordCharForms(word).reduce(
          (n, forms, i) => n + Math.max(2 * Math.max(...forms.map((f) => f.length)), ...lookAlikeChars(letters[i]!).map((c) => c.length)),
          0,
        );
        reach = Math.max(reach, units);
      }
      for (const spelling of spellings) patterns.push({ spelling, list });
    });

    // Character classes: one per ASCII character some spelling has (spellings are lower case, and the
    // text's upper-case letters fold onto them).
    let classes = 1;
    const classByChar = new Map<string, number>();
    for (const { spelling } of patterns) for (const ch of spelling) if (!classByChar.has(ch)) classByChar.set(ch, classes++);
    for (let c = 0; c < 0x80; c++) this.classOf[c] = classByChar.get(String.fromCharCode(c).toLowerCase()) ?? 0;
    this.classes = classes;

    // The trie, then failure links breadth first, filling every missing transition from the failure state.
    const trie: Map<number, number>[] = [new Map()];
    const own: number[][] = [[]];
    for (const { spelling, list } of patterns) {
      let s = 0;
      for (const ch of spelling) {
        const c = classByChar.get(ch)!;
        let next = trie[s]!.get(c);
        if (next === undefined) {
          next = trie.length;
          trie.push(new Map());
          own.push([]);
          trie[s]!.set(c, next);
        }
        s = next;
      }
      own[s]!.push(list);
    }
    const n = trie.length;
    const next = new Int32Array(n * classes); // state numbers
    const fail = new Int32Array(n);
    this.outputs = own.map(() => []);
    const queue: number[] = [];
    for (const [c, t] of trie[0]!) {
      next[c] = t;
      queue.push(t);
    }
    for (let head = 0; head < queue.length; head++) {
      const s = queue[head]!;
      this.outputs[s] = [...new Set([...own[s]!, ...this.outputs[fail[s]!]!])];
      for (let c = 1; c < classes; c++) {
        const t = trie[s]!.get(c);
        if (t === undefined) next[s * classes + c] = next[fail[s]! * classes + c]!;
        else {
          fail[t] = next[fail[s]! * classes + c]!;
          next[s * classes + c] = t;
          queue.push(t);
        }
      }
    }
    this.delta = new Int32Array(n * classes);
    for (let i = 0; i < n * classes; i++) {
      const t = next[i]!;
      this.delta[i] = this.outputs[t]!.length > 0 ? -(t * classes) : t * classes;
    }
    this.relevantChar = new RegExp(formCharacterClass(coveredWords), "iu");
    for (let c = 0; c < 0x80; c++) if (this.relevantChar.test(String.fromCharCode(c))) this.formAscii[c] = 1;
    const asciiOf = (ch: string): number[] => asciiMatches(ch).flatMap((a) => [a.charCodeAt(0), a.toUpperCase().charCodeAt(0)]);
    for (const word of new Set(coveredWords)) {
      const forms = keywordCharForms(word);
      for (let i = 0; i + 1 < forms.length; i++) {
        const ends = new Set(forms[i]!.flatMap((f) => asciiOf([...f].at(-1)!)));
        const starts = new Set(forms[i + 1]!.flatMap((f) => asciiOf([...f][0]!)));
        for (const a of ends) for (const b of starts) this.asciiPairs[a * 0x80 + b] = 1;
      }
    }
    this.reach = reach;
    this.result = { hits: this.hits, windows: this.windows };
  }

  /**
   * The lists found in `text` and the windows where others may still match, or undefined when the
   * windows would cover most of the text. The result is reused by the next scan.
   */
  scan(text: string): KeywordScan | undefined {
    const { hits, classOf, delta, classes, windows, reach } = this;
    hits.fill(0);
    windows.length = 0;
    let covered = 0;
    let s = 0;
    const len = text.length;
    for (let i = 0; i < len; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x80) {
        s = delta[s + classOf[c]!]!;
        if (s < 0) {
          s = -s;
          for (const list of this.outputs[s / classes]!) hits[list] = 1;
        }
        continue;
      }
      s = 0;
      const cp = text.codePointAt(i)!;
      let units = cp > 0xffff ? 2 : 1;
      const kind = this.kindOf(cp);
      if (kind === INVISIBLE) {
        // The run of invisible characters from here: relevant when a form character is on both sides.
        let after = i + units;
        let next = -1;
        while (after < len) {
          next = text.codePointAt(after)!;
          if (next < 0x80 || this.kindOf(next) !== INVISIBLE) break;
          after += next > 0xffff ? 2 : 1;
          next = -1;
        }
        units = after - i;
        const prev = i === 0 ? -1 : i > 1 && (text.charCodeAt(i - 1) & 0xfc00) === 0xdc00 ? text.codePointAt(i - 2)! : text.charCodeAt(i - 1);
        // Two ASCII characters: the pair must be able to join two characters of a keyword (an LRM
        // between " " and "Q" opens nothing unless some keyword has " q"); otherwise both must be form characters.
        const between =
          prev === -1 || next === -1 ? false : prev < 0x80 && next < 0x80 ? this.asciiPairs[prev * 0x80 + next] === 1 : this.isForm(prev) && this.isForm(next);
        if (!between) {
          i = after - 1;
          continue;
        }
      }
      if (kind !== NONE) {
        const start = Math.max(0, i - reach);
        const end = Math.min(len, i + units + reach);
        const last = windows.length - 1;
        if (last > 0 && start <= windows[last]!) {
          covered += end - windows[last]!;
          windows[last] = end;
        } else {
          covered += end - start;
          windows.push(start, end);
        }
        if (covered * 2 > len) return undefined;
      }
      i += units - 1;
    }
    return this.result;
  }

  /** Whether a character (ASCII or not) may be one of a form's characters. */
  private isForm(cp: number): boolean {
    return cp < 0x80 ? this.formAscii[cp] === 1 : this.kindOf(cp) === FORM;
  }

  /** NONE, FORM or INVISIBLE, for a non-ASCII character (a tag character a keyword has is a FORM). */
  private kindOf(cp: number): number {
    let r = this.relevance.get(cp);
    if (r === undefined) {
      const ch = String.fromCodePoint(cp);
      r = this.relevantChar.test(ch) ? FORM : isInvisible(cp) ? INVISIBLE : NONE;
      if (this.relevance.size >= MAX_REMEMBERED) this.relevance.clear();
      this.relevance.set(cp, r);
    }
    return r;
  }
}
