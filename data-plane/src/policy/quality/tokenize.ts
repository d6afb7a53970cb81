// Word tokenisation shared by the lexical quality scorers: lower-cased Unicode letter/digit runs.

const WORD_RE = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu;

export function words(text: string): string[] {
  return text.toLowerCase().match(WORD_RE) ?? [];
}

/** The iterator of scanWords: one module-level regex, so it must not be nested (scan one text at a time). */
const SCAN_RE = new RegExp(WORD_RE.source, WORD_RE.flags);

/**
 * Calls `visit` with the words of `text` in order — the same words as words(text) — until it returns
 * true, without building the array (a caller that can stop early does not tokenise the rest).
 */
export function scanWords(text: string, visit: (w: string) => boolean): void {
  const lower = text.toLowerCase();
  SCAN_RE.lastIndex = 0;
  try {
    for (let m = SCAN_RE.exec(lower); m !== null; m = SCAN_RE.exec(lower)) if (visit(m[0])) return;
  } finally {
    SCAN_RE.lastIndex = 0;
  }
}
