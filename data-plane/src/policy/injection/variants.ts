// Alternative readings of the normalised text that undo cheap evasions: leetspeak and de-spaced letters.

const LEET_MAP: Readonly<Record<string, string>> = { "0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", $: "s" };
const LEET_CHAR_RE = /[013457@$]/g;
const LETTER_RE = /[a-z]/;
const LEET_CHARS = ["0", "1", "3", "4", "5", "7", "@", "$"];
/** Past this many leet characters (a table of numbers) one regex pass is cheaper than testing each. */
const MAX_HINT_PROBES = 256;
// The same test as one regex (a fallback for texts full of digits): a leet character between two
// letters, or before a letter and another leet character.
const LEET_HINT_RE = /[013457@$](?:(?<=[a-z].)(?=[a-z])|(?=[a-z][013457@$]))/;

const isLower = (c: number): boolean => c >= 97 && c <= 122;
const isLeet = (c: number): boolean => c === 48 || c === 49 || c === 51 || c === 52 || c === 53 || c === 55 || c === 64 || c === 36;

/**
 * True when `lower` shows a leet pattern (LEET_HINT_RE). Written by hand: String#indexOf finds each leet
 * character at memchr speed and prose holds few of them (0.8 µs on an 8 KB prompt against 4.4 µs for
 * the regex pass, whose leading class the engine cannot skip ahead on).
 */
export function hasLeetHint(lower: string): boolean {
  let probes = 0;
  for (const ch of LEET_CHARS) {
    for (let i = lower.indexOf(ch); i !== -1; i = lower.indexOf(ch, i + 1)) {
      if (++probes > MAX_HINT_PROBES) return LEET_HINT_RE.test(lower);
      const next = lower.charCodeAt(i + 1);
      if (isLower(next) && (isLower(lower.charCodeAt(i - 1)) || isLeet(lower.charCodeAt(i + 2)))) return true;
    }
  }
  return false;
}

/**
 * Light leetspeak folding ("1gn0r3 4ll" → "ignore all"): a leet character becomes a letter when it
 * touches a letter. Returns null when the text shows no leet pattern. Same length as the input.
 */
export function leetVariant(lower: string): string | null {
  if (!hasLeetHint(lower)) return null;
  const out = lower.replace(LEET_CHAR_RE, (ch, i: number) => {
    const prev = i > 0 ? lower[i - 1]! : "";
    const next = i + 1 < lower.length ? lower[i + 1]! : "";
    return LETTER_RE.test(prev) || LETTER_RE.test(next) || LEET_MAP[prev] !== undefined || LEET_MAP[next] !== undefined ? LEET_MAP[ch]! : ch;
  });
  return out === lower ? null : out;
}

// Four or more single letters separated by one separator: "i g n o r e", "i.g.n.o.r.e", "i-g-n-o-r-e".
const SPACED_RUN_RE = /(?<![a-z])[a-z](?:(?: {1,3}|[._*|\-/]| ?[._*|\-/] ?)[a-z]){3,}(?![a-z])/g;
// Cheap pre-check (starts at a separator): three single letters in a row.
const SPACED_HINT_RE = /[ ._*|\-/][a-z][ ._*|\-/]{1,3}[a-z][ ._*|\-/]{1,3}[a-z](?![a-z])/;
const WIDE_GAP_RE = / {2,}/g;
const SINGLE_SEP_RE = /[ ._*|\-/]/g;

const PUNCT_SEP_RE = /[._*|\-/]/;
const PUNCT_SEP_G = /[._*|\-/]/g;
const SPACES_G = / +/g;

/** Joins one run: with punctuation separators spaces split words; with spaces only, a 2+ space gap does. */
function joinRun(run: string): string {
  if (PUNCT_SEP_RE.test(run)) return run.replace(PUNCT_SEP_G, "").replace(SPACES_G, " ");
  return run.replace(WIDE_GAP_RE, "\u0000").replace(SINGLE_SEP_RE, "").replace(/\u0000/g, " ");
}

/** Joins de-spaced letter runs ("i g n o r e  a l l" → "ignore all", "i.g.n.o.r.e a.l.l" → "ignore all"); null when there are none. */
export function despacedVariant(lower: string): string | null {
  if (!SPACED_HINT_RE.test(lower)) return null;
  SPACED_RUN_RE.lastIndex = 0;
  if (!SPACED_RUN_RE.test(lower)) return null;
  SPACED_RUN_RE.lastIndex = 0;
  return lower.replace(SPACED_RUN_RE, joinRun);
}

const MAX_REVERSED_SEGMENTS = 16;

/** Text inside right-to-left overrides (U+202E … U+202C or line end) reversed, as a reader would see it. */
export function reversedSegments(text: string): { start: number; end: number; text: string }[] {
  const out: { start: number; end: number; text: string }[] = [];
  let i = text.indexOf("\u202e");
  while (i !== -1 && out.length < MAX_REVERSED_SEGMENTS) {
    let end = text.indexOf("\u202c", i + 1);
    const nl = text.indexOf("\n", i + 1);
    if (end === -1 || (nl !== -1 && nl < end)) end = nl === -1 ? text.length : nl;
    out.push({ start: i, end, text: [...text.slice(i + 1, end)].reverse().join("") });
    i = text.indexOf("\u202e", end);
  }
  return out;
}

/** "rot13", "rot-13" or "rot 13": one regex pass (three includes() cost ~7x more on long prompts). */
const MENTIONS_ROT13_RE = /rot[- ]?13/;

/** ROT13 of the text, computed only when the text mentions ROT13 (the regex only where "13" occurs: a quarter of its cost). */
export function rot13Variant(lower: string): string | null {
  if (!lower.includes("13") || !MENTIONS_ROT13_RE.test(lower)) return null;
  return lower.replace(/[a-z]/g, (c) => String.fromCharCode(((c.charCodeAt(0) - 97 + 13) % 26) + 97));
}
