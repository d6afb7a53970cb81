// Offsets into text in the units providers count in: UTF-16 code units (JavaScript strings, our
// redaction), Unicode code points (Cohere, whose API is Python; OpenAI url_citation annotations),
// UTF-8 bytes (Gemini grounding segments and citation sources).
//
// Converting an offset is O(log n) over an index of the text's code points, built lazily as far as
// offsets reach (O(n) in all, once) and kept for the last few texts: an answer with many quotes
// converts offsets into the same two texts (the original and its redacted copy) again and again. A
// lone surrogate counts as one code point and three UTF-8 bytes (what Buffer.byteLength counts:
// U+FFFD).
// A streamed answer's text grows between quotes (each string of it would be a new text, indexed from
// scratch): as a GrowingText it keeps one index for as long as it lives, extended as it grows, since
// the offsets of the text already indexed never change.
import type { GrowingText } from "./growing-text.js";

export type OffsetUnit = "utf16" | "codepoints" | "utf8";

/** A text offsets point into: a string, or a text that grows at its end (a streamed channel's). */
export type OffsetText = string | GrowingText;

/** The first code points of a text, indexed: where each starts in UTF-16 units and in UTF-8 bytes. */
export interface OffsetIndex {
  /** The text indexed (or another string equal to it). */
  text: OffsetText;
  /** Its length when last used: a GrowingText that grew since is indexed further (see reopen). */
  length: number;
  /** Code points indexed so far: entries 0..count are set (entry k: where code point k starts). */
  count: number;
  /** Whether the index reaches the text's end (entry `count` is then the end: its length, its UTF-8 size). */
  complete: boolean;
  /**
   * `u16[k]` / `u8[k]` for k in 0..count, or null while every code point indexed is ASCII (every unit
   * then counts alike: entry k is k). Grown as the index is.
   */
  u16: Int32Array | null;
  u8: Int32Array | null;
}

/** Indexes of the most recently used strings, most recent first. */
const recent: OffsetIndex[] = [];
const RECENT = 4;

function newIndex(text: OffsetText): OffsetIndex {
  return { text, length: text.length, count: 0, complete: text.length === 0, u16: null, u8: null };
}

function indexOf(text: OffsetText): OffsetIndex {
  if (typeof text !== "string") return growingIndexOf(text);
  for (let i = 0; i < recent.length; i++) {
    const hit = recent[i]!;
    if (hit.text !== text) continue;
    hit.text = text; // equal text in another string: keep this one, which the next calls compare by identity
    if (i > 0) {
      recent.splice(i, 1);
      recent.unshift(hit);
    }
    return hit;
  }
  const index = newIndex(text);
  recent.unshift(index);
  if (recent.length > RECENT) recent.length = RECENT;
  return index;
}

