// Overlap resolution: keep the higher-scoring span, then the longer one, then the earlier one.

import type { PiiFinding } from "./types.js";

function rank(a: PiiFinding, b: PiiFinding): number {
  if (a.score !== b.score) return b.score - a.score;
  const la = a.end - a.start;
  const lb = b.end - b.start;
  if (la !== lb) return lb - la;
  return a.start - b.start;
}

/** Index of the first kept span whose start is ≥ `pos` (kept is sorted by start). */
function lowerBound(kept: PiiFinding[], pos: number): number {
  let lo = 0;
  let hi = kept.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (kept[mid]!.start < pos) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Returns non-overlapping findings sorted by start. The input array is reordered in place. */
export function resolveOverlaps(findings: PiiFinding[]): PiiFinding[] {
  if (findings.length < 2) return findings;
  findings.sort(rank);
  const kept: PiiFinding[] = [];
  for (const f of findings) {
    const i = lowerBound(kept, f.start);
    const prev = i > 0 ? kept[i - 1] : undefined;
    const next = kept[i];
    if (prev !== undefined && prev.end > f.start) continue;
    if (next !== undefined && next.start < f.end) continue;
    kept.splice(i, 0, f);
  }
  return kept;
}
