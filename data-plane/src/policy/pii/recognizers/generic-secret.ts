// Secrets without a prefix (Mistral, Cohere, most in-house keys, passwords): a high-entropy value of
// 20–128 characters where only a secret goes — after "Bearer ", or as the value of an identifier named
// like a secret (api_key, apiKey, x-api-key, MISTRAL_API_KEY, MY_KEY, client_secret, access_token,
// password…) in `=`, `:`, `:=`, `=>` and JSON forms, quoted or not, also after an authorization
// scheme ("Authorization: Basic …"). Like gitleaks' generic-api-key rule (keyword, operator, value,
// Shannon entropy ≥ 3.5) but anchored on the operator: the identifier must end with the secret word
// ("token_count", "key_id", "page_token" are no secrets), and the value must hold a run of 8+ letters
// and digits mixed, which placeholders ("your-api-key-here", "xxxxxxxx", "<API_KEY>", "${API_KEY}",
// "process.env.API_KEY") and word lists ("db-password-2024") never do.
//
// Cost: every match contains ":", "=" or "Bearer ", and the scan walks only their occurrences
// (String#indexOf, ~60 ns per 8 KB of prose without them); at each one the value is read first by hand
// (a word of prose after ": " fails within a few characters), and only then is the identifier looked at.

import type { PiiFinding } from "../types.js";
import { startsWithLower } from "./value-after-name.js";

/** Score of a generic secret: below JWT (0.8) and the prefixed keys, which win an equal span. */
export const GENERIC_SECRET_SCORE = 0.7;

const VALUE_CHARS = "A-Za-z0-9_\\-./+=";
/** After "Bearer ". */
const AFTER_SCHEME_RE = new RegExp(`[ \\t]{0,2}([${VALUE_CHARS}]{20,128})(?![${VALUE_CHARS}])`, "y");
const MIN_VALUE = 20;
const MAX_VALUE = 128;
/** Authorization schemes that may open a header's value ("Authorization: Basic …"), lower case. */
const SCHEMES = ["bearer", "basic", "token"];

/** Identifier endings (lower case, separators removed) that name a secret. */
const SECRET_NAME_ENDINGS = [
  "apikey", "secretkey", "accesskey", "privatekey", "authkey", "clientkey", "appkey", "masterkey", "accountkey",
  "subscriptionkey", "signingkey", "encryptionkey", "secret", "token", "password", "passwd", "passphrase", "pwd",
  "auth", "authorization", "credential", "credentials",
];
/** Token names that are cursors, not credentials. */
const NOT_SECRET_ENDINGS = ["pagetoken", "nexttoken", "continuationtoken", "synctoken", "cursortoken", "maxtoken"];
/** SCREAMING_CASE environment names ending in _KEY: MY_KEY, STRIPE_KEY. */
const ENV_KEY_RE = /^[A-Z][A-Z0-9_]*_KEY$/;
const MAX_NAME = 64;

/** A-Z a-z 0-9 _ - . / + = : the characters of a generated secret (also key-in-prose.ts). */
export function isSecretChar(c: number): boolean {
  return isNameChar(c) || c === 47 || c === 43 || c === 61;
}

/**
 * Start of the value after the operator at `op` (the rest of ":=" / "=>", up to 3 spaces, a quote,
 * optionally escaped, an authorization scheme), or -1 when no 20–128-character value follows.
 * Written out rather than as a sticky regex: it runs at every ":" and "=" of a prompt, and prose
 * ("Note: the …") fails it within a few characters.
 */
function valueAfter(text: string, op: number): number {
  let i = op + 1;
  let c = text.charCodeAt(i);
  if (c === 61 || c === 62) c = text.charCodeAt(++i); // := =>
  for (let n = 0; n < 3 && (c === 32 || c === 9); n++) c = text.charCodeAt(++i);
  if (c === 92 && text.charCodeAt(i + 1) === 34) c = text.charCodeAt((i += 2)); // \"
  else if (c === 34 || c === 39 || c === 96) c = text.charCodeAt(++i);
  const start = i;
  while (i - start <= MAX_VALUE && isSecretChar(text.charCodeAt(i))) i++;
  const len = i - start;
  if (len >= MIN_VALUE && len <= MAX_VALUE) return start;
  // A scheme word and its spaces ("Bearer …"), then the value.
  if (!SCHEMES.some((w) => w.length === len && startsWithLower(text, start, w))) return -1;
  let n = 0;
  while (n < 3 && (text.charCodeAt(i) === 32 || text.charCodeAt(i) === 9)) {
    i++;
    n++;
  }
  if (n === 0) return -1;
  const vStart = i;
  while (i - vStart <= MAX_VALUE && isSecretChar(text.charCodeAt(i))) i++;
  return i - vStart >= MIN_VALUE && i - vStart <= MAX_VALUE ? vStart : -1;
}


