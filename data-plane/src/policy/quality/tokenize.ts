// Word tokenisation shared by the lexical quality scorers: lower-cased Unicode letter/digit runs.

const WORD_RE = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu;

export function words(text: string): string[] {
  return text.toLowerCase().match(WORD_RE) ?? [];
}
