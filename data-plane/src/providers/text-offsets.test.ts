// Offset conversion (text-offsets.ts) and range mapping (shift-range.ts) are indexed (O(log n) a call
// after an O(n) index kept for the last few texts); these tests hold them to the straightforward
// O(n)-a-call implementations they replaced, on random mixed text: ASCII, accented (2 UTF-8 bytes),
// CJK (3), emoji (surrogate pairs, 4), lone surrogates (one code point, 3 bytes as U+FFFD), with offsets
// out of range, inside characters, not integers, NaN and infinite; texts interleaved so the index cache
// is hit, missed and evicted. A streamed text (GrowingText) keeps its index while it grows: its offsets
// must stay those of the string it holds after every append, and the kept runs a stream records as it
// writes its redacted copy must map ranges as rangeMapper, which finds them in the whole text.
import test from "ava";
import { createRng } from "../policy/pii/fixtures/prng.js";
import { GrowingText } from "./growing-text.js";
import { KeptRuns, rangeMapper } from "./shift-range.js";
import { fromUtf16, toUtf16, unitOfQuote, unitOfRange, type OffsetUnit } from "./text-offsets.js";

// ---- the reference implementations (as they were before indexing) ----

function refToUtf16(text: string, n: number, unit: OffsetUnit): number {
  if (unit === "utf16") return Math.max(0, Math.min(n, text.length));
  let units = 0;
  let counted = 0;
  for (const ch of text) {
    if (counted >= n) break;
    counted += unit === "codepoints" ? 1 : Buffer.byteLength(ch, "utf8");
    units += ch.length;
  }
  return units;
}

function refFromUtf16(text: string, u: number, unit: OffsetUnit): number {
  const head = text.slice(0, Math.max(0, Math.min(u, text.length)));
  if (unit === "utf16") return head.length;
  if (unit === "utf8") return Buffer.byteLength(head, "utf8");
  let n = 0;
  for (const _ of head) n++;
  return n;
}

function refUnitOfQuote(text: string, start: number, end: number, quoted: string, units: readonly OffsetUnit[]): OffsetUnit | undefined {
  return units.find((u) => text.slice(refToUtf16(text, start, u), refToUtf16(text, end, u)) === quoted);
}

function refFits(text: string, n: number, unit: OffsetUnit): boolean {
  return refFromUtf16(text, refToUtf16(text, n, unit), unit) === n;
}

function refUnitOfRange(text: string, start: number, end: number, units: readonly OffsetUnit[], expected?: string): OffsetUnit | undefined {
  const fitting = units.filter((u) => refFits(text, start, u) && refFits(text, end, u));
  if (expected) {
    const verified = fitting.find((u) => text.slice(refToUtf16(text, start, u), refToUtf16(text, end, u)).includes(expected));
    if (verified !== undefined) return verified;
  }
  return fitting[0];
}

const LABEL = /\[REDACTED:[a-z_]+\]/g;

/** shift-range.ts's rangeMapper with its linear scan of the kept runs. */
function refRangeMapper(before: string, after: string): ((start: number, end: number) => [number, number]) | undefined {
  if (before === after) return (start, end) => [start, end];
  const pieces: [number, number][] = [];
  let last = 0;
  for (const m of after.matchAll(LABEL)) {
    pieces.push([last, m.index]);
    last = m.index + m[0].length;
  }
  pieces.push([last, after.length]);
  const runs: { b: number; a: number; length: number }[] = [];
  let b = 0;
  for (let i = 0; i < pieces.length; i++) {
    const [from, to] = pieces[i]!;
    const length = to - from;
    const text = after.slice(from, to);
    let at: number;
    if (i === 0) at = before.startsWith(text) ? 0 : -1;
    else if (i === pieces.length - 1) {
      at = before.length - length;
      if (at < b + 1 || !before.endsWith(text)) at = -1;
    } else if (length === 0) continue;
    else at = before.indexOf(text, b + 1);
    if (at < 0) return undefined;
    if (length > 0) runs.push({ b: at, a: from, length });
    b = at + length;
  }
  const map = (x: number, side: "start" | "end"): number => {
    for (let i = 0; i < runs.length; i++) {
      const r = runs[i]!;
      if (x >= r.b && x <= r.b + r.length) return r.a + (x - r.b);
      if (x < r.b) {
        if (side === "end") return r.a;
        return i === 0 ? 0 : runs[i - 1]!.a + runs[i - 1]!.length;
      }
    }
    return side === "end" ? after.length : runs.length > 0 ? runs[runs.length - 1]!.a + runs[runs.length - 1]!.length : 0;
  };
  return (start, end) => {
    const s = map(Math.max(0, Math.min(start, before.length)), "start");
    const e = map(Math.max(0, Math.min(end, before.length)), "end");
    return [s, Math.max(s, e)];
  };
}

