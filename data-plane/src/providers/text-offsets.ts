// Offsets into text in the units providers count in: UTF-16 code units (JavaScript strings, our
// redaction), Unicode code points (Cohere, whose API is Python; OpenAI url_citation annotations),
// UTF-8 bytes (Gemini grounding segments and citation sources).

export type OffsetUnit = "utf16" | "codepoints" | "utf8";

/** The UTF-16 index of offset `n` counted in `unit` over `text` (clamped to the text). */
export function toUtf16(text: string, n: number, unit: OffsetUnit): number {
  if (unit === "utf16") return Math.max(0, Math.min(n, text.length));
  let units = 0;
  let counted = 0;
  for (const ch of text) {
    if (counted >= n) break;
    counted += unit === "codepoints" ? 1 : Buffer.byteLength(ch, "utf8");
    units += ch.length;
  }
  return units;
}

/** Offset `u` (a UTF-16 index into `text`) counted in `unit`. */
export function fromUtf16(text: string, u: number, unit: OffsetUnit): number {
  const head = text.slice(0, Math.max(0, Math.min(u, text.length)));
  if (unit === "utf16") return head.length;
  if (unit === "utf8") return Buffer.byteLength(head, "utf8");
  let n = 0;
  for (const _ of head) n++;
  return n;
}

/**
 * The unit in which [start, end) of `text` is `quoted` (UTF-16 tried first, then the others), or
 * undefined when no unit makes the range quote it: the quote then cannot be placed.
 */
export function unitOfQuote(text: string, start: number, end: number, quoted: string, units: readonly OffsetUnit[]): OffsetUnit | undefined {
  return units.find((u) => text.slice(toUtf16(text, start, u), toUtf16(text, end, u)) === quoted);
}

/** Whether offset `n` counted in `unit` lies within `text`, on a character boundary (never inside a UTF-8 sequence). */
function fits(text: string, n: number, unit: OffsetUnit): boolean {
  return fromUtf16(text, toUtf16(text, n, unit), unit) === n;
}

/**
 * For a quote that carries no text (offsets only): the first of `units` in which [start, end) lies
 * within `text`, preferring one whose slice contains `expected` (a string the range should hold,
 * such as the URL of an OpenAI url_citation) when the units disagree on it; undefined when the range
 * fits the text in no unit: the quote then cannot be placed.
 */
export function unitOfRange(text: string, start: number, end: number, units: readonly OffsetUnit[], expected?: string): OffsetUnit | undefined {
  const fitting = units.filter((u) => fits(text, start, u) && fits(text, end, u));
  if (expected) {
    const verified = fitting.find((u) => text.slice(toUtf16(text, start, u), toUtf16(text, end, u)).includes(expected));
    if (verified !== undefined) return verified;
  }
  return fitting[0];
}
