// IBAN validation: ISO 13616 per-country lengths and the ISO 7064 mod-97-10 check.

/** IBAN length per country (SWIFT IBAN registry). */
export const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BI: 27, BR: 29, BY: 28,
  CH: 21, CR: 22, CY: 28, CZ: 24, DE: 22, DJ: 27, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18,
  FK: 18, FO: 18, FR: 27, GB: 22, GE: 22, GI: 23, GL: 18, GR: 27, GT: 28, HN: 28, HR: 21, HU: 28,
  IE: 22, IL: 23, IQ: 23, IS: 26, IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28, LC: 32, LI: 21, LT: 20,
  LU: 20, LV: 21, LY: 25, MC: 27, MD: 24, ME: 22, MK: 19, MN: 20, MR: 27, MT: 31, MU: 30, NI: 28,
  NL: 18, NO: 15, OM: 23, PK: 24, PL: 28, PS: 29, PT: 25, QA: 29, RO: 24, RS: 22, RU: 33, SA: 24,
  SC: 31, SD: 18, SE: 24, SI: 19, SK: 24, SM: 27, SO: 23, ST: 25, SV: 28, TL: 23, TN: 24, TR: 26,
  UA: 29, VA: 22, VG: 24, XK: 20, YE: 30,
};

/** Remainder mod 97 of the rearranged IBAN (first four characters moved to the end, letters A=10…Z=35). */
export function ibanMod97(iban: string): number {
  let rem = 0;
  const n = iban.length;
  for (let k = 0; k < n; k++) {
    const c = iban.charCodeAt((k + 4) % n);
    if (c >= 48 && c <= 57) {
      rem = (rem * 10 + (c - 48)) % 97;
    } else if (c >= 65 && c <= 90) {
      rem = (rem * 100 + (c - 55)) % 97;
    } else {
      return -1;
    }
  }
  return rem;
}

/** True for a compact (no spaces) upper-case IBAN with a known country, the right length and check digits. */
export function ibanValid(compact: string): boolean {
  const expected = IBAN_LENGTHS[compact.slice(0, 2)];
  if (expected === undefined || compact.length !== expected) return false;
  return ibanMod97(compact) === 1;
}

/** Computes the two check digits for a country code and BBAN. */
export function ibanCheckDigits(country: string, bban: string): string {
  const rem = ibanMod97(country + "00" + bban);
  const check = 98 - rem;
  return check < 10 ? "0" + check : String(check);
}