// ---- random text ----

/** The project's seeded PRNG (mulberry32), so a failure reproduces. */
function rng(seed: number): () => number {
  return createRng(seed).next;
}

const PIECES = [
  "a", "b", "Z", " ", ".", "\n", "lorem ", "0", // ASCII
  "é", "ß", "ü", "\u0080", "\u07ff", // 2 bytes
  "中", "日本", "語", "\u0800", "\uffff", "\ufeff", // 3 bytes
  "😀", "🚀", "👍🏽", "\u{10000}", "\u{10ffff}", // surrogate pairs, 4 bytes
  "\ud83d", "\ude00", "\udbff", "\udc00", "\ud800\ud800", "\ude00\ud83d", // lone surrogates
];
const ASCII = PIECES.slice(0, 8);

function randomText(r: () => number, pieces: readonly string[], max: number): string {
  let out = "";
  const n = Math.floor(r() * max);
  for (let i = 0; i < n; i++) out += pieces[Math.floor(r() * pieces.length)]!;
  return out;
}

const SPECIAL = [Number.NaN, Infinity, -Infinity, -0, 0.5, 1.5, -1.5, 2 ** 53, 1e300, -1];

/** Offsets worth trying on `text`: every integer from -2 to past its UTF-8 length, and odd values. */
function offsetsOf(text: string): number[] {
  const top = Buffer.byteLength(text, "utf8") + 3;
  const out: number[] = [...SPECIAL];
  for (let n = -2; n <= top; n++) out.push(n, n + 0.25);
  return out;
}

const UNITS: OffsetUnit[] = ["utf16", "codepoints", "utf8"];
const UNIT_LISTS: OffsetUnit[][] = [["utf16"], ["codepoints"], ["utf8"], ["codepoints", "utf16"], ["utf8", "utf16", "codepoints"], ["utf16", "codepoints", "utf8"]];

/** Texts to interleave: more than the index cache holds, plus copies equal in content but built apart. */
function textPool(seed: number): string[] {
  const r = rng(seed);
  const pool = ["", "😀", "\ud83d", "é", "abc"];
  for (let i = 0; i < 6; i++) pool.push(randomText(r, PIECES, 40));
  for (let i = 0; i < 2; i++) pool.push(randomText(r, ASCII, 30));
  pool.push([...pool[6]!].join("")); // same content, another string
  return pool;
}

test("toUtf16 and fromUtf16 give what the per-call scans gave, in every unit, at every offset (in range, out of range, mid-character, not an integer)", (t) => {
  for (const seed of [1, 2, 3]) {
    const pool = textPool(seed);
    const r = rng(seed * 7919);
    let checked = 0;
    for (let round = 0; round < 40; round++) {
      const text = pool[Math.floor(r() * pool.length)]!;
      for (const unit of UNITS) {
        for (const n of offsetsOf(text)) {
          const got = toUtf16(text, n, unit);
          const want = refToUtf16(text, n, unit);
          if (!Object.is(got, want)) t.fail(`toUtf16(${JSON.stringify(text)}, ${n}, ${unit}): ${got}, want ${want}`);
          const back = fromUtf16(text, n, unit);
          const wantBack = refFromUtf16(text, n, unit);
          if (!Object.is(back, wantBack)) t.fail(`fromUtf16(${JSON.stringify(text)}, ${n}, ${unit}): ${back}, want ${wantBack}`);
          checked++;
        }
      }
    }
    t.true(checked > 1000);
  }
});