/** End of the value that starts at `start` (valueAfter made sure it is 20–128 characters). */
function valueEnd(text: string, start: number): number {
  let i = start;
  while (isSecretChar(text.charCodeAt(i))) i++;
  return i;
}

function isNameChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 45 || c === 46; // a-z A-Z 0-9 _ - .
}

/** True when the identifier right before the operator at `op` names a secret ("api_key", `"apiKey"`, x-api-key). */
function secretNameBefore(text: string, op: number): boolean {
  let j = op - 1;
  let spaces = 0;
  while (j >= 0 && spaces < 3 && (text.charCodeAt(j) === 32 || text.charCodeAt(j) === 9)) {
    j--;
    spaces++;
  }
  const q = text.charCodeAt(j);
  if (q === 34 || q === 39 || q === 96) {
    j--; // closing quote of a JSON / dict key
    if (text.charCodeAt(j) === 92) j--; // escaped JSON: \"api_key\"
  }
  const end = j + 1;
  while (j >= 0 && end - j <= MAX_NAME && isNameChar(text.charCodeAt(j))) j--;
  if (j >= 0 && isNameChar(text.charCodeAt(j))) return false; // longer than MAX_NAME
  const name = text.slice(j + 1, end);
  if (name.length < 3) return false;
  if (ENV_KEY_RE.test(name)) return true;
  const norm = name.toLowerCase().replace(/[^a-z0-9]/g, "");
  for (const e of NOT_SECRET_ENDINGS) if (norm.endsWith(e)) return false;
  for (const e of SECRET_NAME_ENDINGS) if (norm.endsWith(e)) return true;
  return false;
}

/**
 * True for a value that looks generated: a run of 8+ letters and digits holding both, and a Shannon
 * entropy of at least 3.5 bits per character (gitleaks' threshold; random base62 of 20 characters
 * averages ~4.0, hex of 32 ~3.8; "aaaa1111aaaa1111aaaa" has 1).
 */
export function looksGenerated(value: string): boolean {
  let mixed = false;
  let run = 0;
  let runDigit = false;
  let runLetter = false;
  for (let i = 0; i < value.length && !mixed; i++) {
    const c = value.charCodeAt(i);
    const digit = c >= 48 && c <= 57;
    const letter = (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
    if (digit || letter) {
      run++;
      runDigit ||= digit;
      runLetter ||= letter;
      if (run >= 8 && runDigit && runLetter) mixed = true;
    } else {
      run = 0;
      runDigit = runLetter = false;
    }
  }
  return mixed && shannonEntropy(value) >= 3.5;
}

function shannonEntropy(s: string): number {
  const counts = new Map<number, number>();
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

const OPERATORS = [":", "="];

function push(out: PiiFinding[], text: string, start: number, end: number): void {
  while (end > start && text.charCodeAt(end - 1) === 46) end--; // the full stop of a sentence
  if (end - start < MIN_VALUE || !looksGenerated(text.slice(start, end))) return;
  out.push({ entityType: "api_key", start, end, score: GENERIC_SECRET_SCORE });
}

/**
 * Appends generic secrets in `text` to `out` (possibly overlapping prefixed keys; resolveOverlaps
 * picks). `hasColon`: whether `text` holds ":" (the caller knows already).
 */
export function scanGenericSecrets(text: string, out: PiiFinding[], hasColon = true): void {
  for (const op of hasColon ? OPERATORS : ["="]) {
    for (let i = text.indexOf(op); i !== -1; i = text.indexOf(op, i + 1)) {
      const start = valueAfter(text, i);
      if (start === -1 || !secretNameBefore(text, i)) continue;
      push(out, text, start, valueEnd(text, start));
    }
  }
  for (let i = text.indexOf("Bearer "); i !== -1; i = text.indexOf("Bearer ", i + 1)) {
    if (i > 0 && isNameChar(text.charCodeAt(i - 1))) continue;
    AFTER_SCHEME_RE.lastIndex = i + 7;
    const m = AFTER_SCHEME_RE.exec(text);
    if (m !== null) push(out, text, AFTER_SCHEME_RE.lastIndex - m[1]!.length, AFTER_SCHEME_RE.lastIndex);
  }
}
