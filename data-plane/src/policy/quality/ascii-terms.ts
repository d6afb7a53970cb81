// The relevance scan of an ASCII prompt, without building a string per word.
//
// Why by hand: relevance is scored before a gated answer's last bytes leave, and the string form
// (lower-case a chunk, slice every word, stem it, keep it in a Set) allocated ~4.8 KB and took ~4.6 µs
// per call on the bench's 8 KB prompt; this form allocates ~1 KB (the answer's terms) in ~2.6 µs. Here the prompt's characters are read in place (lower-cased
// one by one), each word is hashed, and its stem is kept as a range of the prompt in reused typed
// arrays (an open-addressing table). Every hash hit is checked character by character, so the result
// is exactly the string form's (fast-paths.test.ts compares the two on random texts).
import { STOPWORDS, stem } from "./stopwords.js";

/** Not handled here: the caller falls back to the string form (a non-ASCII character, or two answer terms that share a hash). */
export const NOT_ASCII = -1;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const Y = 0x79;

/** FNV-1a over a string's char codes; the same value as the incremental hash of the same characters. */
export function hashTerm(s: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), FNV_PRIME);
  return h;
}

/** Stop words by hash (no two share one: checked at load). */
const STOP_BY_HASH = new Map<number, string>();
for (const w of STOPWORDS) {
  const h = hashTerm(w);
  if (STOP_BY_HASH.has(h)) throw new Error(`stop words "${w}" and "${STOP_BY_HASH.get(h)}" share a hash`);
  STOP_BY_HASH.set(h, w);
}

/** prompt[s, e), of hash h, is a stop word. */
function isStopWord(prompt: string, s: number, e: number, h: number): boolean {
  const w = STOP_BY_HASH.get(h);
  return w !== undefined && rangeEquals(prompt, s, e, w);
}

/**
 * The answer's content terms (its words of 2+ characters that are not stop words, stemmed) by hash, or
 * null when two of them share a hash (the caller then uses the string form).
 */
export function answerTermsByHash(answerWords: readonly string[]): Map<number, string> | null {
  const out = new Map<number, string>();
  for (const w of answerWords) {
    if (w.length < 2 || STOPWORDS.has(w)) continue;
    const t = stem(w);
    const h = hashTerm(t);
    const had = out.get(h);
    if (had !== undefined && had !== t) return null;
    out.set(h, t);
  }
  return out;
}

// The table of the prompt's distinct terms, reused by every call (scans do not nest: they are synchronous).
const SLOTS = 2048; // a power of two, at least 4 × the most terms a scan keeps
const slotTerm = new Int32Array(SLOTS); // term index + 1; 0 = empty
const termStart = new Int32Array(SLOTS / 4);
const termEnd = new Int32Array(SLOTS / 4); // the stem's end (exclusive) in the prompt
const termY = new Uint8Array(SLOTS / 4); // the stem ends with an added "y" (-ies → -y)
const termHash = new Int32Array(SLOTS / 4);
const termSlot = new Int32Array(SLOTS / 4);
/** Terms the last scan put in the table (cleared by the next). */
let lastAsked = 0;

const lower = (c: number) => (c >= 0x41 && c <= 0x5a ? c + 0x20 : c);
const isAlnum = (c: number) => (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39); // on a lower-cased code
const isLetter = (c: number) => c >= 0x61 && c <= 0x7a;

/** prompt[s, e) lower-cased equals `w` (ASCII). */
function rangeEquals(prompt: string, s: number, e: number, w: string): boolean {
  if (e - s !== w.length) return false;
  for (let i = 0; i < w.length; i++) if (lower(prompt.charCodeAt(s + i)) !== w.charCodeAt(i)) return false;
  return true;
}

/** The k-th character of the stem prompt[s, e) + ("y" when y = 1), lower-cased. */
const stemChar = (prompt: string, s: number, e: number, k: number) => (s + k < e ? lower(prompt.charCodeAt(s + k)) : Y);

/** Two stems (prompt ranges with their "y": "stor"+"y" of stories is "story") are the same text. */
function sameStem(prompt: string, s1: number, e1: number, y1: number, s2: number, e2: number, y2: number): boolean {
  const n = e1 - s1 + y1;
  if (n !== e2 - s2 + y2) return false;
  for (let k = 0; k < n; k++) if (stemChar(prompt, s1, e1, k) !== stemChar(prompt, s2, e2, k)) return false;
  return true;
}

/** The answer term of hash `h` is the stem prompt[s, e) (+ "y"). */
function answerHas(answer: ReadonlyMap<number, string>, h: number, prompt: string, s: number, e: number, y: number): boolean {
  const t = answer.get(h);
  if (t === undefined || t.length !== e - s + y) return false;
  if (y === 1 && t.charCodeAt(t.length - 1) !== Y) return false;
  for (let i = 0; i < e - s; i++) if (lower(prompt.charCodeAt(s + i)) !== t.charCodeAt(i)) return false;
  return true;
}

