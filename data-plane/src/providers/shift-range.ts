// Moving a [start, end) range of a text into its redacted copy, for fields that point into answer text
// by offset (Cohere citations). The redacted copy is the text with some spans replaced by
// `[REDACTED:<label>]`. A character diff (fast-diff) gives the text both share; characters that fall
// inside a label in the copy are not shared, even when the diff matched them (the "e", "a", "m" of
// "[REDACTED:email]" against the address it replaced). A boundary in shared text moves with it; a
// boundary inside a replaced value widens to the whole replacement, so a cited span that touched a
// redacted value quotes its label. (Semantic cleanup is not used: it also swallows short kept text
// between two redactions.)
import diff from "fast-diff";

const LABEL = /\[REDACTED:[a-z_]+\]/g;

/** Kept runs: `length` characters at `b` in before and at `a` in after, in order. */
interface Kept {
  b: number;
  a: number;
  length: number;
}

function keptRuns(before: string, after: string): Kept[] {
  const labels = [...after.matchAll(LABEL)].map((m) => [m.index, m.index + m[0].length] as const);
  const runs: Kept[] = [];
  const keep = (b: number, a: number, length: number) => {
    if (length <= 0) return;
    const last = runs[runs.length - 1];
    if (last && last.b + last.length === b && last.a + last.length === a) last.length += length;
    else runs.push({ b, a, length });
  };
  let b = 0;
  let a = 0;
  let l = 0; // first label that may still overlap
  for (const [op, text] of diff(before, after)) {
    if (op === diff.DELETE) {
      b += text.length;
      continue;
    }
    if (op === diff.INSERT) {
      a += text.length;
      continue;
    }
    // An equal run [a, a + n) of after, minus the parts inside labels.
    const end = a + text.length;
    let at = a;
    while (l < labels.length && labels[l]![1] <= at) l++;
    for (let k = l; k < labels.length && labels[k]![0] < end && at < end; k++) {
      const [ls, le] = labels[k]!;
      if (ls > at) keep(b + (at - a), at, ls - at);
      at = Math.max(at, Math.min(le, end));
    }
    if (at < end) keep(b + (at - a), at, end - at);
    b += text.length;
    a = end;
  }
  return runs;
}

export function shiftRange(before: string, after: string, start: number, end: number): [number, number] {
  if (before === after) return [start, end];
  const runs = keptRuns(before, after);
  let newStart = after.length;
  for (let i = 0; i < runs.length; i++) {
    const r = runs[i]!;
    if (start >= r.b && start <= r.b + r.length) {
      newStart = r.a + (start - r.b);
      break;
    }
    if (start < r.b) {
      // inside the replaced region before this run: from the start of its replacement
      newStart = i === 0 ? 0 : runs[i - 1]!.a + runs[i - 1]!.length;
      break;
    }
  }
  let newEnd = after.length;
  for (const r of runs) {
    if (end >= r.b && end <= r.b + r.length) {
      newEnd = r.a + (end - r.b);
      break;
    }
    if (end < r.b) {
      newEnd = r.a; // inside the replaced region before this run: to the end of its replacement
      break;
    }
  }
  return [newStart, Math.max(newStart, newEnd)];
}
