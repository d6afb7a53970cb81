// Objects that quote output text by offset (Cohere citations, Gemini grounding segments): after an
// outbound redaction they must quote the text the client got, never the value that was redacted.
// A quote is trusted only when its text is what its offsets point at in the original (in one of the
// provider's offset units); it is then moved onto the redacted text and quotes that. A quote that
// cannot be placed is the caller's to redact on its own (fail closed).
// Objects that point into the text by offset without quoting it (OpenAI url_citation annotations,
// Gemini citationSources) go through the same functions with no text: their range is placed where it
// fits the text (unitOfRange) and moved the same way; one that cannot be placed is left as it was
// (there is no text to leak). Their model-written strings (a URL, a title) are redacted on their own
// (redactStrings), placed or not.
import type { JsonObject } from "./json.js";
import type { RangeMapper } from "./shift-range.js";
import { fromUtf16, toUtf16, unitOfQuote, unitOfRange, type OffsetText, type OffsetUnit } from "./text-offsets.js";

/** Where a quote object keeps its offsets and its text. A missing start counts as 0 (proto3 JSON omits it). */
export interface QuoteFields {
  start: string;
  end: string;
  /** Where its text is; an object without that key quotes by offset only. */
  text: string;
  /**
   * For an object without text: a key whose string value its range should contain (OpenAI
   * url_citation `url`, the markdown link it covers), which picks the unit when the units disagree.
   */
  verify?: string;
}

export interface PlacedQuote {
  unit: OffsetUnit;
  /** UTF-16 range in the original text. */
  start: number;
  end: number;
}

/**
 * Where the quote points in `text` (the original), or undefined when it cannot be placed there: offsets
 * that are not integers or end before they start, a text its offsets do not point at in any unit, or
 * (no text) a range outside the text in every unit.
 */
export function placeQuote(quote: JsonObject, f: QuoteFields, text: OffsetText, units: readonly OffsetUnit[]): PlacedQuote | undefined {
  const start = quote[f.start] ?? 0;
  const end = quote[f.end];
  if (typeof start !== "number" || typeof end !== "number" || !Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end < start) return undefined;
  const quoted = quote[f.text];
  if (quoted !== undefined && typeof quoted !== "string") return undefined; // malformed: redacted on its own
  const expected = f.verify === undefined ? undefined : quote[f.verify];
  const unit = typeof quoted === "string" ? unitOfQuote(text, start, end, quoted, units) : unitOfRange(text, start, end, units, typeof expected === "string" ? expected : undefined);
  if (unit === undefined) return undefined;
  return { unit, start: toUtf16(text, start, unit), end: toUtf16(text, end, unit) };
}

/**
 * A quote whose offsets are wrong, placed where its text first occurs in `text`; its offsets are written
 * back in `unit` (the provider's own).
 */
export function placeByText(quote: JsonObject, f: QuoteFields, text: OffsetText, unit: OffsetUnit): PlacedQuote | undefined {
  const quoted = quote[f.text];
  if (typeof quoted !== "string" || quoted === "") return undefined;
  const at = text.indexOf(quoted);
  return at < 0 ? undefined : { unit, start: at, end: at + quoted.length };
}

/** A quote's text for redacting on its own: the text, or a malformed (non-string) value as JSON. */
export function quoteText(quote: JsonObject, f: QuoteFields): string | undefined {
  const value = quote[f.text];
  return value === undefined ? undefined : typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * Moves a placed quote onto `after`, the redacted copy the client got (`map` maps the original's
 * ranges onto it): offsets in the quote's own unit, text (when it has one) cut from `after`. Leaves a
 * quote whose range and text did not change as it was (byte for byte).
 */
export function moveQuote(quote: JsonObject, f: QuoteFields, placed: PlacedQuote, after: OffsetText, map: RangeMapper): boolean {
  const [s, e] = map(placed.start, placed.end);
  const text = after.slice(s, e);
  const start = fromUtf16(after, s, placed.unit);
  const end = fromUtf16(after, e, placed.unit);
  const unchanged = (quote[f.start] ?? 0) === start && quote[f.end] === end && (typeof quote[f.text] !== "string" || quote[f.text] === text);
  if (unchanged) return false;
  if (quote[f.start] !== undefined || start !== 0) quote[f.start] = start;
  quote[f.end] = end;
  if (typeof quote[f.text] === "string") quote[f.text] = text;
  return true;
}

/**
 * Redacts the string values of `keys` in `object` (model-written fields beside a quote's offsets: a
 * citation's URL and title), each on its own; a value that redaction leaves as it is stays untouched.
 */
export function redactStrings(object: JsonObject, keys: readonly string[], redactText: (text: string) => string): void {
  for (const key of keys) {
    const value = object[key];
    if (typeof value !== "string") continue;
    const redacted = redactText(value);
    if (redacted !== value) object[key] = redacted;
  }
}

/**
 * `text` with every value an answer redacted replaced by its label: a quote that cannot be placed may
 * hold a value only its context found (an SSN without the word "SSN"). Values under 3 characters are
 * left alone (too likely to match by chance).
 */
export function withoutRedactedValues(text: string, values: ReadonlyMap<string, string>): string {
  let out = text;
  for (const [value, label] of values) if (value.length >= 3 && out.includes(value)) out = out.split(value).join(`[REDACTED:${label}]`);
  return out;
}