test("unitOfQuote and unitOfRange choose what the per-call scans chose (UTF-8 offsets inside a character never fit)", (t) => {
  const pool = textPool(11);
  const r = rng(12);
  let placed = 0;
  let unplaced = 0;
  for (let round = 0; round < 4000; round++) {
    const text = pool[Math.floor(r() * pool.length)]!;
    const top = Buffer.byteLength(text, "utf8") + 2;
    const pick = () => (r() < 0.05 ? SPECIAL[Math.floor(r() * SPECIAL.length)]! : Math.floor(r() * (top + 3)) - 1);
    const start = pick();
    const end = r() < 0.8 ? Math.max(start, pick()) : pick();
    const units = UNIT_LISTS[Math.floor(r() * UNIT_LISTS.length)]!;
    // a quoted text and an expected substring: the range's slice in some unit, or a random piece
    const u = UNITS[Math.floor(r() * UNITS.length)]!;
    const slice = text.slice(refToUtf16(text, start, u), refToUtf16(text, end, u));
    const quoted = r() < 0.7 ? slice : randomText(r, PIECES, 3);
    const expected = r() < 0.3 ? undefined : r() < 0.6 ? slice.slice(0, Math.floor(r() * (slice.length + 1))) : randomText(r, PIECES, 2);
    const got = [unitOfQuote(text, start, end, quoted, units), unitOfRange(text, start, end, units, expected)];
    const want = [refUnitOfQuote(text, start, end, quoted, units), refUnitOfRange(text, start, end, units, expected)];
    if (got[0] !== want[0] || got[1] !== want[1]) t.fail(`${JSON.stringify({ text, start, end, quoted, units, expected })}: ${String(got)}, want ${String(want)}`);
    if (want[1] === undefined) unplaced++;
    else placed++;
  }
  t.true(placed > 500 && unplaced > 500, `${placed} placed, ${unplaced} not`);
  // offsets inside a multi-byte character do not fit in UTF-8, whatever text was indexed before
  t.is(unitOfRange("Zürich", 1, 2, ["utf8"]), undefined);
  t.is(unitOfRange("日本", 0, 3, ["utf8"]), "utf8");
  t.is(unitOfRange("日本", 0, 4, ["utf8"]), undefined);
  t.is(unitOfRange("😀x", 0, 2, ["utf8", "codepoints"]), "codepoints");
  t.is(unitOfRange("😀x", 1, 2, ["codepoints", "utf16"]), "codepoints", "code point 1 is x");
  t.is(unitOfRange("😀x", 1, 2, ["utf16"]), "utf16", "UTF-16 index 1 splits the pair but is an index all the same");
});

