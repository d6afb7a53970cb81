// Context words as they appear in prose and in identifiers: "date of birth", "date_of_birth",
// "dateOfBirth", "DATE-OF-BIRTH", "customer_ssn", "routingNumber". `\b…\b` misses the identifier
// forms ("_" is a word character, and camelCase has no boundary at all), which is how agent tool
// results and CRM JSON name their fields. The regex built here is case-insensitive by character
// classes ([dD][oO][bB]) instead of the `i` flag, so that it can still tell a lower→upper case change
// ("patientDob", "customerSSN": a word boundary) from a word that merely contains the letters ("adobe").
// That regex costs ~5× a plain `i` regex per character, so it is for short windows before a candidate
// (hasContextBefore); a scan of the whole text uses contextWordsScanRe + atContextWordBoundary instead.

/** Before the word: no letter or digit, or a lower-case letter followed by the word's capitalised start. */
const LEFT = "(?:(?<![A-Za-z0-9])|(?<=[a-z])(?=[A-Z]))";
/** After the word: no lower-case letter, and no upper-case one either when the word ended upper-case ("SSNS"). */
const RIGHT = "(?![a-z])(?:(?<![A-Z])|(?![A-Z]))";
/** Between the words of a phrase: nothing, or one space, "_" or "-". */
const JOIN = "[ _-]?";

/** Lower-case word source with each space as an optional separator (for the `i`-flag scan regex). */
function joined(word: string): string {
  return word.replace(/ /g, JOIN);
}

/**
 * Regex source of one lower-case word or phrase written as a small regex (classes like "[oa]",
 * optional parts like "(?: on)?", escapes): ASCII letters match either case, a space matches an
 * optional separator. Non-ASCII letters match their upper-case form too.
 */
function caseless(word: string): string {
  let out = "";
  let inClass = false;
  for (let i = 0; i < word.length; i++) {
    const c = word[i]!;
    if (c === "\\") {
      out += c + (word[i + 1] ?? "");
      i++;
    } else if (inClass) {
      if (c === "]") inClass = false;
      const up = c.toUpperCase();
      out += up !== c && c !== "]" ? c + up : c;
    } else if (c === "[") {
      inClass = true;
      out += c;
    } else if (c === " ") {
      out += JOIN;
    } else {
      const up = c.toUpperCase();
      out += up !== c && up.length === 1 ? `[${c}${up}]` : c;
    }
  }
  return out;
}

/**
 * A regex for any of `words` (lower case; a space stands for an optional space, "_" or "-") found as
 * a word of prose or of an identifier (snake_case, camelCase, kebab-case, SCREAMING_CASE).
 * `openEnd`: the word may continue ("ssn" also in "ssnLast4"; prefix matching as `\bssn` did).
 */
export function contextWordsRe(words: readonly string[], opts: { global?: boolean; openEnd?: boolean } = {}): RegExp {
  const body = words.map(caseless).join("|");
  return new RegExp(`${LEFT}(?:${body})${opts.openEnd === true ? "" : RIGHT}`, opts.global === true ? "g" : "");
}

/**
 * A global, case-insensitive regex for `words` starting at a `\b` or after a "_" (fast over a whole
 * text: ~8 µs per 8 KB, where contextWordsRe costs ~50): check each match with atContextWordBoundary.
 * It does not find a word glued to a lower-case letter before it ("patientDob"): a start that is not a
 * `\b` made the scan ~4× slower. "dateOfBirth", "birth_date", "patient_dob" are found.
 */
export function contextWordsScanRe(words: readonly string[]): RegExp {
  return new RegExp(`(?:\\b|_)(?:${words.map(joined).join("|")})`, "gi");
}

function isLower(c: number): boolean {
  return c >= 97 && c <= 122;
}

function isUpper(c: number): boolean {
  return c >= 65 && c <= 90;
}

function isAlnum(c: number): boolean {
  return isLower(c) || isUpper(c) || (c >= 48 && c <= 57);
}

/**
 * True when text[start, end) is a whole word in prose or in an identifier (the boundaries of
 * contextWordsRe); a leading "_" (as contextWordsScanRe matches it) is skipped.
 */
export function atContextWordBoundary(text: string, start: number, end: number): boolean {
  if (text.charCodeAt(start) === 95 /* _ */) start++;
  if (start > 0) {
    const before = text.charCodeAt(start - 1);
    if (isAlnum(before) && !(isLower(before) && isUpper(text.charCodeAt(start)))) return false;
  }
  if (end < text.length) {
    const after = text.charCodeAt(end);
    if (isLower(after) || (isUpper(after) && isUpper(text.charCodeAt(end - 1)))) return false;
  }
  return true;
}
