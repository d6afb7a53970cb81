// ClickHouse 18.16 reads decimal text into a Float64 not always as the nearest double: `0.00071925`
// (a gpt-4o-mini call's cost) is stored as 0.0007192500000000001, `1.1e-9` as 1.1000000000000001e-9
// (its SQL literal parser rounds right; the text parser of TabSeparated input and toFloat64('…') does
// not — about a fifth of the costs between 1e-10 and 1e-5 USD, a few in a thousand of chat costs).
// Modern ClickHouse (chDB) reads them exactly. Every Float64 the store writes is a short decimal
// (String(x) of a cost on the 1e-10 USD grid, a latency to the µs, a score), so a double read back whose
// one-ulp neighbour has at most 15 significant digits was misread: that neighbour is what was written.
// Filters compare with one ulp of room for the same reason (widenedBound).

const f64 = new Float64Array(1);
const bits = new BigInt64Array(f64.buffer);

/** The double one ulp from `x` (≠ 0, finite): away from zero (+1) or toward it (−1). */
function step(x: number, away: 1 | -1): number {
  f64[0] = x;
  bits[0] = bits[0]! + BigInt(away);
  return f64[0]!;
}

/** The double the store wrote, from the one an engine read back (see above). */
export function writtenDouble(x: number): number {
  if (x === 0 || !Number.isFinite(x)) return x;
  const short = Number(x.toPrecision(15));
  if (short === x) return x;
  return short === step(x, 1) || short === step(x, -1) ? short : x;
}

/** A filter's inclusive bound widened by one ulp (lower: down, upper: up), so a value misread by one ulp still matches it. */
export function widenedBound(bound: number, side: "lower" | "upper"): number {
  if (bound === 0) return side === "lower" ? -Number.MIN_VALUE : Number.MIN_VALUE;
  const outward = (side === "lower") === bound > 0 ? -1 : 1;
  return step(bound, outward);
}
