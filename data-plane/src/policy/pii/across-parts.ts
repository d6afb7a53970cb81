// PII split across two text parts. A prompt's parts (content parts, messages) are joined with "\n\n"
// for scanning, so `536-22` in one part and `-8726` in the next, or `jane.doe@exam` + `ple.com`, were
// never seen whole — while the model reads the parts one after the other and puts the value together
// (a one-step bypass of every PII block policy). Each junction where the value could continue is
// scanned once more with the parts' ends joined directly; what is found across it is added to the
// findings of the "\n\n" form, with offsets into that form (a finding then covers the "\n\n" between
// its pieces, which redaction and trace masking cut per part). Junctions are few (one per part) and
// the windows short, so this costs a few microseconds for an ordinary request; junctions where no
// value can continue (no digit or '@' near it, no word running across it) are not scanned at all.
import { CONTEXT_WINDOW } from "./context.js";
import { detectPii } from "./detect-pii.js";
import { resolveOverlaps } from "./resolve-overlaps.js";
import type { PiiFinding } from "./types.js";

/** Characters of each part taken on each side of a junction: the context window and a long value (an API key, an IBAN with spaces). */
const SIDE = CONTEXT_WINDOW + 96;
/** How far from the junction (separators skipped) a digit must be on each side for a number to run across it. */
const DIGIT_REACH = 3;
/** A word running across the junction at least this long may be an API key cut in two. */
const LONG_RUN = 20;

const isSpace = (c: number) => c === 32 || (c >= 9 && c <= 13) || c === 0xa0;
const isDigit = (c: number) => c >= 48 && c <= 57;
/** A character a number's groups are separated by: space, '-', '.', '/', '(', ')'. */
const isNumberSeparator = (c: number) => isSpace(c) || c === 45 || c === 46 || c === 47 || c === 40 || c === 41;
/** A character of an e-mail address or a key: letters, digits, '_', '-', '.', '+', '@'. */
const isRunChar = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45 || c === 46 || c === 43 || c === 64;

/** True when a digit is reached from `at` stepping by `step` over at most DIGIT_REACH separators, within [from, to). */
function digitWithinReach(text: string, at: number, step: 1 | -1, from: number, to: number): boolean {
  for (let i = at, n = 0; i >= from && i < to && n <= DIGIT_REACH; i += step, n++) {
    const c = text.charCodeAt(i);
    if (isDigit(c)) return true;
    if (!isNumberSeparator(c)) return false;
  }
  return false;
}

/**
 * Could a value continue across the junction between text[leftStart, leftEnd) and text[rightStart, rightEnd)?
 * A number (card, SSN, IBAN, phone, date): a digit at the junction on both sides, separators aside. An
 * e-mail or a key: a run of address characters across it that holds an '@' or is long. Ordinary
 * junctions — a sentence's end, then a new one — are neither.
 */
function mayContinue(text: string, leftStart: number, leftEnd: number, rightStart: number, rightEnd: number): boolean {
  if (leftEnd <= leftStart || rightEnd <= rightStart) return false;
  if (digitWithinReach(text, leftEnd - 1, -1, leftStart, leftEnd) && digitWithinReach(text, rightStart, 1, rightStart, rightEnd)) return true;
  let a = leftEnd;
  while (a > leftStart && leftEnd - a < SIDE && isRunChar(text.charCodeAt(a - 1))) a--;
  let b = rightStart;
  while (b < rightEnd && b - rightStart < SIDE && isRunChar(text.charCodeAt(b))) b++;
  if (a === leftEnd || b === rightStart) return false;
  if (leftEnd - a + (b - rightStart) >= LONG_RUN) return true;
  const at = text.indexOf("@", a);
  return (at >= 0 && at < leftEnd) || text.slice(rightStart, b).includes("@");
}

/** The window's start moved to a whitespace boundary, so that it does not begin inside a value. */
function startAtBoundary(text: string, from: number, partStart: number, limit: number): number {
  if (from <= partStart || isSpace(text.charCodeAt(from - 1))) return from;
  let i = from;
  while (i < limit && !isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** The window's end moved back to a whitespace boundary, so that it does not end inside a value. */
function endAtBoundary(text: string, to: number, partEnd: number, limit: number): number {
  if (to >= partEnd || isSpace(text.charCodeAt(to))) return to;
  let i = to;
  while (i > limit && !isSpace(text.charCodeAt(i - 1))) i--;
  return i;
}

/**
 * `found` (the findings of `text`, which is `parts` joined with "\n\n") plus the findings that run
 * across a junction between two parts and overlap none of `found`, with offsets into `text`; sorted
 * and free of overlaps (as detectPii's). Returns `found` itself when there is nothing to add, and when `text` is not the parts
 * so joined (nothing is guessed).
 */
export function withFindingsAcrossParts(text: string, parts: readonly string[], found: PiiFinding[]): PiiFinding[] {
  if (parts.length < 2) return found;
  let joinedLength = 2 * (parts.length - 1);
  for (const p of parts) joinedLength += p.length;
  if (joinedLength !== text.length) return found;
  let added: PiiFinding[] | undefined;
  let start = 0;
  for (let k = 0; k + 1 < parts.length; k++) {
    const leftStart = start;
    const leftEnd = leftStart + parts[k]!.length;
    const rightStart = leftEnd + 2;
    const rightEnd = rightStart + parts[k + 1]!.length;
    start = rightStart;
    if (!mayContinue(text, leftStart, leftEnd, rightStart, rightEnd)) continue;
    const from = startAtBoundary(text, Math.max(leftStart, leftEnd - SIDE), leftStart, leftEnd);
    const to = endAtBoundary(text, Math.min(rightEnd, rightStart + SIDE), rightEnd, rightStart);
    const left = text.slice(from, leftEnd);
    const joined = left + text.slice(rightStart, to);
    for (const f of detectPii(joined)) {
      if (f.start >= left.length || f.end <= left.length) continue; // on one side only: found already
      (added ??= []).push({ entityType: f.entityType, start: from + f.start, end: rightStart + (f.end - left.length), score: f.score });
    }
  }
  if (added === undefined) return found;
  // A finding of the "\n\n" form is never displaced: joining two parts can also make a longer false
  // value over two real ones (`ann@example.com` + `carl@example.com` reads as the address
  // `example.comcarl@example.com`), so what is found across a junction only fills what nothing covers.
  const fresh = added.filter((a) => !found.some((f) => f.start < a.end && a.start < f.end));
  return fresh.length === 0 ? found : resolveOverlaps([...found, ...fresh]);
}