test("long texts, indexed lazily as far as offsets reach: conversions in random order and units agree with the scans", (t) => {
  const r = rng(99);
  const kinds = [
    () => randomText(r, PIECES, 6000),
    () => "x".repeat(3000 + Math.floor(r() * 100)) + randomText(r, PIECES, 3000), // a long ASCII head, then mixed
    () => randomText(r, ASCII, 4000),
    () => randomText(r, PIECES, 3000) + "y".repeat(5000), // mixed, then a long ASCII tail
  ];
  for (let round = 0; round < 12; round++) {
    const text = kinds[round % kinds.length]!() + String(round); // a text not indexed before
    const other = randomText(r, PIECES, 3000) + String(round); // alternated with, as a redaction's original and copy are
    const cps = [...text].length;
    const bytes = Buffer.byteLength(text, "utf8");
    // a first query near the start, near the end or past it (NaN, infinite), then the rest anywhere
    const first = [0.01, 0.99, Number.NaN, Infinity, 1e300, 0.5][round % 6]!;
    for (let i = 0; i < 200; i++) {
      const near = i === 0 ? first : r();
      const unit = i === 0 ? UNITS[round % 3]! : UNITS[Math.floor(r() * UNITS.length)]!;
      const top = unit === "utf8" ? bytes : unit === "codepoints" ? cps : text.length;
      const n = near > 1 || Number.isNaN(near) ? near : Math.floor(near * (top + 3)) - 1;
      const u = Math.floor(r() * (text.length + 2));
      if (toUtf16(text, n, unit) !== refToUtf16(text, n, unit)) t.fail(`toUtf16 round ${round}, ${n} ${unit}`);
      if (fromUtf16(text, u, unit) !== refFromUtf16(text, u, unit)) t.fail(`fromUtf16 round ${round}, ${u} ${unit}`);
      const o = Math.floor(r() * (other.length + 2));
      if (fromUtf16(other, o, unit) !== refFromUtf16(other, o, unit)) t.fail(`fromUtf16 other round ${round}, ${o} ${unit}`);
    }
    t.pass();
  }
});

test("rangeMapper maps every range as the linear scan of its runs did", (t) => {
  const r = rng(5);
  const labels = ["[REDACTED:email]", "[REDACTED:phone]", "[REDACTED:x]"];
  let mapped = 0;
  for (let round = 0; round < 400; round++) {
    // an original with values to redact, and its redacted copy (sometimes a copy that does not line up)
    const parts: [string, boolean][] = [];
    const count = Math.floor(r() * 8);
    for (let i = 0; i < count; i++) parts.push([randomText(r, r() < 0.5 ? ASCII : PIECES, 6), r() < 0.4]);
    const before = parts.map(([s]) => s).join("");
    let after = parts.map(([s, redact]) => (redact && s !== "" ? labels[Math.floor(r() * labels.length)]! : s)).join("");
    if (r() < 0.1) after = after.slice(1);
    const got = rangeMapper(before, after);
    const want = refRangeMapper(before, after);
    t.is(got === undefined, want === undefined, JSON.stringify({ before, after }));
    if (!got || !want) continue;
    for (let s = -1; s <= before.length + 1; s++) {
      for (let e = -1; e <= before.length + 1; e++) {
        const [gs, ge] = got(s, e);
        const [ws, we] = want(s, e);
        if (gs !== ws || ge !== we) t.fail(`${JSON.stringify({ before, after, s, e })}: [${gs}, ${ge}], want [${ws}, ${we}]`);
        mapped++;
      }
    }
  }
  t.true(mapped > 10_000, `${mapped} ranges mapped`);
});

test("a growing text converts offsets as the string it holds after every append (appends cutting surrogate pairs in two, texts longer than a block)", (t) => {
  const r = rng(31);
  let checked = 0;
  for (let round = 0; round < 4; round++) {
    const whole = randomText(r, round === 3 ? ASCII : PIECES, 5000) + String(round);
    const grown = new GrowingText();
    for (let at = 0; at < whole.length; ) {
      // cut anywhere in UTF-16 units: sometimes between the halves of a pair
      const next = Math.min(whole.length, at + 1 + Math.floor(r() * 300));
      grown.append(whole.slice(at, next));
      at = next;
      const text = whole.slice(0, at);
      for (let q = 0; q < 4; q++) {
        const unit = UNITS[Math.floor(r() * UNITS.length)]!;
        const top = unit === "utf8" ? Buffer.byteLength(text, "utf8") : unit === "codepoints" ? [...text].length : text.length;
        // the first query indexes the text to its end (counting a high surrogate there as a lone one)
        const n = q === 0 ? Infinity : Math.floor(r() * (top + 3)) - 1;
        if (toUtf16(grown, n, unit) !== refToUtf16(text, n, unit)) t.fail(`toUtf16 round ${round}, ${at} units, ${n} ${unit}`);
        const u = q === 0 ? text.length : Math.floor(r() * (text.length + 2));
        if (fromUtf16(grown, u, unit) !== refFromUtf16(text, u, unit)) t.fail(`fromUtf16 round ${round}, ${at} units, ${u} ${unit}`);
        const [s, e] = [Math.floor(r() * (text.length + 2)) - 1, Math.floor(r() * (text.length + 2))];
        if (grown.slice(s, e) !== text.slice(s, e)) t.fail(`slice round ${round}, ${at} units, ${s}..${e}`);
        checked++;
      }
    }
    t.is(grown.toString(), whole);
  }
  t.true(checked > 200, `${checked} checks`);
  // the low half of a pair arrives after its high half was counted alone
  const split = new GrowingText("a\ud83d");
  t.is(fromUtf16(split, 2, "utf8"), 4, "a lone high surrogate: 3 bytes");
  split.append("\ude00b");
  t.is(fromUtf16(split, 3, "utf8"), 5, "then one code point of 4 bytes with its low half");
  t.is(fromUtf16(split, 4, "codepoints"), 3);
  t.is(toUtf16(split, 5, "utf8"), 3);
});

