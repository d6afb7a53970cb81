// Keyword lists are decided for all lists in one pass by the automaton, and where that cannot decide by
// each list's regex: the answers must be the regex's on every text (speed: bench/policy-engine.ts).
import test from "ava";
import { createRng } from "../pii/fixtures/prng.js";
import { KeywordAutomaton } from "./keyword-automaton.js";
import { asciiSpellings, foldLookAlikes, keywordSource, lookAlikeChars, widenToCodePoint } from "./keyword-forms.js";
import { allMatches, hasMatch, keywordRegex, registerKeywordLists } from "./regex-cache.js";

/** The list's regex alone, as keywordRegex builds it. */
function plainRegex(words: readonly string[]): RegExp {
  const sorted = [...new Set(words.filter((w) => w.length > 0))].sort((a, b) => b.length - a.length);
  return new RegExp(sorted.map(keywordSource).join("|"), "giu");
}
/** The regex's matches on the text with its look-alike characters folded, as keywordRegex reports them. */
function plainMatches(re: RegExp, text: string): [number, number][] {
  const out: [number, number][] = [];
  for (const m of foldLookAlikes(text).matchAll(re)) if (m[0].length > 0) out.push([m.index, widenToCodePoint(text, m.index + m[0].length)]);
  return out;
}

test("ASCII spellings: case folded, ß as ss, K (U+212A) and ſ as k and s; none for a letter only non-ASCII text can hold", (t) => {
  t.deepEqual(asciiSpellings("Secret", 16), ["secret"]);
  t.deepEqual(asciiSpellings("straße", 16), ["strasse"]);
  t.deepEqual(asciiSpellings("\u212aey", 16), ["key"]);
  t.deepEqual(asciiSpellings("ſalt", 16), ["salt"]);
  t.deepEqual(asciiSpellings("İzmir", 16), ["izmir"]);
  t.deepEqual(asciiSpellings("café", 16), []);
  t.deepEqual(asciiSpellings("σ", 16), []);
  t.is(asciiSpellings("straße", 0), undefined, "more spellings than the cap: the list is left to its regex");
});

const found = (scan: { hits: Uint8Array } | undefined): number[] => [...scan!.hits].flatMap((h, i) => (h ? [i] : []));
const prose = (chars: number): string => "the quarterly report shows steady growth in every region. ".repeat(Math.ceil(chars / 58)).slice(0, chars);

test("one pass decides twenty lists; curly quotes, emoji and other scripts do not stop it", (t) => {
  const lists = Array.from({ length: 20 }, (_, i) => [`secret${i}`, `project falcon ${i}`, "straße"]);
  const a = new KeywordAutomaton(lists);
  t.deepEqual([...a.covered], lists.map(() => 1));
  const scan = a.scan("It’s about PROJECT FALCON 7 🦅 — Привет, and SECRET13 on Hauptstrasse.");
  t.deepEqual(found(scan), lists.map((_, i) => i), "straße (as strasse) is in every list");
  t.deepEqual(scan!.windows, []);
  const noStrasse = new KeywordAutomaton(lists.map((l) => l.slice(0, 2)));
  t.deepEqual(found(noStrasse.scan("project falcon 1 and secret19, secret1")), [1, 19], "secret1 inside secret19 counts for list 1 too");
  t.deepEqual(noStrasse.scan("a \u212a here, ΣΑΣ 𝒳 ñ")!.windows, [], "K folds to k, which no keyword has; no keyword can be written with the others");
});

test("a character a keyword may be written with opens a window for the regexes; a text mostly windows is left to them whole", (t) => {
  const a = new KeywordAutomaton([["secret1", "project falcon"], ["ñandú"]]);
  const long = `${prose(4000)} se\u200bcret1 ${prose(4000)}`;
  const scan = a.scan(long)!;
  t.deepEqual(found(scan), []);
  t.is(scan.windows.length, 2);
  t.true(scan.windows[0]! <= 4001 && scan.windows[1]! >= 4009, "the window holds the whole match");
  t.true(scan.windows[1]! - scan.windows[0]! < 100);
  t.deepEqual(a.scan(`${prose(4000)} ｓecret1 and se\u200bcret1 ${prose(4000)}`)!.windows.length, 2, "two relevant characters close together: one window");
  t.deepEqual(a.scan(`${prose(4000)} ｓ ${prose(1000)} ſ ${prose(3000)}`)!.windows.length, 4);
  t.is(a.scan("a se\u200bcret1 here"), undefined, "a short text is mostly window");
  t.is(a.scan(`el ñu ${prose(30)}`), undefined, "ñ is a letter a keyword has");
  // Through the keyword lists: found in the window, and not when the window holds no match.
  const re = keywordRegex(["secret1", "project falcon"])!;
  t.true(hasMatch(re, long));
  t.deepEqual(allMatches(re, long), [[4001, 4009]]);
  t.false(hasMatch(re, `${prose(4000)} se\u200bcre ${prose(4000)}`));
  t.true(hasMatch(re, `${prose(4000)} ｓ ${prose(2000)} project falcon ${prose(2000)}`), "an ASCII match far from the window: the automaton's");
});

