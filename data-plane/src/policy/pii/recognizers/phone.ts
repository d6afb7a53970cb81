// Phone numbers: a bounded candidate regex, shape filters (dates, IPs, timestamps), then
// libphonenumber-js validation of each candidate (never of the whole text).

import { isValidPhoneNumber } from "libphonenumber-js/max";
import type { CountryCode } from "libphonenumber-js/max";
import { boostWithContext, hasContextBefore } from "../context.js";
import { contextWordsRe } from "../context-words.js";
import { scanNearDigitRuns, type DigitRuns, type DigitScan } from "../digit-runs.js";
import type { PiiFinding, Recognizer } from "../types.js";

// A run of digits and phone punctuation that starts with "+", "(" or a digit and ends with a digit,
// not glued to other digit groups ("ZZ84 0320 8119 …", "… 0132 2024"). A group of two digits that is
// the start of a "24/7" or a time ("24/", "14:") is not a group of the number. It may follow a ":"
// ("tel:+14155550132" in a link, "Phone:+1…"): a time's or an address's groups are too short to be a
// candidate.
const PHONE_RE = /(?<![\w+.\-/])(?<!\d[ -])\+?\(?\d[\d ().-]{4,19}\d{2}(?![\w]|[.\-/:]\d|[ -]\d{2}(?![/:]))/g;
/** Every candidate ends in two digits and is at most "+(" + 21 digits and punctuation long; look-arounds reach 4 characters past it. */
export const phoneDigitScan: DigitScan = { re: PHONE_RE, minRun: 2, maxLen: 24 };
/** Also as identifiers: "phone_number", "mobilePhone", "PHONE_NUMBER" (context-words.ts). */
const CONTEXT_RE = contextWordsRe([
  "phone", "tel", "telephone", "mobile", "cell", "cellphone", "call", "fax", "whatsapp", "sms", "text me", "reach me", "ring",
  "handy", "telefon", "téléphone", "portable", "teléfono", "telefono", "móvil", "cellulare", "contact",
]);

const DATE_SHAPE_RE = /^(?:\d{4}[-./ ]\d{1,2}[-./ ]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4})(?:\D|$)/;
const DOTTED_QUAD_RE = /^\d{1,3}(?:\.\d{1,3}){3}$/;
const CONTIGUOUS_RE = /^\d+$/;
// National formats as people write them; a candidate is validated only for the countries whose shape it has.
const US_SHAPE_RE = /^(?:1[ .-]?)?(?:\(\d{3}\) ?|\d{3}[ .-])\d{3}[ .-]\d{4}$/;
const NATIONAL_SHAPES: readonly { country: CountryCode; shape: RegExp }[] = [
  { country: "GB", shape: /^\(?0\d{2,4}\)? \d{3,4}(?: \d{3,4})?$/ },
  { country: "DE", shape: /^\(?0\d{2,4}\)?[ /-]?\d{4,8}$|^0\d{2,4} \d{2,4} \d{2,5}$/ },
  { country: "FR", shape: /^0\d(?:[ .]\d{2}){4}$/ },
  { country: "IN", shape: /^0\d{2,4}[ -]\d{6,8}$|^0?[6-9]\d{4}[ -]\d{5}$/ },
  { country: "NL", shape: /^0\d{1,3}[ -]\d{3,8}(?: \d{2,4})?$/ },
  { country: "AU", shape: /^\(0\d\) \d{4} \d{4}$|^0\d \d{4} \d{4}$|^04\d{2} \d{3} \d{3}$/ },
  { country: "JP", shape: /^0\d{1,4}-\d{1,4}-\d{4}$/ },
  { country: "IT", shape: /^0\d{1,3} \d{3,4} ?\d{3,4}$/ },
];
const NATIONAL_CONTIGUOUS: readonly CountryCode[] = ["GB", "DE", "FR", "IN", "NL", "AU", "JP", "IT"];
/**
 * National formats without a trunk "0" (Spanish 9-digit numbers, Italian mobiles, Brazilian area codes),
 * shaped like other digit groups (amounts, codes): counted only next to a phone word.
 */
