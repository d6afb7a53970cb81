// Numbers written with Unicode separators and digits: detectPii scans non-ASCII text as its ASCII
// shadow (same length) and reports offsets into the text as it is, which callers then mask.

import test from "ava";
import { asciiShadow, scanForm, SHADOWED_DIGIT_ZEROS, textEnd, textStart } from "./ascii-shadow.js";
import { detectPii } from "./detect-pii.js";
import { loadPiiCorpus } from "./fixtures/corpus.js";
import { createRng, type Rng } from "./fixtures/prng.js";
import { maskSpans } from "./mask.js";
import type { PiiType } from "./types.js";

function found(text: string): [string, string][] {
  return detectPii(text).map((f) => [f.entityType, text.slice(f.start, f.end)]);
}

/** Test titles must differ: non-ASCII characters as \u escapes. */
const escaped = (s: string): string => s.replace(/[^\x20-\x7e]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));

const fullWidth = (s: string): string => s.replace(/[0-9-]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));

const positives: readonly [PiiType, string, string][] = [
  ["ssn", "SSN: 589\u201131\u20116325", "589\u201131\u20116325"], // non-breaking hyphen
  ["ssn", "My SSN is 589\u201331\u20136325.", "589\u201331\u20136325"], // en dash
  ["ssn", "SSN: 589\u221231\u22126325", "589\u221231\u22126325"], // minus sign
  ["ssn", `SSN: ${fullWidth("589-31-6325")}`, fullWidth("589-31-6325")],
  ["ssn", "SSN: \u0665\u0668\u0669-\u0663\u0661-\u0666\u0663\u0662\u0665", "\u0665\u0668\u0669-\u0663\u0661-\u0666\u0663\u0662\u0665"], // Arabic-Indic digits
  ["credit_card", "card: 4881\u00a04732\u00a03984\u00a04819", "4881\u00a04732\u00a03984\u00a04819"],
  ["credit_card", "card: 4881\u202f4732\u202f3984\u202f4819", "4881\u202f4732\u202f3984\u202f4819"], // narrow no-break space
  ["credit_card", "card: 4881\u20074732\u20073984\u20074819", "4881\u20074732\u20073984\u20074819"], // figure space
  ["credit_card", "card: 4881\u20134732\u20133984\u20134819", "4881\u20134732\u20133984\u20134819"],
  ["credit_card", `card: ${fullWidth("4881 4732 3984 4819").replace(/ /g, "\u3000")}`, fullWidth("4881 4732 3984 4819").replace(/ /g, "\u3000")],
  ["iban", "IBAN DE89\u00a03704\u00a00044\u00a00532\u00a00130\u00a000", "DE89\u00a03704\u00a00044\u00a00532\u00a00130\u00a000"],
  ["iban", "IBAN ＤＥ８９ ３７０４ ００４４ ０５３２ ０１３０ ００", "ＤＥ８９ ３７０４ ００４４ ０５３２ ０１３０ ００"],
  ["phone", "phone: +1\u00a0415\u00a0555\u00a00132", "+1\u00a0415\u00a0555\u00a00132"],
  ["phone", "Phone: 415\u2011555\u20110132", "415\u2011555\u20110132"],
  ["phone", "call me at (415) 555\u20110132", "(415) 555\u20110132"],
  ["phone", "電話：＋８１ ９０ １２３４ ５６７８", "＋８１ ９０ １２３４ ５６７８"],
];

for (const [type, text, value] of positives) {
  test(`unicode ${type}: ${escaped(text)}`, (t) => {
    t.deepEqual(found(text), [[type, value]]);
  });
}

test("findings are offsets into the text as it is: masking it removes the value, emoji before it included", (t) => {
  const text = "😀 Résumé — SSN: 589\u201131\u20116325, card ４８８１ ４７３２ ３９８４ ４８１９, tel\u00a0+1\u00a0415\u00a0555\u00a00132.";
  const f = detectPii(text);
  t.deepEqual(
    f.map((x) => x.entityType),
    ["ssn", "credit_card", "phone"],
  );
  t.is(maskSpans(text, f, "redact"), "😀 Résumé — SSN: [REDACTED:ssn], card [REDACTED:credit_card], tel\u00a0[REDACTED:phone].");
  t.is(maskSpans(text, f, "star").length, text.length);
});

test("asciiShadow: same length, replaced characters only, the text itself when there is nothing to replace", (t) => {
  const text = "a\u00a0b\u2007c\u202fd\u3000e\u2010f\u2015g\u2212h\ufe63i\uff0dj\uff10\uff19\uff21\uff41 \u0660\u0669\u06f5\u0966\u09ef\u0e52\u1049\u17e3 é😀\u200b";
  const shadow = asciiShadow(text);
  t.is(shadow.length, text.length);
  t.is(shadow, "a b c d e-f-g-h-i-j09Aa 09509293 é😀\u200b");
  const plain = "Résumé 😀 — “quoted” café";
  t.is(asciiShadow(plain), plain.replace("—", "-"));
  const untouched = "Résumé 😀 “quoted” café 589-31-6325";
  t.is(asciiShadow(untouched), untouched);
});

