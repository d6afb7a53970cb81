// The forms a keyword matches in (session 25, QA F7): every invisible character the injection scorer
// removes, tag characters, NFKC look-alike letters and digits; and the windows they open stay small.
import test from "ava";
import { KeywordAutomaton } from "./keyword-automaton.js";
import { isInvisible as isScorerInvisible } from "../injection/normalize.js";
import { foldLookAlikes, INVISIBLES, isInvisible, lookAlikeChars, widenToCodePoint } from "./keyword-forms.js";
import { allMatches, hasMatch, keywordRegex } from "./regex-cache.js";

const escaped = (s: string): string => s.replace(/[^\x20-\x7e]/gu, (c) => "\\u{" + c.codePointAt(0)!.toString(16) + "}");
const tags = (s: string): string => [...s].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join("");
const offset = (s: string, base: number): string => [...s].map((c) => (c >= "a" && c <= "z" ? String.fromCodePoint(base + c.charCodeAt(0) - 97) : c)).join("");
const prose = (chars: number): string => "the quarterly report shows steady growth in every region. ".repeat(Math.ceil(chars / 58)).slice(0, chars);

const written: readonly string[] = [
  "zorb\u2063laxquux", // invisible separator
  "zorb\u2061\u2062\u2064laxquux",
  "zorb\u200elaxquux", // LRM
  "zorb\u200flaxquux",
  "\u202ezorblaxquux\u202c".slice(1, -1),
  "zorb\u202elaxquux",
  "zorb\u2066lax\u2069quux",
  "zorb\ufe0flaxquux",
  "zorb\u{e0101}laxquux", // variation selector supplement
  "zorb\u034flaxquux",
  "zorb\u180elaxquux",
  "zorb\u3164laxquux",
  "zorb\u115f\u1160laxquux",
  "zorb\u061claxquux",
  tags("zorblaxquux"),
  tags("ZORBLAXQUUX"),
  "zorb" + tags("lax") + "quux",
  offset("zorblaxquux", 0x1d41a), // mathematical bold
  offset("zorblaxquux", 0x1d5ba), // sans-serif
  offset("zorblaxquux", 0x1d68a), // monospace
  offset("zorblaxquux", 0x24d0), // circled
  "𝐙𝐎𝐑𝐁𝐋𝐀𝐗𝐐𝐔𝐔𝐗", // bold capitals
  "𝕫𝕠𝕣𝕓𝕝𝕒𝕩𝕢𝕦𝕦𝕩", // double-struck
  "ℤ𝕠𝕣𝕓𝕝𝕒𝕩𝕢𝕦𝕦𝕩", // letter-like symbol U+2124
  "zᵒrblaxquux", // modifier letter
];

for (const w of written) {
  test(`a block keyword matches ${escaped(w)}`, (t) => {
    const re = keywordRegex(["zorblaxquux"])!;
    const text = `please say ${w} now`;
    t.true(hasMatch(re, text));
    t.deepEqual(allMatches(re, text), [[11, 11 + w.length]]);
    const long = `${prose(4000)} ${w} ${prose(4000)}`;
    t.true(hasMatch(re, long), "in an 8 KB text, decided in the window");
    t.deepEqual(allMatches(re, long), [[4001, 4001 + w.length]]);
  });
}

test("digits in a keyword: superscript, subscript, mathematical and circled digits", (t) => {
  const re = keywordRegex(["agent007"])!;
  for (const w of ["agent⁰⁰⁷", "agent₀₀₇", "agent𝟎𝟎𝟕", "agent⓪⓪⑦", "agent\u{e0030}\u{e0030}\u{e0037}"]) t.true(hasMatch(re, `x ${w} y`), escaped(w));
});

