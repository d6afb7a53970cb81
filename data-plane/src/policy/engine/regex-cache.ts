// Policy regexes are compiled once (the control plane only accepts linear-time-safe patterns).
const cache = new Map<string, RegExp | null>();

export function compiledRegex(pattern: string): RegExp | null {
  let re = cache.get(pattern);
  if (re === undefined) {
    try {
      re = new RegExp(pattern, "giu");
    } catch {
      re = null;
    }
    if (cache.size > 10_000) cache.clear();
    cache.set(pattern, re);
  }
  return re;
}