test("asciiShadow: each replaced digit block is a block of ten Nd digits starting at zero", (t) => {
  for (const zero of SHADOWED_DIGIT_ZEROS) {
    t.false(/\p{Nd}/u.test(String.fromCharCode(zero - 1)), zero.toString(16));
    for (let d = 0; d < 10; d++) {
      t.true(/\p{Nd}/u.test(String.fromCharCode(zero + d)), (zero + d).toString(16));
      t.is(asciiShadow(String.fromCharCode(zero + d)), String(d));
    }
  }
  for (let d = 0; d < 10; d++) t.is(asciiShadow(String.fromCharCode(0xff10 + d)), String(d));
});

/** The same text with its separators and digits swapped for Unicode forms of the same length. */
function unicodeVariant(rng: Rng, text: string): string {
  const spaces = ["\u00a0", "\u2007", "\u202f", "\u2009", "\u3000"];
  const dashes = ["\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2212", "\ufe63", "\uff0d"];
  const zeros = [0xff10, ...SHADOWED_DIGIT_ZEROS];
  const zero = rng.pick(zeros);
  let out = "";
  for (const ch of text) {
    if (ch === " " && rng.chance(0.5)) out += rng.pick(spaces);
    else if (ch === "-" && rng.chance(0.5)) out += rng.pick(dashes);
    else if (ch >= "0" && ch <= "9" && rng.chance(0.7)) out += String.fromCharCode(zero + ch.charCodeAt(0) - 48);
    else out += ch;
  }
  return out;
}

test("a text with Unicode separators and digits has exactly the findings of its ASCII form: labelled corpus", (t) => {
  const rng = createRng(424242);
  let findings = 0;
  for (const row of loadPiiCorpus()) {
    if (!/^[\x00-\x7f]*$/.test(row.text)) continue;
    const variant = unicodeVariant(rng, row.text);
    const expected = detectPii(row.text);
    findings += expected.length;
    const got = detectPii(variant);
    if (JSON.stringify(got) !== JSON.stringify(expected)) {
      t.fail(`${row.id}: ${JSON.stringify(variant)} → ${JSON.stringify(got)}, ASCII ${JSON.stringify(expected)}`);
      return;
    }
  }
  t.true(findings > 500, `the corpus has findings to compare (${findings})`);
});

// Invisible characters inside a value, U+FE6B and superscript / mathematical digits (session 25, QA F5):
// scanned without the invisible characters, reported (and masked) as the whole value as written.
const invisiblePositives: readonly [PiiType, string, string][] = [
  ["credit_card", "my card is 4111\u200b1111\u200b1111\u200b1111 thanks", "4111\u200b1111\u200b1111\u200b1111"],
  ["credit_card", "my card is 41\u200b11 11\u200b11 1111 1111 thanks", "41\u200b11 11\u200b11 1111 1111"],
  ["credit_card", "my card is 4111\u00ad1111\u00ad1111\u00ad1111 thanks", "4111\u00ad1111\u00ad1111\u00ad1111"],
  ["credit_card", "card 4111\u2063 1111\u200e 1111\ufe0f 1111\u202c", "4111\u2063 1111\u200e 1111\ufe0f 1111"],
  ["credit_card", "my card is 𝟒𝟏𝟏𝟏 𝟏𝟏𝟏𝟏 𝟏𝟏𝟏𝟏 𝟏𝟏𝟏𝟏 thanks", "𝟒𝟏𝟏𝟏 𝟏𝟏𝟏𝟏 𝟏𝟏𝟏𝟏 𝟏𝟏𝟏𝟏"],
  ["credit_card", "my card is 𝟺𝟷𝟷𝟷-𝟷𝟷𝟷𝟷-𝟷𝟷𝟷𝟷-𝟷𝟷𝟷𝟷", "𝟺𝟷𝟷𝟷-𝟷𝟷𝟷𝟷-𝟷𝟷𝟷𝟷-𝟷𝟷𝟷𝟷"], // monospace digits
  ["credit_card", "my card is ⁴¹¹¹ ¹¹¹¹ ¹¹¹¹ ¹¹¹¹ thanks", "⁴¹¹¹ ¹¹¹¹ ¹¹¹¹ ¹¹¹¹"],
  ["ssn", "my SSN is 536\u200b-22-8726", "536\u200b-22-8726"],
  ["ssn", "my SSN is \ufeff5\u200d3\u200c6-2\u20602-8\u034f7\u180e2\u31646", "5\u200d3\u200c6-2\u20602-8\u034f7\u180e2\u31646"],
  ["ssn", "my SSN is 536-\u{e0032}22-8726", "536-\u{e0032}22-8726"], // a tag character (two units)
  ["ssn", "my SSN is ₅₃₆-₂₂-₈₇₂₆", "₅₃₆-₂₂-₈₇₂₆"],
  ["email", "mail jane\u200b.doe@example.com now", "jane\u200b.doe@example.com"],
  ["email", "mail jane.doe@exa\u00admple.c\u200bom now", "jane.doe@exa\u00admple.c\u200bom"],
  ["email", "mail jane.doe\ufe6bexample.com now", "jane.doe\ufe6bexample.com"],
  ["phone", "call me at +1 (415) 555\u200b-0132", "+1 (415) 555\u200b-0132"],
  ["iban", "IBAN DE89\u200b3704\u200b0044\u200b0532\u200b0130\u200b00", "DE89\u200b3704\u200b0044\u200b0532\u200b0130\u200b00"],
];