/**
 * The prompt's first `maxTerms` distinct content terms, counted until `saturation` of them are answer
 * terms: returns `shared * SCALE + asked` (SCALE = 2^16; `maxTerms` must be below it and at most
 * SLOTS / 4), or NOT_ASCII when a non-ASCII character comes before the scan ends. The same words,
 * stop words and stems as words(), STOPWORDS and stem() give on the lower-cased text.
 */
export function scanAsciiPromptTerms(prompt: string, answer: ReadonlyMap<number, string>, saturation: number, maxTerms: number): number {
  // The table is cleared of the previous scan's terms first (no try/finally on the hot loop).
  for (let t = 0; t < lastAsked; t++) slotTerm[termSlot[t]!] = 0;
  lastAsked = 0;
  let asked = 0;
  let shared = 0;
  {
    const n = prompt.length;
    let i = 0;
    while (i < n) {
      let c = prompt.charCodeAt(i);
      if (c >= 0x80) return NOT_ASCII;
      c = lower(c);
      if (!isAlnum(c)) {
        i++;
        continue;
      }
      // A word: letters and digits, then optionally an apostrophe and letters (tokenize.ts's WORD_RE).
      // Its hash is taken as it is read; the hashes of its last three prefixes are kept for the stem.
      const s = i;
      let h = FNV_OFFSET;
      let h1 = 0;
      let h2 = 0;
      let h3 = 0;
      let afterApostrophe = false; // past the apostrophe only letters continue the word
      while (i < n) {
        const d = prompt.charCodeAt(i);
        if (d >= 0x80) return NOT_ASCII;
        const l = lower(d);
        if (afterApostrophe ? !isLetter(l) : !isAlnum(l)) {
          // One apostrophe followed by a letter continues the word.
          if (afterApostrophe || l !== 0x27 || i + 1 >= n) break;
          const next = prompt.charCodeAt(i + 1);
          if (next >= 0x80) return NOT_ASCII;
          if (!isLetter(lower(next))) break;
          afterApostrophe = true;
        }
        h3 = h2;
        h2 = h1;
        h1 = h;
        h = Math.imul(h ^ l, FNV_PRIME);
        i++;
      }
      const e = i;
      const len = e - s;
      if (len < 2) continue;
      if (isStopWord(prompt, s, e, h)) continue;
      // stem() on the range: which characters it cuts, and whether it adds a "y" (stopwords.ts).
      let cut = 0;
      let y = 0;
      if (len > 4) {
        const last = lower(prompt.charCodeAt(e - 1));
        const p1 = lower(prompt.charCodeAt(e - 2));
        const p2 = lower(prompt.charCodeAt(e - 3));
        if (last === 0x67 /* g */) {
          if (len > 6 && p1 === 0x6e /* n */ && p2 === 0x69 /* i */) cut = 3;
        } else if (last === 0x64 /* d */) {
          if (len > 5 && p1 === 0x65 /* e */) cut = 2;
        } else if (last === 0x73 /* s */) {
          if (len > 5 && p1 === 0x65 /* e */ && p2 === 0x69 /* i */) {
            cut = 3;
            y = 1;
          } else if (len > 5 && p1 === 0x65 /* e */ && (p2 === 0x73 || p2 === 0x78 || p2 === 0x7a || ((p2 === 0x68 /* h */) && isChOrSh(lower(prompt.charCodeAt(e - 4)))))) {
            cut = 2;
          } else if (p1 !== 0x73) {
            cut = 1;
          }
        }
      }
      let th = cut === 0 ? h : cut === 1 ? h1 : cut === 2 ? h2 : h3;
      if (y === 1) th = Math.imul(th ^ Y, FNV_PRIME);
      const te = e - cut;
      // Seen already? (open addressing, linear probing; every hit is compared)
      let slot = th & (SLOTS - 1);
      let seen = false;
      for (let k = slotTerm[slot]!; k !== 0; slot = (slot + 1) & (SLOTS - 1), k = slotTerm[slot]!) {
        const t = k - 1;
        if (termHash[t] === th && sameStem(prompt, termStart[t]!, termEnd[t]!, termY[t]!, s, te, y)) {
          seen = true;
          break;
        }
      }
      if (seen) continue;
      termStart[asked] = s;
      termEnd[asked] = te;
      termY[asked] = y;
      termHash[asked] = th;
      termSlot[asked] = slot;
      slotTerm[slot] = ++asked;
      lastAsked = asked;
      if (answerHas(answer, th, prompt, s, te, y) && ++shared >= saturation) break;
      if (asked >= maxTerms) break;
    }
  }
  return shared * SCALE + asked;
}

export const SCALE = 0x10000;
export const MAX_SCAN_TERMS = SLOTS / 4;

const isChOrSh = (c: number) => c === 0x63 /* c */ || c === 0x73; /* s */
