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
// Cost: the scan only looks at occurrences of "ass" (pASSword, pASSphrase, pASScode) and "pwd", found
// with String#indexOf (tens of ns per KB of prose without them).

import type { PiiFinding } from "../types.js";

/** Below a generated secret (0.7): a password is recognised by its context, not its shape. */
export const PASSWORD_SCORE = 0.6;

const MIN_VALUE = 6;
const MAX_VALUE = 64;
/** How far past the word "password" the prose form looks for "is" / "was" / ":". */
const MAX_GAP = 40;

/** Words that may name a password, lower case, found by a probe (indexOf) at `at` in them. */
const WORDS: readonly { word: string; at: number }[] = [
  { word: "password", at: 1 },
  { word: "passwd", at: 1 },
  { word: "passphrase", at: 1 },
  { word: "passcode", at: 1 },
  { word: "pwd", at: 0 },
];
/** The probes, both cases, and the words each finds. */
const PROBES: readonly [string, readonly { word: string; at: number }[]][] = [
  ["ass", WORDS.filter((w) => w.at === 1)],
  ["ASS", WORDS.filter((w) => w.at === 1)],
  ["pwd", WORDS.filter((w) => w.at === 0)],
  ["PWD", WORDS.filter((w) => w.at === 0)],
];

function isLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

function isIdentChar(c: number): boolean {
  return isLetter(c) || (c >= 48 && c <= 57) || c === 95 || c === 45;
}

/** A value character: printable ASCII but space, quotes, and the separators that end a value in prose and code. */
function isValueChar(c: number): boolean {
  return c > 32 && c < 127 && c !== 34 && c !== 39 && c !== 96 && c !== 44 && c !== 59 && c !== 41 && c !== 93 && c !== 125;
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
  if (new Set(value).size <= 2) return false; // xxxxxx, x1x1x1x1
  if ((lower || upper) && digit) return true;
  return lower + upper + digit + symbol >= 3;
}

/** Where the value starts after an operator (":", "=", ":=", "=>") at `op`: spaces and an opening quote skipped; -1 if none. */
function valueAfterOperator(text: string, op: number): number {
  let i = op + 1;
  let c = text.charCodeAt(i);
  if (c === 61 || c === 62) c = text.charCodeAt(++i);
  for (let n = 0; n < 3 && (c === 32 || c === 9); n++) c = text.charCodeAt(++i);
  if (c === 92 && text.charCodeAt(i + 1) === 34) i += 2; // \" in escaped JSON
  else if (c === 34 || c === 39 || c === 96) i++;
  return isValueChar(text.charCodeAt(i)) ? i : -1;
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

/**
 * After the word ending at `end`: an identifier's operator (`password=`, `"password": `, `PASSWORD :`),
 * or prose ("is", "was", ":") within MAX_GAP characters of the same sentence. Returns the value's start, or -1.
 */
function valueAfterWord(text: string, end: number): number {
  let i = end;
  // The rest of the identifier (password_hash is no password; DB_PASSWORD_FILE names a file).
  while (i < text.length && isIdentChar(text.charCodeAt(i))) i++;
  if (i > end) return -1;
  let j = i;
  if (text.charCodeAt(j) === 92 && text.charCodeAt(j + 1) === 34) j += 2; // \" closing an escaped JSON key
  else if (text.charCodeAt(j) === 34 || text.charCodeAt(j) === 39 || text.charCodeAt(j) === 96) j++;
  let k = j;
  while (k < text.length && k - j < 3 && (text.charCodeAt(k) === 32 || text.charCodeAt(k) === 9)) k++;
  const c = text.charCodeAt(k);
  if (c === 58 || c === 61) return valueAfterOperator(text, k);
  // Prose: "… is <value>", "… was <value>", "…: <value>" before the sentence ends.
  const limit = Math.min(text.length, end + MAX_GAP);
  for (let p = end; p < limit; p++) {
    const d = text.charCodeAt(p);
    if (d === 46 || d === 10 || d === 33 || d === 63) return -1; // . \n ! ?
    if (d === 58) return valueAfterOperator(text, p);
    if (d === 32 && (startsWithLower(text, p + 1, "is ") || startsWithLower(text, p + 1, "was "))) {
      let v = p + (text.charCodeAt(p + 1) === 105 || text.charCodeAt(p + 1) === 73 ? 4 : 5);
      while (text.charCodeAt(v) === 32) v++;
      const q = text.charCodeAt(v);
      if (q === 34 || q === 39 || q === 96) v++;
      return isValueChar(text.charCodeAt(v)) ? v : -1;
    }
  }
  return -1;
}

function startsWithLower(text: string, at: number, lower: string): boolean {
  for (let k = 0; k < lower.length; k++) if ((text.charCodeAt(at + k) | 32) !== lower.charCodeAt(k)) return false;
  return true;
}

/** Appends short passwords in `text` to `out` (overlaps with generic secrets are resolved by detectPii). */
export function scanPasswords(text: string, out: PiiFinding[]): void {
  let seen: Set<number> | undefined; // made at the first value: most texts have none
  for (const [probe, words] of PROBES) {
    for (let i = text.indexOf(probe); i !== -1; i = text.indexOf(probe, i + 1)) {
      for (const { word, at } of words) {
        const start = i - at;
        if (start < 0 || !startsWithLower(text, start, word)) continue;
        // The word starts a word or an identifier's part: "db_password", "PGPASSWORD", "myPassword", "Password"; not "bypassword".
        const first = text.charCodeAt(start);
        if (start > 0 && isLetter(text.charCodeAt(start - 1)) && first >= 97 && first <= 122) continue;
        const value = valueAfterWord(text, start + word.length);
        if (value === -1 || seen?.has(value)) continue;
        (seen ??= new Set()).add(value);
        pushValue(text, value, out);
      }
    }
  }
}