for (const [type, text, value] of invisiblePositives) {
  test(`invisible characters, ${type}: ${escaped(text)}`, (t) => {
    t.deepEqual(found(text), [[type, value]]);
    t.false(/\d|@|\ufe6b|[\u{1d7ce}-\u{1d7ff}]/u.test(maskSpans(text, detectPii(text), "redact").replace(/^[^:]*(?:is|card|mail|at|IBAN) /, "")), "nothing of the value is left");
  });
}

test("scanForm: the text without invisible characters, and offsets back into the text", (t) => {
  const text = "a\u200bb𝟕\u{e0041}c\u00b2\ufe6b\u00a0𝐀";
  const { text: scanned, cuts } = scanForm(text);
  t.is(scanned, "ab7c2@ 𝐀", "mathematical letters are kept, two units");
  t.deepEqual(cuts, [1, 3, 3, 3], "before b; after 7 (its second unit); two before c");
  t.is(textStart(cuts!, 0), 0);
  t.is(textStart(cuts!, 1), 2, "b");
  t.is(textStart(cuts!, 2), 3, "𝟕");
  t.is(textEnd(text, cuts!, 3), 5, "after 𝟕: both units");
  t.is(textStart(cuts!, 3), 7, "c, after the tag character");
  t.is(textEnd(text, cuts!, 4), 8);
  t.deepEqual(scanForm("Résumé — 589-31-6325"), { text: "Résumé - 589-31-6325", cuts: null });
  t.deepEqual(scanForm("x ¹ y"), { text: "x 1 y", cuts: null }, "replaced only: the same length");
  t.deepEqual(scanForm("µ 𝐀 \ud835"), { text: "µ 𝐀 \ud835", cuts: null }, "a lone surrogate is kept");
});

/** The ASCII text with invisible characters between its characters and some digits as mathematical or superscript digits. */
function invisibleVariant(rng: Rng, text: string): { variant: string; at: number[] } {
  const invisibles = ["\u200b", "\u200c", "\u200d", "\u00ad", "\u2060", "\u2063", "\ufeff", "\u200e", "\u202c", "\ufe0f", "\u034f", "\u{e0020}", "\u{e0061}"];
  const digitForms = [(d: number) => String.fromCodePoint(0x1d7ce + d), (d: number) => String.fromCodePoint(0x1d7f6 + d), (d: number) => String.fromCharCode(0x2080 + d)];
  const form = rng.pick(digitForms);
  let variant = "";
  const at: number[] = []; // variant offset of each character of text, then of its end
  for (const ch of text) {
    if (rng.chance(0.15)) variant += rng.pick(invisibles);
    at.push(variant.length);
    variant += ch >= "0" && ch <= "9" && rng.chance(0.3) ? form(ch.charCodeAt(0) - 48) : ch;
  }
  at.push(variant.length);
  return { variant, at };
}

test("a text with invisible characters and other digits has the findings of its ASCII form, spans widened: labelled corpus", (t) => {
  const rng = createRng(2525);
  let findings = 0;
  for (const row of loadPiiCorpus()) {
    if (!/^[\x00-\x7f]*$/.test(row.text)) continue;
    const { variant, at } = invisibleVariant(rng, row.text);
    const expected = detectPii(row.text).map((f) => ({ ...f, start: at[f.start]!, end: at[f.end - 1]! + (variant.codePointAt(at[f.end - 1]!)! > 0xffff ? 2 : 1) }));
    findings += expected.length;
    const got = detectPii(variant);
    if (JSON.stringify(got) !== JSON.stringify(expected)) {
      t.fail(`${row.id}: ${JSON.stringify(variant)} → ${JSON.stringify(got)}, ASCII ${JSON.stringify(expected)}`);
      return;
    }
  }
  t.true(findings > 500, `the corpus has findings to compare (${findings})`);
});
