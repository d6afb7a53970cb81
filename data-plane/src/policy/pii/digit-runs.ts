// Digit-run windows: most recognizers can only match where the text has a run of ASCII digits (a
// card number needs four in a row, a routing number nine, a phone number two at its end). One pass
// finds the runs; those recognizers then run their regex only in short windows around the runs that
// could be part of a match, not over the whole text. Prose has few digit runs, so an 8 KB prompt
// costs one regex pass here instead of one per recognizer. Written by hand because no library
// restricts a regex scan to windows with the guarantee below.
//
// Guarantee (tested against full scans in digit-runs.test.ts): for a DigitScan (a global regex whose
// every match contains a run of at least `minRun` digits and is at most `maxLen` characters long, and
// whose look-arounds reach at most MARGIN characters outside the match), scanNearDigitRuns reports exactly
// the matches a full left-to-right scan (`re.exec` from 0, continuing at each match's end) reports.

/** Runs of two or more ASCII digits, in text order. */
export interface DigitRuns {
  readonly starts: readonly number[];
  readonly ends: readonly number[];
  /** Length of the longest run (0 when there is none). */
  readonly longest: number;
}

/** A global regex and the two facts about its matches that the windows rely on. */
export interface DigitScan {
  /** Global; its look-arounds reach at most MARGIN characters outside a match; bounded quantifiers only. */
  readonly re: RegExp;
  /** Every match contains a run of at least this many digits. */
  readonly minRun: number;
  /** No match is longer than this. */
  readonly maxLen: number;
}

/** Past this many runs (tables, logs), window bookkeeping costs more than full scans: findDigitRuns returns null. */
export const MAX_DIGIT_RUNS = 128;
/** Characters kept on both sides of a window so look-behinds and look-aheads see their real neighbours. */
export const MARGIN = 4;

const RUN_RE = /\d{2,}/g;

/** The text's digit runs, or null when there are more than MAX_DIGIT_RUNS (callers then scan the whole text). */
export function findDigitRuns(text: string): DigitRuns | null {
  const starts: number[] = [];
  const ends: number[] = [];
  let longest = 0;
  RUN_RE.lastIndex = 0;
  // test() rather than exec(): no match array per run (~0.6 µs of ~5 on 8 KB of prose). A run ends at
  // lastIndex and starts after the last non-digit before it (the greedy match took every digit).
  while (RUN_RE.test(text)) {
    if (starts.length === MAX_DIGIT_RUNS) {
      RUN_RE.lastIndex = 0;
      return null;
    }
    const end = RUN_RE.lastIndex;
    let start = end - 2;
    while (start > 0) {
      const c = text.charCodeAt(start - 1);
      if (c < 48 || c > 57) break;
      start--;
    }
    starts.push(start);
    ends.push(end);
    if (end - start > longest) longest = end - start;
  }
  return { starts, ends, longest };
}

/**
 * Calls `onMatch` for every match of the global regex `re` in `text`, in order, as a full scan would
 * (see the guarantee above); `runs` null = scan the whole text. `onMatch` receives the match (its
 * `index` relative to the searched slice) and its start in `text`.
 */
export function scanNearDigitRuns(
  text: string,
  scan: DigitScan,
  runs: DigitRuns | null,
  onMatch: (m: RegExpExecArray, start: number) => void,
): void {
  const { re, minRun, maxLen } = scan;
  let m: RegExpExecArray | null;
  if (runs === null) {
    re.lastIndex = 0;
    while ((m = re.exec(text)) !== null) onMatch(m, m.index);
    return;
  }
  if (runs.longest < minRun) return;
  const n = runs.starts.length;
  let searchedTo = 0;
  let i = 0;
  while (i < n) {
    if (runs.ends[i]! - runs.starts[i]! < minRun) {
      i++;
      continue;
    }
    // Match starts that can include this run: [run start − maxLen, run end − minRun]; merge the following runs' windows.
    const from = Math.max(0, runs.starts[i]! - maxLen, searchedTo);
    let last = runs.ends[i]! - minRun;
    for (i++; i < n; i++) {
      if (runs.ends[i]! - runs.starts[i]! < minRun) continue;
      if (runs.starts[i]! - maxLen > last + 1) break;
      last = runs.ends[i]! - minRun;
    }
    if (from > last) continue;
    const sliceStart = from > MARGIN ? from - MARGIN : 0;
    const sliceEnd = Math.min(text.length, last + maxLen + MARGIN);
    const slice = text.slice(sliceStart, sliceEnd);
    re.lastIndex = from - sliceStart;
    while ((m = re.exec(slice)) !== null) {
      const start = sliceStart + m.index;
      if (start > last) break;
      searchedTo = start + m[0].length;
      onMatch(m, start);
    }
  }
}
