// Passwords shorter than a generated secret (generic-secret.ts takes 20+ characters of high entropy):
// the value a password is given in a prompt, in the two places only a password goes:
// - as the value of an identifier named like one (`password=…`, `"db_password": "…"`, `PGPASSWORD: …`,
//   `pwd=…`, `passphrase: …`), quoted or not;
// - in prose, right after "password", "passphrase" or "passcode" and one of "is", "was", ":" (a few
//   words may come between: "the password for the staging db is …", "my passcode was …").
// The value is one token of 6–64 printable characters holding a letter and a digit, or three of the
// four classes (lower case, upper case, digit, symbol): "hunter2", "S3cr3tP4ss", "Tr0ub4dor&3",
// "Secret!x". Prose after the word ("is required", "is case-sensitive", "was reset", "is 8 characters
// long") has no such token; placeholders (`<password>`, `${DB_PASSWORD}`, `{{ secrets.X }}`, `****`,
// `%PASSWORD%`) are not passwords.
//
// Cost: the scan only looks at occurrences of "p" and "P" (every word starts with it), found with
// String#indexOf at memchr speed (~2 µs per 8 KB of prose; probing "ass", whose "a" is frequent, took
// 5 µs), and tests the next letter before the word.

import type { PiiFinding } from "../types.js";
import { isLetter, isValueChar, startsWithLower, valueAfterName } from "./value-after-name.js";

/** Below a generated secret (0.7): a password is recognised by its context, not its shape. */
export const PASSWORD_SCORE = 0.6;

const MIN_VALUE = 6;
const MAX_VALUE = 64;

/** Words that may name a password, lower case; each starts with "p". */
const PASS_WORDS: readonly string[] = ["password", "passwd", "passphrase", "passcode"];
/** The probes: both cases of the words' first letter. */
const PROBES: readonly string[] = ["p", "P"];

/** The password word at `start` ("p…" found there), or undefined. */
function wordAt(text: string, start: number): string | undefined {
  const next = text.charCodeAt(start + 1) | 32;
  if (next === 97) {
    for (const w of PASS_WORDS) if (startsWithLower(text, start, w)) return w;
  } else if (next === 119 && startsWithLower(text, start, "pwd")) return "pwd";
  return undefined;
}

/** True for a token that reads as a password (see the head of the file). */
export function looksLikePassword(value: string): boolean {
  if (value.length < MIN_VALUE || value.length > MAX_VALUE) return false;
  const first = value.charCodeAt(0);
  // Placeholders and references: <password>, ${X}, {{ X }}, %X%, ****, $X.
  if (first === 60 || first === 36 || first === 123 || first === 37 || first === 42) return false;
  let lower = 0;
  let upper = 0;
  let digit = 0;
  let symbol = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 97 && c <= 122) lower = 1;
    else if (c >= 65 && c <= 90) upper = 1;
    else if (c >= 48 && c <= 57) digit = 1;
    else symbol = 1;
  }
  if (new Set(value).size <= 2) return false; // one or two characters repeated: aaaaaa, a1a1a1a1
  if ((lower || upper) && digit) return true;
  return lower + upper + digit + symbol >= 3;
}

/** Appends the value token at `start` when it reads as a password (a sentence's closing punctuation left out). */
function pushValue(text: string, start: number, out: PiiFinding[]): void {
  let end = start;
  while (end < text.length && end - start <= MAX_VALUE && isValueChar(text.charCodeAt(end))) end++;
  if (end - start > MAX_VALUE) return;
  // A backslash before an escaped closing quote (\" in escaped JSON) is no part of the value.
  if (text.charCodeAt(end - 1) === 92 && text.charCodeAt(end) === 34) end--;
  // The full stop of a sentence ("… is hunter2."); "!" and "?" stay (common in passwords).
  if (text.charCodeAt(end - 1) === 46) end--;
  const value = text.slice(start, end);
  // A path (PWD=/home/u1) or a URL ("the password reset link is https://…") is no password.
  const c = value.charCodeAt(0);
  if (c === 47 || c === 126 || value.includes("://")) return;
  if (looksLikePassword(value)) out.push({ entityType: "api_key", start, end, score: PASSWORD_SCORE });
}

/** Appends short passwords in `text` to `out` (overlaps with generic secrets are resolved by detectPii). */
export function scanPasswords(text: string, out: PiiFinding[]): void {
  let seen: Set<number> | undefined; // made at the first value: most texts have none
  for (const probe of PROBES) {
    for (let start = text.indexOf(probe); start !== -1; start = text.indexOf(probe, start + 1)) {
      const word = wordAt(text, start);
      if (word === undefined) continue;
      // The word starts a word or an identifier's part: "db_password", "PGPASSWORD", "myPassword", "Password"; not "bypassword".
      const first = text.charCodeAt(start);
      if (start > 0 && isLetter(text.charCodeAt(start - 1)) && first >= 97 && first <= 122) continue;
      const value = valueAfterName(text, start + word.length);
      if (value === -1 || seen?.has(value)) continue;
      (seen ??= new Set()).add(value);
      pushValue(text, value, out);
    }
  }
}