/** A growing text's index, kept with it (made on first use). */
function growingIndexOf(text: GrowingText): OffsetIndex {
  const index = text.offsets;
  if (index === undefined) return (text.offsets = newIndex(text));
  if (index.length !== text.length) reopen(index, text.length);
  return index;
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;

/**
 * The text grew to `length`: indexing goes on from where it stopped, but a lone high surrogate that
 * ended the text is indexed again (its low half may have arrived: one code point of 4 UTF-8 bytes).
 */
function reopen(index: OffsetIndex, length: number): void {
  const old = index.length;
  index.length = length;
  index.complete = false;
  const { u16, count } = index;
  if (u16 !== null && count > 0 && u16[count] === old && u16[count - 1] === old - 1 && isHighSurrogate(index.text.slice(old - 1, old).charCodeAt(0))) index.count--;
}

/** What an entry of the index is counted in (by `extend`): code points, UTF-16 units, UTF-8 bytes. */
type Dim = "codepoints" | "utf16" | "utf8";

/** Room for entries 0..entries (at least), doubling (past the end of a text that may grow: copied as seldom). */
function reserve(index: OffsetIndex, entries: number): void {
  const have = index.u16!.length;
  if (have > entries) return;
  const most = typeof index.text === "string" ? index.length + 1 : Infinity;
  const size = Math.min(most, Math.max(entries + 1, have * 2));
  const u16 = new Int32Array(size);
  const u8 = new Int32Array(size);
  u16.set(index.u16!.subarray(0, index.count + 1));
  u8.set(index.u8!.subarray(0, index.count + 1));
  index.u16 = u16;
  index.u8 = u8;
}

/**
 * Indexes further code points of the text until the last entry counts at least `target` in `dim`, or
 * the text ends (a target past the end, or NaN, indexes it all).
 */
function extend(index: OffsetIndex, dim: Dim, target: number): void {
  const { text } = index;
  if (typeof text === "string") {
    if (!index.complete) extendOver(index, dim, target, text, 0, index.length);
    return;
  }
  // a growing text: read a slice at a time, each as far as the target may lie
  while (!index.complete && !(reach(index, dim) >= target)) {
    const from = index.u16 === null ? index.count : index.u16[index.count]!;
    const stop = stopFor(index, dim, target, from);
    extendOver(index, dim, target, text.slice(from, Math.min(index.length, stop + 1)), from, stop);
  }
}

/** What the last entry of the index counts in `dim`. */
function reach(index: OffsetIndex, dim: Dim): number {
  const k = index.count;
  if (dim === "codepoints" || index.u16 === null) return k;
  return dim === "utf16" ? index.u16[k]! : index.u8![k]!;
}

/** Units of a growing text sliced at least at once for indexing (small steps would slice too often). */
const WINDOW = 1024;

/**
 * Where the next step over a growing text stops (it indexes the code points starting before; the index
 * ends at unit `from`): where the target lies at the latest, each code point being one or two units and
 * at least as many UTF-8 bytes as units.
 */
function stopFor(index: OffsetIndex, dim: Dim, target: number, from: number): number {
  const bound = dim === "codepoints" ? 2 * (Math.ceil(target) - index.count) : Math.ceil(target) - from;
  return Number.isNaN(bound) ? index.length : Math.min(index.length, from + Math.max(WINDOW, bound + 1));
}

/**
 * Indexes the code points that start before unit `stop`, until the target is reached. `text` holds the
 * units from `base` on, and one past `stop` (the low half of a pair) when the text goes on.
 */
function extendOver(index: OffsetIndex, dim: Dim, target: number, text: string, base: number, stop: number): void {
  const { length } = index;
  // the last entry to index is at most ceil(target) (entry k counts at least k in every unit), at most
  // the text's length; a NaN target indexes it all
  const needed = target >= 0 ? Math.min(length, Math.ceil(target) + 1) : target < 0 ? 1 : length;
  let k = index.count;
  if (index.u16 === null) {
    // ASCII so far: entry k is k in every unit
    while (k < stop && !(k >= target) && text.charCodeAt(k - base) < 0x80) k++;
    index.count = k;
    if (k === length) index.complete = true;
    if (k === stop || k >= target) return;
    // the first non-ASCII code point: entries 0..k as they are, from here on in tables
    const size = Math.min(length + 1, Math.max(needed + 1, k + 1, 64));
    index.u16 = new Int32Array(size);
    index.u8 = new Int32Array(size);
    for (let j = 0; j <= k; j++) index.u16[j] = index.u8[j] = j;
  }
  reserve(index, needed);
  const u16 = index.u16!;
  const u8 = index.u8!;
  let i = u16[k]!;
  let bytes = u8[k]!;
  while (i < stop) {
    const at = dim === "codepoints" ? k : dim === "utf16" ? i : bytes;
    if (at >= target) break;
    const c = text.charCodeAt(i - base);
    if (c < 0x80) {
      bytes += 1;
      i += 1;
    } else if (c < 0x800) {
      bytes += 2;
      i += 1;
    } else if (isHighSurrogate(c) && i + 1 < length && (text.charCodeAt(i + 1 - base) & 0xfc00) === 0xdc00) {
      bytes += 4; // a surrogate pair
      i += 2;
    } else {
      bytes += 3; // the rest of the BMP, and a lone surrogate (encoded as U+FFFD)
      i += 1;
    }
    k++;
    u16[k] = i;
    u8[k] = bytes;
  }
  index.count = k;
  if (i >= length) index.complete = true;
}

/** The first code point k (0..count) whose offset counted in `unit` is at least n, or the last one when none is (n past the end, NaN). */
function firstAtLeast(index: OffsetIndex, n: number, codepoints: boolean): number {
  extend(index, codepoints ? "codepoints" : "utf8", n);
  const { count } = index;
  if (codepoints || index.u8 === null) {
    if (n <= 0) return 0;
    return n <= count ? Math.ceil(n) : count;
  }
  const u8 = index.u8;
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (u8[mid]! >= n) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The UTF-16 index of offset `n` counted in `unit` over `text` (clamped to the text). */
export function toUtf16(text: OffsetText, n: number, unit: OffsetUnit): number {
  if (unit === "utf16") return Math.max(0, Math.min(n, text.length));
  const index = indexOf(text);
  const k = firstAtLeast(index, n, unit === "codepoints");
  return index.u16 === null ? k : index.u16[k]!;
}

/** Offset `u` (a UTF-16 index into `text`) counted in `unit`. */
export function fromUtf16(text: OffsetText, u: number, unit: OffsetUnit): number {
  const clamped = Math.max(0, Math.min(u, text.length));
  const h = Number.isNaN(clamped) ? 0 : Math.trunc(clamped); // where text.slice(0, clamped) ends
  if (unit === "utf16") return h;
  const index = indexOf(text);
  extend(index, "utf16", h);
  const { u16, u8 } = index;
  if (u16 === null || u8 === null) return h;
  // the last code point starting at or before h
  let lo = 0;
  let hi = index.count;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (u16[mid]! <= h) lo = mid;
    else hi = mid - 1;
  }
  const inside = u16[lo] !== h; // h splits a surrogate pair: the head ends in a lone high surrogate
  if (unit === "utf8") return u8[lo]! + (inside ? 3 : 0);
  return lo + (inside ? 1 : 0);
}

/**
 * The unit in which [start, end) of `text` is `quoted` (UTF-16 tried first, then the others), or
 * undefined when no unit makes the range quote it: the quote then cannot be placed.
 */
export function unitOfQuote(text: OffsetText, start: number, end: number, quoted: string, units: readonly OffsetUnit[]): OffsetUnit | undefined {
  return units.find((u) => text.slice(toUtf16(text, start, u), toUtf16(text, end, u)) === quoted);
}

/** Whether offset `n` counted in `unit` lies within `text`, on a character boundary (never inside a UTF-8 sequence). */
function fits(text: OffsetText, n: number, unit: OffsetUnit): boolean {
  return fromUtf16(text, toUtf16(text, n, unit), unit) === n;
}

/**
 * For a quote that carries no text (offsets only): the first of `units` in which [start, end) lies
 * within `text`, preferring one whose slice contains `expected` (a string the range should hold,
 * such as the URL of an OpenAI url_citation) when the units disagree on it; undefined when the range
 * fits the text in no unit: the quote then cannot be placed.
 */
export function unitOfRange(text: OffsetText, start: number, end: number, units: readonly OffsetUnit[], expected?: string): OffsetUnit | undefined {
  const fitting = units.filter((u) => fits(text, start, u) && fits(text, end, u));
  if (expected) {
    const verified = fitting.find((u) => text.slice(toUtf16(text, start, u), toUtf16(text, end, u)).includes(expected));
    if (verified !== undefined) return verified;
  }
  return fitting[0];
}