test("not matched: a look-alike of another script, an accent added, letters that are not look-alikes", (t) => {
  // Cyrillic and Greek look-alikes spell another word (decisions.md): "zоrblaxquux" with a Cyrillic о.
  // A tag space is a space as a model reads it.
  const re = keywordRegex(["zorblaxquux"])!;
  for (const w of ["z\u043erblaxquux", "zo\u0301rblaxquux", "zoʀblaxquux", "zorb\u2028laxquux", "zorb laxquux", "zorb⒧axquux", "zorb\u{e0020}laxquux"]) t.false(hasMatch(re, `say ${w} now`), escaped(w));
  t.false(hasMatch(re, `say zorb${"\u{e0041}"}laxquu now`), "a tag character between letters does not complete a word");
});

test("look-alike characters: both cases of a letter, none for characters other than ASCII", (t) => {
  const z = lookAlikeChars("z");
  for (const c of ["𝐳", "𝐙", "ⓩ", "Ⓩ", "ℤ", "\u{e007a}", "\u{e005a}"]) t.true(z.includes(c), escaped(c));
  t.false(z.includes("ｚ"), "the full-width form is one of keywordCharForms");
  t.deepEqual(lookAlikeChars("é"), []);
  t.deepEqual(lookAlikeChars("-"), ["\u{e002d}"]);
});

test("an invisible character opens a window only between two characters a keyword may be written with", (t) => {
  const a = new KeywordAutomaton([["zorblaxquux", "secret1"]]);
  const around = (s: string) => `${prose(4000)} ${s} ${prose(4000)}`;
  // Emoji presentation selectors, emoji zero-width joiners, bidi marks in other scripts: no window.
  for (const s of ["I ❤️ it", "שלום \u200eQ3 2024\u200e עולם", "quarter\u200bly", "👨\u200d👩\u200d👧 family", "שלום\u200f עולם", "\u200eשלום\u200e", "مرحبا\u061c١٢", "x\u{e0001}\u{e0067}\u{e0068}", "👍\u{e0067}\u{e007f} ok", "\u200b\u200b!", "“\u2063”"]) {
    t.deepEqual(a.scan(around(s))!.windows, [], escaped(s));
  }
  t.deepEqual(a.scan("\u200bzorblaxquux\u200b")!.windows, [], "at the ends of the text");
  // Between letters: one window, a few dozen characters.
  for (const s of ["zorb\u2063laxquux", "zorb\ufe0f\u200e\u2063laxquux", "se\u202ecret1", offset("zorblaxquux", 0x1d41a), tags("zorblaxquux")]) {
    const w = a.scan(around(s))!.windows;
    t.is(w.length, 2, escaped(s));
    t.true(w[1]! - w[0]! < 4 * 11 + 2 * s.length, `${escaped(s)}: ${w[1]! - w[0]!}`);
  }
  t.deepEqual(a.scan(around("a 𝐡 b"))!.windows, [], "a mathematical letter no keyword has");
});

test("isInvisible is INVISIBLES, and INVISIBLES holds what the injection scorer removes", (t) => {
  const re = new RegExp(`^[${INVISIBLES}]$`, "u");
  for (let cp = 0; cp < 0x110000; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const ch = String.fromCodePoint(cp);
    if (isInvisible(cp) !== re.test(ch)) return t.fail(cp.toString(16));
    if (isScorerInvisible(cp) && !isInvisible(cp)) return t.fail(`removed by the scorer: ${cp.toString(16)}`);
  }
  t.pass();
});

test("foldLookAlikes keeps the length; a keyword written with look-alike characters is folded too", (t) => {
  const text = "ⓩ𝐨𝐑\u{e0062}ª¹ ｚ Привет 😀";
  const f = foldLookAlikes(text);
  t.is(f.length, text.length);
  t.is(f, "zo\u200bR\u200bb\u200ba1 ｚ Привет 😀", "full-width is left to the regex");
  t.is(foldLookAlikes("Привет 😀 \ud835"), "Привет 😀 \ud835");
  t.is(widenToCodePoint(text, 2), 3, "inside 𝐨");
  t.is(widenToCodePoint(text, 3), 3);
  const re = keywordRegex(["x²", "𝐚𝐛𝐜"])!;
  for (const w of ["x²", "x2", "X₂", "abc", "ⓐbc"]) t.true(hasMatch(re, `a ${w} b`), escaped(w));
});