// Random lists and texts built from the keywords in the forms a text may write them in (cases, ß/ss,
// dotted and dotless i, K and ſ, full-width, invisible characters, decomposed accents, tag characters,
// mathematical, circled and other NFKC look-alike letters and digits, cut short),
// among curly quotes, emoji and other scripts: test and matches equal the regex alone.
test("keyword lists answer as their regexes alone on every text, lists registered together or one by one", (t) => {
  const rng = createRng(24);
  const letters = [..."abcdefghijklmnopqrstuvwxyz", "ss", "k", "s", "i", " ", "-", "ß", "İ", "ı", "é", "\u212a", "ſ", "σ", "ñ", "1"];
  const noise = ["", " ", "x", "’", "🦅", "Привет", "é", "ñ", "İ", "ı", "\u200b", "ｓ", "\u0301", "—", "SS", "ẞ", "K", ".", "\n",
    // Session 25: invisible characters beside characters no keyword has or beside letters, tag, mathematical and circled letters.
    "❤️", "👨\u200d👩\u200d👧", "\u200e", "שלום\u200fעולם", "\u2063", "\u{e0041}", "\u{e0073}\u{e0020}", "𝐱", "𝐬", "ⓐ", "¹", "ª", "\u202e", "\ufe0f"];
  // Half the texts hold only what the automaton decides on: ASCII forms and characters no keyword has.
  const plainNoise = ["", " ", "x", "’", "🦅", "Привет", "—", "SS", ".", "\n"];
  const invisibles = ["\u2063", "\u200e", "\u202e", "\u202c", "\ufe0f", "\u034f", "\u180e", "\u3164", "\u00ad", "\u2066", "\u{e0001}", "\u{e007f}", "\u{e0101}"];
  const variant = (word: string, clean: boolean): string =>
    [...word]
      .map((c) => {
        const r = rng.next();
        if (c === "ß" && r < 0.5) return rng.pick(["ss", "SS", "sS"]);
        if (r < 0.2) return c.toUpperCase();
        if (clean) return c;
        if (r < 0.3 && c === "k") return "\u212a";
        if (r < 0.35 && c === "s") return "ſ";
        if (r < 0.38 && c >= "a" && c <= "z") return String.fromCodePoint(c.codePointAt(0)! + 0xfee0);
        if (r < 0.41) return c + "\u200b";
        if (r < 0.44) return c.normalize("NFD");
        if (r < 0.47) return c + rng.pick(invisibles) + (rng.chance(0.3) ? rng.pick(invisibles) : "");
        if (r < 0.5 && c.charCodeAt(0) < 0x7f) return String.fromCodePoint(0xe0000 + (rng.chance(0.5) ? c.toUpperCase() : c).charCodeAt(0));
        if (r < 0.54 && lookAlikeChars(c).length > 0) return rng.pick(lookAlikeChars(c));
        return c;
      })
      .join("");
  let checked = 0;
  for (let round = 0; round < 150; round++) {
    const lists: string[][] = [];
    const n = rng.int(1, 6);
    for (let l = 0; l < n; l++) {
      const words: string[] = [];
      for (let w = rng.int(1, 4); w > 0; w--) {
        let word = "";
        for (let k = rng.int(1, 6); k > 0; k--) word += rng.pick(letters);
        words.push(word);
      }
      lists.push(words.map((w) => `${w}${round}`));
    }
    if (rng.chance(0.5)) registerKeywordLists(lists);
    const patterns = lists.map((l) => keywordRegex(l)!);
    const plains = lists.map(plainRegex);
    for (let j = 0; j < 20; j++) {
      const clean = rng.chance(0.5);
      const around = clean ? plainNoise : noise;
      // Prose between the parts, so that windows around the characters the automaton does not model
      // are a small part of the text (decided by the regexes on the windows) or not (on the whole text).
      const filler = () => (rng.chance(0.5) ? prose(rng.int(0, 120)) : "");
      let text = rng.pick(around);
      for (let k = rng.int(0, 4); k > 0; k--) {
        const word = variant(`${rng.pick(rng.pick(lists))}`, clean);
        text += filler() + rng.pick(around) + (rng.chance(0.2) ? word.slice(0, rng.int(0, word.length)) : word) + rng.pick(around) + filler();
      }
      for (let l = 0; l < lists.length; l++) {
        const expected = plainMatches(plains[l]!, text);
        if (hasMatch(patterns[l]!, text) !== expected.length > 0) return t.fail(`test ${JSON.stringify(lists[l])} on ${JSON.stringify(text)}`);
        if (JSON.stringify(allMatches(patterns[l]!, text)) !== JSON.stringify(expected)) return t.fail(`matches ${JSON.stringify(lists[l])} on ${JSON.stringify(text)}`);
        checked++;
      }
    }
  }
  t.true(checked > 5000, `${checked} checked`);
});

test("past its bound the registry starts afresh, and every list still answers", (t) => {
  const first = keywordRegex(["registry-first"])!;
  t.true(hasMatch(first, "a REGISTRY-FIRST b"));
  for (let i = 0; i < 2100; i++) t.is(hasMatch(keywordRegex([`bulk-${i}`])!, `x bulk-${i} y`), true);
  t.true(hasMatch(first, "a registry-first b"));
  t.false(hasMatch(first, "a registry first b"));
  t.deepEqual(allMatches(first, "a Registry-First b"), [[2, 16]]);
});
