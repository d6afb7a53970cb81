// The value that follows a name in text: after an identifier's operator (`password=…`, `"password": …`,
// `PASSWORD : …`) or, in prose, after "is", "was" or ":" within a few words of the same sentence ("the
// password for the staging db is …"). Shared by the recognizers of secrets named in text (password.ts,
// key-in-prose.ts). Written by hand: it runs at each occurrence of a name, and prose fails it within a
// few characters.

/** How far past the name the prose form looks for "is" / "was" / ":". */
const MAX_GAP = 40;

export function isLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

export function isIdentChar(c: number): boolean {
  return isLetter(c) || (c >= 48 && c <= 57) || c === 95 || c === 45;
}

/** A value character: printable ASCII but space, quotes, and the separators that end a value in prose and code. */
export function isValueChar(c: number): boolean {
  return c > 32 && c < 127 && c !== 34 && c !== 39 && c !== 96 && c !== 44 && c !== 59 && c !== 41 && c !== 93 && c !== 125;
}

/** Where the value starts after an operator (":", "=", ":=", "=>") at `op`: spaces and an opening quote skipped; -1 if none. */
export function valueAfterOperator(text: string, op: number): number {
  let i = op + 1;
  let c = text.charCodeAt(i);
  if (c === 61 || c === 62) c = text.charCodeAt(++i);
  for (let n = 0; n < 3 && (c === 32 || c === 9); n++) c = text.charCodeAt(++i);
  if (c === 92 && text.charCodeAt(i + 1) === 34) i += 2; // \" in escaped JSON
  else if (c === 34 || c === 39 || c === 96) i++;
  return isValueChar(text.charCodeAt(i)) ? i : -1;
}

/**
 * After the word ending at `end`: an identifier's operator (`password=`, `"password": `, `PASSWORD :`),
 * or prose ("is", "was", ":") within MAX_GAP characters of the same sentence. Returns the value's start, or -1.
 */
export function valueAfterName(text: string, end: number): number {
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

export function startsWithLower(text: string, at: number, lower: string): boolean {
  for (let k = 0; k < lower.length; k++) if ((text.charCodeAt(at + k) | 32) !== lower.charCodeAt(k)) return false;
  return true;
}