const NATIONAL_SHAPES_WITH_CONTEXT: readonly { country: CountryCode; shape: RegExp }[] = [
  { country: "ES", shape: /^[6-9]\d{2} \d{2} \d{2} \d{2}$|^[6-9]\d{2} \d{3} \d{3}$/ },
  { country: "IT", shape: /^3\d{2} \d{3} ?\d{3,4}$/ },
  { country: "BR", shape: /^\(?\d{2}\)? 9?\d{4}-\d{4}$/ },
];

/** Candidate → validity, oldest entry evicted first; conversations resend the same numbers every turn. */
const VALIDITY_CACHE_LIMIT = 2048;
const validityCache = new Map<string, boolean>();

/** Empties the per-candidate validity cache (benchmarks use it to measure cold validation). */
export function resetPhoneValidityCache(): void {
  validityCache.clear();
}

function cachedValid(candidate: string, country: CountryCode | undefined): boolean {
  const key = country === undefined ? candidate : country + "|" + candidate;
  const hit = validityCache.get(key);
  if (hit !== undefined) return hit;
  let ok: boolean;
  try {
    ok = country === undefined ? isValidPhoneNumber(candidate) : isValidPhoneNumber(candidate, country);
  } catch {
    ok = false; // libphonenumber throws on some malformed input; treat as not a phone
  }
  if (validityCache.size >= VALIDITY_CACHE_LIMIT) {
    const oldest = validityCache.keys().next();
    if (oldest.done !== true) validityCache.delete(oldest.value);
  }
  validityCache.set(key, ok);
  return ok;
}

function countDigits(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) n++;
  }
  return n;
}

/**
 * Base score of a candidate that is a valid phone number, or 0 when it is not one.
 * `contextPresent` is asked only for bare digit runs, which count only next to a phone word
 * (so libphonenumber is not run on every order number or timestamp).
 */
export function phoneCandidateScore(candidate: string, contextPresent: () => boolean = () => true): number {
  const digits = countDigits(candidate);
  if (digits < 7 || digits > 15) return 0;
  const first = candidate.charCodeAt(0);
  const international = first === 43 /* + */ || candidate.startsWith("00");
  // "0033 6 12 34 56 78" starts like "2024 6 12": an international prefix is no date.
  if ((!international && DATE_SHAPE_RE.test(candidate)) || DOTTED_QUAD_RE.test(candidate)) return 0;
  if (first === 43 /* + */) return digits >= 8 && cachedValid(candidate, undefined) ? 0.9 : 0;
  if (candidate.startsWith("00")) return digits >= 10 && cachedValid("+" + candidate.slice(2), undefined) ? 0.75 : 0;
  if (CONTIGUOUS_RE.test(candidate)) {
    // Bare digit runs (order ids, Unix timestamps…) count only with a phone context word.
    if (!contextPresent()) return 0;
    if ((digits === 10 || (digits === 11 && first === 49)) && cachedValid(candidate, "US")) return 0.3;
    if (first === 48 /* 0 */) {
      for (const c of NATIONAL_CONTIGUOUS) if (cachedValid(candidate, c)) return 0.3;
    }
    return 0;
  }
  // A US shape that is no US number may be another country's ("020 123 4567" in Amsterdam).
  if (US_SHAPE_RE.test(candidate) && cachedValid(candidate, "US")) return 0.7;
  for (const { country, shape } of NATIONAL_SHAPES) {
    if (shape.test(candidate) && cachedValid(candidate, country)) return 0.55;
  }
  for (const { country, shape } of NATIONAL_SHAPES_WITH_CONTEXT) {
    if (shape.test(candidate) && contextPresent() && cachedValid(candidate, country)) return 0.3;
  }
  return 0;
}

export const phoneRecognizer: Recognizer = {
  entityType: "phone",
  scan(text: string, out: PiiFinding[], runs: DigitRuns | null): void {
    scanNearDigitRuns(text, phoneDigitScan, runs, (m, start) => {
      const score = phoneCandidateScore(m[0], () => hasContextBefore(text, start, CONTEXT_RE));
      if (score === 0) return;
      out.push({ entityType: "phone", start, end: start + m[0].length, score: boostWithContext(text, start, score, CONTEXT_RE) });
    });
  },
};
