// Phone numbers: a bounded candidate regex, shape filters (dates, IPs, timestamps), then
// libphonenumber-js validation of each candidate (never of the whole text).

import { isValidPhoneNumber } from "libphonenumber-js/max";
import type { CountryCode } from "libphonenumber-js/max";
import { boostWithContext } from "../context.js";
import type { PiiFinding, Recognizer } from "../types.js";

// A run of digits and phone punctuation that starts with "+", "(" or a digit and ends with a digit.
const PHONE_RE = /(?<![\w+.\-/:])\+?\(?\d[\d ().-]{5,20}\d(?![\w]|[.\-/:]\d)/g;
const CONTEXT_RE =
  /\b(?:phone|tel|telephone|mobile|cell|cellphone|call|fax|whatsapp|sms|text me|reach me|ring|handy|telefon|téléphone|portable|teléfono|telefono|móvil|cellulare|contact)\b/i;

const DATE_SHAPE_RE = /^(?:\d{4}[-./ ]\d{1,2}[-./ ]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{2,4})(?:\D|$)/;
const DOTTED_QUAD_RE = /^\d{1,3}(?:\.\d{1,3}){3}$/;
const US_SHAPE_RE = /^(?:\+?1[ .-]?)?(?:\(\d{3}\) ?|\d{3}[ .-])\d{3}[ .-]\d{4}$/;
const TRUNK_SHAPE_RE = /^\(?0\d/;
const IN_MOBILE_SHAPE_RE = /^[6-9]\d{4}[ -]\d{5}$/;
const CONTIGUOUS_RE = /^\d+$/;
const NATIONAL_TRUNK_COUNTRIES: readonly CountryCode[] = ["GB", "DE", "FR", "IN"];

const VALIDITY_CACHE_LIMIT = 512;
const validityCache = new Map<string, boolean>();

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
  if (validityCache.size >= VALIDITY_CACHE_LIMIT) validityCache.clear();
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

/** Base score of a candidate that is a valid phone number, or 0 when it is not one. */
export function phoneCandidateScore(candidate: string): number {
  const digits = countDigits(candidate);
  if (digits < 7 || digits > 15) return 0;
  if (DATE_SHAPE_RE.test(candidate) || DOTTED_QUAD_RE.test(candidate)) return 0;
  if (candidate.charCodeAt(0) === 43 /* + */) {
    return digits >= 8 && cachedValid(candidate, undefined) ? 0.9 : 0;
  }
  if (candidate.startsWith("00")) {
    return digits >= 10 && cachedValid("+" + candidate.slice(2), undefined) ? 0.75 : 0;
  }
  const contiguous = CONTIGUOUS_RE.test(candidate);
  if (US_SHAPE_RE.test(candidate) || (contiguous && (digits === 10 || (digits === 11 && candidate[0] === "1")))) {
    if (cachedValid(candidate, "US")) return contiguous ? 0.3 : 0.7;
  }
  if (TRUNK_SHAPE_RE.test(candidate)) {
    for (const country of NATIONAL_TRUNK_COUNTRIES) {
      if (cachedValid(candidate, country)) return contiguous ? 0.3 : 0.7;
    }
    return 0;
  }
  if (IN_MOBILE_SHAPE_RE.test(candidate) && cachedValid(candidate, "IN")) return 0.6;
  return 0;
}

export const phoneRecognizer: Recognizer = {
  entityType: "phone",
  scan(text: string, out: PiiFinding[]): void {
    PHONE_RE.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = PHONE_RE.exec(text)) !== null) {
      let candidate = m[0];
      let score = phoneCandidateScore(candidate);
      // "call 415 555 0132 2024": drop up to two trailing space-separated groups and retry.
      for (let tries = 0; score === 0 && tries < 2; tries++) {
        const cut = candidate.lastIndexOf(" ");
        if (cut < 6) break;
        candidate = candidate.slice(0, cut).replace(/[ (.-]+$/, "");
        score = phoneCandidateScore(candidate);
      }
      if (score === 0) continue;
      const start = m.index;
      out.push({ entityType: "phone", start, end: start + candidate.length, score: boostWithContext(text, start, score, CONTEXT_RE) });
    }
  },
};
