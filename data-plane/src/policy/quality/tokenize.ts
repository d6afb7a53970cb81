// Word tokenisation shared by the lexical quality scorers: lower-cased Unicode letter/digit runs.
import { isAscii } from "../is-ascii.js";

const WORD_RE = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu;

export function words(text: string): string[] {
  return text.toLowerCase().match(WORD_RE) ?? [];
}

/** The iterator of scanWords: one module-level regex, so it must not be nested (scan one text at a time). */
const SCAN_RE = new RegExp(WORD_RE.source, WORD_RE.flags);

/** Characters lower-cased and scanned at a time: a caller that stops early does not lower-case the rest. */
const CHUNK = 1024;

/**
 * Calls `visit` with the words of `text` in order — the same words as words(text) — until it returns
 * true, without building the array (a caller that can stop early does not tokenise the rest). The text
 * is taken in chunks of about CHUNK characters cut after a whitespace character (never inside a word),
 * each lower-cased on its own: lower-casing and the ASCII check of a whole 8 KB prompt cost more than
 * the few hundred characters a relevant answer needs.
 */
export function scanWords(text: string, visit: (w: string) => boolean): void {
  let from = 0;
  while (from < text.length) {
    let to = from + CHUNK;
    if (to >= text.length) to = text.length;
    else {
      // cut after whitespace (words never contain it); a chunk without any runs on to the next
      let cut = to;
      while (cut > from && !isSpace(text.charCodeAt(cut - 1))) cut--;
      if (cut > from) to = cut;
      else {
        while (to < text.length && !isSpace(text.charCodeAt(to - 1))) to++;
      }
    }
    if (scanChunk(text.slice(from, to).toLowerCase(), visit)) return;
    from = to;
  }
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** scanWords on one lower-cased chunk; true when `visit` asked to stop. */
function scanChunk(lower: string, visit: (w: string) => boolean): boolean {
  if (isAscii(lower)) return scanAsciiWords(lower, visit);
  SCAN_RE.lastIndex = 0;
  try {
    for (let m = SCAN_RE.exec(lower); m !== null; m = SCAN_RE.exec(lower)) if (visit(m[0])) return true;
  } finally {
    SCAN_RE.lastIndex = 0;
  }
  return false;
}

const isAlnum = (c: number) => (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39); // a-z 0-9 (lower-cased text)
const isLetter = (c: number) => c >= 0x61 && c <= 0x7a;

/**
 * WORD_RE on lower-cased ASCII text, by hand: a run of letters and digits, optionally followed by an
 * apostrophe and a run of letters. Written out because RegExp#exec allocates a match array per word,
 * and a prompt has hundreds of words (the equivalence with the regex is tested in fast-paths.test.ts).
 */
function scanAsciiWords(lower: string, visit: (w: string) => boolean): boolean {
  const n = lower.length;
  let i = 0;
  while (i < n) {
    while (i < n && !isAlnum(lower.charCodeAt(i))) i++;
    if (i >= n) return false;
    const start = i;
    while (i < n && isAlnum(lower.charCodeAt(i))) i++;
    if (i + 1 < n && lower.charCodeAt(i) === 0x27 /* ' */ && isLetter(lower.charCodeAt(i + 1))) {
      i += 2;
      while (i < n && isLetter(lower.charCodeAt(i))) i++;
    }
    if (visit(lower.slice(start, i))) return true;
  }
  return false;
}
