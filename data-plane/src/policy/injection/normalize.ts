// Text normalisation for the injection scorer: NFKC, invisible/bidi characters removed, look-alike
// letters next to Latin letters folded, lower-cased; with a map from each output index back to the input.

import { CONFUSABLES } from "./confusables.js";
import { isAscii } from "../is-ascii.js";

export interface NormalizedText {
  /** Normalised, lower-cased text that the features are matched against. */
  text: string;
  /** map[i] = index in the original text of normalised char i; null when the mapping is the identity. */
  map: Int32Array | null;
  /** Suspicious invisible characters removed (zero-width space, bidi overrides, word joiners, tag characters…). */
  invisibleCount: number;
  /** Characters changed by look-alike folding (mixed-script spoofing evidence). */
  foldedCount: number;
  /** ASCII text smuggled in Unicode tag characters (U+E0020–U+E007E), decoded; "" if none. */
  tagPayload: string;
  /** The input text. */
  original: string;
}


/** Zero-width, BOM, soft hyphen, word joiners, bidi embeddings/overrides/isolates, Mongolian vowel separator. */
export function isInvisible(cp: number): boolean {
  return (
    (cp >= 0x200b && cp <= 0x200f) ||
    (cp >= 0x202a && cp <= 0x202e) ||
    (cp >= 0x2060 && cp <= 0x2064) ||
    (cp >= 0x2066 && cp <= 0x2069) ||
    cp === 0xfeff ||
    cp === 0x00ad ||
    cp === 0x180e ||
    cp === 0x034f ||
    (cp >= 0xfe00 && cp <= 0xfe0f) ||
    (cp >= 0xe0000 && cp <= 0xe007f)
  );
}

/**
 * Invisible characters that are evidence of smuggling. ZWJ/ZWNJ, variation selectors, LRM/RLM and a
 * leading BOM are removed too but not counted: emoji sequences and RTL scripts use them legitimately.
 */
export function isSuspiciousInvisible(cp: number, index: number): boolean {
  return (
    cp === 0x200b ||
    (cp >= 0x202a && cp <= 0x202e) ||
    (cp >= 0x2060 && cp <= 0x2064) ||
    (cp >= 0x2066 && cp <= 0x2069) ||
    (cp === 0xfeff && index > 0) ||
    cp === 0x180e ||
    (cp >= 0xe0000 && cp <= 0xe007f)
  );
}

/**
 * True for code points that may have an NFKC compatibility decomposition worth applying
 * (fullwidth and halfwidth forms, mathematical alphanumerics, ligatures, letter-like symbols,
 * super/subscripts, enclosed alphanumerics, compatibility ideographs, special spaces…). Everything
 * else (accented letters, Cyrillic, CJK, Hangul…) is NFKC-stable and skips the costly call.
 */
export function mayNeedNfkc(cp: number): boolean {
  if (cp < 0x2000) {
    return (cp >= 0xa0 && cp <= 0xbf) || (cp >= 0x132 && cp <= 0x17f) || (cp >= 0x1c4 && cp <= 0x1f3) || (cp >= 0x2b0 && cp <= 0x2ff) ||
      (cp >= 0x37a && cp <= 0x385) || (cp >= 0x3d0 && cp <= 0x3f9) || (cp >= 0x1d00 && cp <= 0x1dbf) || (cp >= 0x1e9a && cp <= 0x1e9b);
  }
  if (cp <= 0x24ff) return true; // punctuation spaces, super/subscripts, letter-like, number forms, enclosed
  if (cp < 0xf900) return (cp >= 0x2c7c && cp <= 0x2c7d) || (cp >= 0x2f00 && cp <= 0x2fdf) || cp === 0x3000 || (cp >= 0x3131 && cp <= 0x33ff) || (cp >= 0xa69c && cp <= 0xa7ff) || (cp >= 0xab5c && cp <= 0xab5f);
  if (cp <= 0xffef) return true; // CJK compatibility, presentation forms, half/fullwidth
  return (cp >= 0x1d400 && cp <= 0x1d7ff) || (cp >= 0x1ee00 && cp <= 0x1eeff) || (cp >= 0x1f100 && cp <= 0x1f1ff) || (cp >= 0x2f800 && cp <= 0x2fa1f) || (cp >= 0x10780 && cp <= 0x107bf) || (cp >= 0x1e030 && cp <= 0x1e08f);
}

/** Per BMP code unit: 0 kept as is, 1 needs individual handling (invisible, NFKC, surrogate), 2 look-alike letter. */
// Every CONFUSABLES key is a single BMP code unit that folds to one letter, so runs keep their length.
const SPECIAL = new Uint8Array(0x10000);
for (let cu = 0x80; cu < 0x10000; cu++) {
  if ((cu >= 0xd800 && cu <= 0xdfff) || isInvisible(cu) || mayNeedNfkc(cu)) SPECIAL[cu] = 1;
  else if (CONFUSABLES.has(cu)) SPECIAL[cu] = 2;
}