test("a growing text slices as a string does (negative, missing, out of range, not integers)", (t) => {
  const text = "héllo 😀 ".repeat(1500); // longer than a block
  const grown = new GrowingText();
  for (let i = 0; i < text.length; i += 1000) grown.append(text.slice(i, i + 1000));
  t.is(grown.length, text.length);
  const args: (number | undefined)[] = [undefined, 0, 3, -3, 4095, 4096, 4097, 8200, text.length, text.length + 5, -text.length - 5, 2.7, -2.7, Number.NaN, Infinity, -Infinity];
  for (const s of args) for (const e of args) t.is(grown.slice(s, e), text.slice(s, e), `slice(${s}, ${e})`);
  t.is(grown.indexOf("😀 hé"), text.indexOf("😀 hé"));
});

test("kept runs recorded as a redacted copy is written, a piece at a time, map every range as rangeMapper finds them in the whole texts", (t) => {
  const r = rng(77);
  const KEPT = ["a", "b", " ", "é", "😀", "中"];
  const VALUES = ["0", "1", "42"];
  const labels = ["[REDACTED:email]", "[REDACTED:x]"];
  let mapped = 0;
  for (let round = 0; round < 300; round++) {
    // kept text without digits, values of digits: rangeMapper finds every kept piece where it was
    let before = "";
    let after = "";
    const runs = new KeptRuns();
    for (let i = Math.floor(r() * 8); i > 0; i--) {
      if (r() < 0.4) {
        before += randomText(r, VALUES, 4) || "7";
        if (!/\]$/.test(after) || r() < 0.5) after += labels[Math.floor(r() * labels.length)]!;
        continue;
      }
      const kept = randomText(r, KEPT, 8);
      // written in pieces, as releases write it
      for (let at = 0; at < kept.length; ) {
        const next = Math.min(kept.length, at + 1 + Math.floor(r() * 4));
        runs.keep(before.length, after.length, next - at);
        before += kept.slice(at, next);
        after += kept.slice(at, next);
        at = next;
      }
    }
    const got = runs.mapper(before.length, after.length);
    const want = rangeMapper(before, after);
    if (!want) {
      t.fail(JSON.stringify({ before, after }));
      continue;
    }
    // every range within the original, as a placed quote's (rangeMapper leaves others as they are when
    // nothing was redacted)
    for (let s = 0; s <= before.length; s++) {
      for (let e = s; e <= before.length; e++) {
        const [gs, ge] = got(s, e);
        const [ws, we] = want(s, e);
        if (gs !== ws || ge !== we) t.fail(`${JSON.stringify({ before, after, s, e })}: [${gs}, ${ge}], want [${ws}, ${we}]`);
        mapped++;
      }
    }
  }
  t.true(mapped > 10_000, `${mapped} ranges mapped`);
});
