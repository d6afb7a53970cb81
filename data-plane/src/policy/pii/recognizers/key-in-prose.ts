// Generated secrets named in a sentence rather than assigned: "my Mistral key is 1gRa9D9j…", "the
// access token for staging was 'OR5k8og7…'", "API key: …" in prose. generic-secret.ts finds a value
// after an identifier's operator; this finds it after "key", "token" or "secret" and "is", "was" or
// ":" a few words later (value-after-name.ts), with the same test of the value: 20–128 characters
// holding a run of 8+ mixed letters and digits, Shannon entropy ≥ 3.5 (looksGenerated). Prose such as
// "the key is that…" or "the token was rejected" has no such value.
//
// Cost: String#indexOf of "k"/"K" (key, token) and "cret"/"CRET" (secret): probes that start with a
// rare character, which the engine finds at memchr speed (~3 µs per 8 KB of prose; probes starting with
// "o" or "e", as "oken" and "ecret" did, took 11 µs). At each occurrence a few character tests.

import type { PiiFinding } from "../types.js";
import { GENERIC_SECRET_SCORE, isSecretChar, looksGenerated } from "./generic-secret.js";
import { startsWithLower, valueAfterName } from "./value-after-name.js";

const MIN_VALUE = 20;
const MAX_VALUE = 128;

/** [probe, the words it may belong to (lower case) with where the probe starts in each]. */
const PROBES: readonly [string, readonly (readonly [string, number])[]][] = [
  ["k", [["key", 0], ["token", 2]]],
  ["K", [["key", 0], ["token", 2]]],
  ["cret", [["secret", 2]]],
  ["CRET", [["secret", 2]]],
];

/** Appends generated secrets named in prose to `out` (overlaps with generic secrets are resolved by detectPii). */
export function scanKeysInProse(text: string, out: PiiFinding[]): void {
  for (const [probe, words] of PROBES) {
    for (let i = text.indexOf(probe); i !== -1; i = text.indexOf(probe, i + 1)) {
      for (const [word, at] of words) scanAfter(text, i - at, word, out);
    }
  }
}

/** The value after `word` at `start`, when the text holds that word of prose there and a generated secret follows. */
function scanAfter(text: string, start: number, word: string, out: PiiFinding[]): void {
  if (start < 0 || !startsWithLower(text, start, word)) return;
  // A word of prose: after a space or at the start ("monkey", "api_key", "\"token\"" are not; an
  // identifier's value is generic-secret.ts's, which knows the names that are no secrets).
  const before = start > 0 ? text.charCodeAt(start - 1) : 32;
  if (before !== 32 && before !== 9 && before !== 10) return;
  const value = valueAfterName(text, start + word.length);
  if (value === -1) return;
  let stop = value;
  while (stop - value <= MAX_VALUE && isSecretChar(text.charCodeAt(stop))) stop++;
  let end = stop;
  while (end > value && text.charCodeAt(end - 1) === 46) end--; // the full stop of a sentence
  const token = text.slice(value, end);
  // An assignment ("the key is api_key=…") is generic-secret.ts's: "=" only as base64 padding here.
  const eq = token.indexOf("=");
  if (eq !== -1 && !/^=+$/.test(token.slice(eq))) return;
  if (end - value < MIN_VALUE || stop - value > MAX_VALUE || !looksGenerated(token)) return;
  out.push({ entityType: "api_key", start: value, end, score: GENERIC_SECRET_SCORE });
}
