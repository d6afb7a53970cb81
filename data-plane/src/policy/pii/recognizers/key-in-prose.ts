// Generated secrets named in a sentence rather than assigned: "my Mistral key is 1gRa9D9j…", "the
// access token for staging was 'OR5k8og7…'", "API key: …" in prose. generic-secret.ts finds a value
// after an identifier's operator; this finds it after "key", "token" or "secret" and "is", "was" or
// ":" a few words later (value-after-name.ts), with the same test of the value: 20–128 characters
// holding a run of 8+ mixed letters and digits, Shannon entropy ≥ 3.5 (looksGenerated). Prose such as
// "the key is that…" or "the token was rejected" has no such value.
//
// Cost: indexOf over the text for "key"/"Key"/"KEY", "oken"/"OKEN" and "ecret"/"ECRET"; at each
// occurrence a few character tests.

import type { PiiFinding } from "../types.js";
import { GENERIC_SECRET_SCORE, isSecretChar, looksGenerated } from "./generic-secret.js";
import { startsWithLower, valueAfterName } from "./value-after-name.js";

const MIN_VALUE = 20;
const MAX_VALUE = 128;

/** [probe, the word it belongs to (lower case), where the probe starts in it]. */
const PROBES: readonly [string, string, number][] = [
  ["key", "key", 0],
  ["Key", "key", 0],
  ["KEY", "key", 0],
  ["oken", "token", 1],
  ["OKEN", "token", 1],
  ["ecret", "secret", 1],
  ["ECRET", "secret", 1],
];

/** Appends generated secrets named in prose to `out` (overlaps with generic secrets are resolved by detectPii). */
export function scanKeysInProse(text: string, out: PiiFinding[]): void {
  for (const [probe, word, at] of PROBES) {
    for (let i = text.indexOf(probe); i !== -1; i = text.indexOf(probe, i + 1)) {
      const start = i - at;
      if (start < 0 || !startsWithLower(text, start, word)) continue;
      // A word of prose: after a space or at the start ("monkey", "api_key", "\"token\"" are not; an
      // identifier's value is generic-secret.ts's, which knows the names that are no secrets).
      const before = start > 0 ? text.charCodeAt(start - 1) : 32;
      if (before !== 32 && before !== 9 && before !== 10) continue;
      const value = valueAfterName(text, start + word.length);
      if (value === -1) continue;
      let stop = value;
      while (stop - value <= MAX_VALUE && isSecretChar(text.charCodeAt(stop))) stop++;
      let end = stop;
      while (end > value && text.charCodeAt(end - 1) === 46) end--; // the full stop of a sentence
      const token = text.slice(value, end);
      // An assignment ("the key is api_key=…") is generic-secret.ts's: "=" only as base64 padding here.
      const eq = token.indexOf("=");
      if (eq !== -1 && !/^=+$/.test(token.slice(eq))) continue;
      if (end - value < MIN_VALUE || stop - value > MAX_VALUE || !looksGenerated(token)) continue;
      out.push({ entityType: "api_key", start: value, end, score: GENERIC_SECRET_SCORE });
    }
  }
}