function isAsciiLetter(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
}

/** End (exclusive) of the run of look-alike letters starting at i. */
function lookAlikeRunEnd(src: string, i: number): number {
  let j = i + 1;
  while (j < src.length && SPECIAL[src.charCodeAt(j)] === 2) j++;
  return j;
}

/** A run of look-alikes is spoofing when it touches a Latin letter on either side. */
function isSpoof(src: string, i: number, j: number): boolean {
  return (i > 0 && isAsciiLetter(src.charCodeAt(i - 1))) || (j < src.length && isAsciiLetter(src.charCodeAt(j)));
}

/** The look-alike letters src[i..j) folded to Latin (each is one code unit and folds to one letter). */
function foldRun(src: string, i: number, j: number): string {
  let out = "";
  for (let k = i; k < j; k++) out += CONFUSABLES.get(src.charCodeAt(k))!;
  return out;
}

/** Normalises `input` for matching. ASCII input takes a fast path (lower-casing only). */
export function normalizeForScan(input: string): NormalizedText {
  if (isAscii(input)) {
    return { text: input.toLowerCase(), map: null, invisibleCount: 0, foldedCount: 0, tagPayload: "", original: input };
  }
  // Lower-case once up front when that keeps every index (true for nearly all text).
  const lowerAll = input.toLowerCase();
  const src = lowerAll.length === input.length ? lowerAll : input;
  const lowerPieces = src !== lowerAll;
  const parts: string[] = [];
  let map = new Int32Array(input.length + 16);
  let len = 0;
  const reserve = (extra: number): void => {
    if (len + extra <= map.length) return;
    const bigger = new Int32Array(Math.max(map.length * 2, len + extra));
    bigger.set(map.subarray(0, len));
    map = bigger;
  };
  let invisibleCount = 0;
  let foldedCount = 0;
  let tagPayload = "";
  const n = src.length;
  for (let i = 0; i < n; ) {
    const kind = SPECIAL[src.charCodeAt(i)];
    if (kind === 0) {
      // A run of characters kept as they are (ASCII, accented letters, Cyrillic words, CJK, Hangul…): one slice.
      let j = i + 1;
      while (j < n) {
        const k = SPECIAL[src.charCodeAt(j)];
        if (k === 0) {
          j++;
          continue;
        }
        if (k !== 2) break;
        const end = lookAlikeRunEnd(src, j);
        if (isSpoof(src, j, end)) break;
        j = end; // look-alikes inside a non-Latin word stay as they are
      }
      parts.push(src.slice(i, j));
      reserve(j - i);
      for (let k = i; k < j; k++) map[len++] = k;
      i = j;
      continue;
    }
    if (kind === 2) {
      // A run of look-alike letters is folded only when it touches a Latin letter ("bураѕѕ", "іgnоrе"):
      // that is the spoofing pattern, while Cyrillic or Greek words ("правила") stay intact.
      const j = lookAlikeRunEnd(src, i);
      const spoof = isSpoof(src, i, j);
      parts.push(spoof ? foldRun(src, i, j) : src.slice(i, j));
      if (spoof) foldedCount += j - i;
      reserve(j - i);
      for (let k = i; k < j; k++) map[len++] = k;
      i = j;
      continue;
    }
    const cp = src.codePointAt(i)!;
    const width = cp > 0xffff ? 2 : 1;
    if (isInvisible(cp)) {
      if (isSuspiciousInvisible(cp, i)) invisibleCount++;
      if (cp >= 0xe0020 && cp <= 0xe007e) tagPayload += String.fromCharCode(cp - 0xe0000);
      i += width;
      continue;
    }
    let piece: string;
    if (mayNeedNfkc(cp)) {
      piece = String.fromCodePoint(cp).normalize("NFKC").toLowerCase();
      // NFKC can itself produce a look-alike (e.g. a compatibility Greek letter): fold once more.
      if (piece.length === 1) piece = CONFUSABLES.get(piece.charCodeAt(0)) ?? piece;
    } else {
      piece = width === 2 ? src.slice(i, i + 2) : src[i]!;
      if (lowerPieces) piece = piece.toLowerCase();
    }
    parts.push(piece);
    reserve(piece.length);
    for (let k = 0; k < piece.length; k++) map[len++] = i;
    i += width;
  }
  return { text: parts.join(""), map: map.subarray(0, len), invisibleCount, foldedCount, tagPayload, original: input };
}

/** Maps a [start, end) range of the normalised text back to the original text. */
export function mapRange(n: NormalizedText, start: number, end: number, originalLength: number): [number, number] {
  if (n.map === null) return [start, end];
  const s = n.map[start] ?? originalLength;
  let e = originalLength;
  if (end > 0 && end <= n.map.length) {
    const last = n.map[end - 1]!;
    e = last + (n.original.codePointAt(last)! > 0xffff ? 2 : 1);
  }
  return [s, e < s ? s : e];
}
