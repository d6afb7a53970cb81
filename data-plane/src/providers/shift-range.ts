// Moving a [start, end) range of a text into its redacted copy, for fields that quote answer text
// by offset (Cohere citations, Gemini grounding segments). The redacted copy is the text with spans
// replaced by `[REDACTED:<label>]`, so the text between labels is kept text: each kept piece is
// found in the original in order (the first at the start, the last at the end, the others at their
// first occurrence after the previous one plus at least one replaced character). Linear in the
// text's length, whatever the number of redactions; each range then maps in O(log runs). A boundary
// in kept text moves with it; a boundary inside a replaced value widens to the whole replacement,
// so a quote that touched a redacted value quotes its label. Undefined when the copy does not line
// up with the original (not a redaction of it).
// A stream governor writes the redacted copy itself, a piece at a time: it records the kept runs as it
// writes them (KeptRuns) instead of finding them again in the whole text for every quoting event.

const LABEL = /\[REDACTED:[a-z_]+\]/g;

/** Kept text: `length` characters at `b` in before and at `a` in after, in order. */
interface Kept {
  b: number;
  a: number;
  length: number;
}

function keptRuns(before: string, after: string): Kept[] | undefined {
  const pieces: [number, number][] = []; // [start, end) in after of the text between labels
  let last = 0;
  for (const m of after.matchAll(LABEL)) {
    pieces.push([last, m.index]);
    last = m.index + m[0].length;
  }
  pieces.push([last, after.length]);
  const runs: Kept[] = [];
  let b = 0; // end of the previous kept run in before
  for (let i = 0; i < pieces.length; i++) {
    const [from, to] = pieces[i]!;
    const length = to - from;
    const text = after.slice(from, to);
    let at: number;
    if (i === 0) at = before.startsWith(text) ? 0 : -1;
    else if (i === pieces.length - 1) {
      at = before.length - length;
      if (at < b + 1 || !before.endsWith(text)) at = -1;
    } else if (length === 0) continue; // adjacent labels: one replaced region
    else at = before.indexOf(text, b + 1);
    if (at < 0) return undefined;
    if (length > 0) runs.push({ b: at, a: from, length });
    b = at + length;
  }
  return runs;
}

/** Maps [start, end) of the original onto the redacted copy (UTF-16 offsets). */
export type RangeMapper = (start: number, end: number) => [number, number];

/**
 * A mapper from `before` to `after` (its redacted copy), built once for any number of ranges, or
 * undefined when the copy does not line up with the original.
 */
export function rangeMapper(before: string, after: string): RangeMapper | undefined {
  if (before === after) return (start, end) => [start, end];
  const runs = keptRuns(before, after);
  return runs && mapperOver(runs, before.length, after.length);
}

/**
 * The mapper of a copy `afterLength` long of an original `beforeLength` long, given the runs of text it
 * kept (in order, none empty). It reads `runs` when called: call it before they change.
 */
function mapperOver(runs: readonly Kept[], beforeLength: number, afterLength: number): RangeMapper {
  const map = (x: number, side: "start" | "end"): number => {
    // the first run that ends at or after x (runs are in order and their ends increase): binary search
    let lo = 0;
    let hi = runs.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const r = runs[mid]!;
      if (x <= r.b + r.length) hi = mid;
      else lo = mid + 1;
    }
    if (lo < runs.length) {
      const r = runs[lo]!;
      if (x >= r.b) return r.a + (x - r.b);
      // inside the replaced region before this run: its replacement's start, or its end
      if (side === "end") return r.a;
      return lo === 0 ? 0 : runs[lo - 1]!.a + runs[lo - 1]!.length;
    }
    // past the last run: inside a replaced region at the very end
    return side === "end" ? afterLength : runs.length > 0 ? runs[runs.length - 1]!.a + runs[runs.length - 1]!.length : 0;
  };
  return (start, end) => {
    const s = map(Math.max(0, Math.min(start, beforeLength)), "start");
    const e = map(Math.max(0, Math.min(end, beforeLength)), "end");
    return [s, Math.max(s, e)];
  };
}

/** The kept runs of a redacted copy, recorded as it is written (appended to, in order). */
export class KeptRuns {
  private readonly runs: Kept[] = [];

  /** `length` characters at `b` in the original were copied to `a` in the copy (after every earlier run). */
  keep(b: number, a: number, length: number): void {
    if (length <= 0) return;
    const last = this.runs[this.runs.length - 1];
    // text kept across two writes is one run, as rangeMapper would find it
    if (last && last.b + last.length === b && last.a + last.length === a) last.length += length;
    else this.runs.push({ b, a, length });
  }

  /** The mapper of the copy so far (the original's first `beforeLength` characters, the copy's `afterLength`). */
  mapper(beforeLength: number, afterLength: number): RangeMapper {
    return mapperOver(this.runs, beforeLength, afterLength);
  }
}

export function shiftRange(before: string, after: string, start: number, end: number): [number, number] | undefined {
  return rangeMapper(before, after)?.(start, end);
}
