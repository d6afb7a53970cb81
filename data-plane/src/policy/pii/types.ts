// Public PII types and the internal shapes shared by the recognizers.

import type { DigitRuns } from "./digit-runs.js";

export const PII_TYPES = [
  "ssn",
  "credit_card",
  "email",
  "phone",
  "ip_address",
  "iban",
  "us_bank_routing",
  "us_passport",
  "api_key",
  "date_of_birth",
] as const;

export type PiiType = (typeof PII_TYPES)[number];

/** One detected entity: UTF-16 offsets into the scanned text, end exclusive. */
export interface PiiFinding {
  entityType: PiiType;
  start: number;
  end: number;
  /** Confidence in [0,1] after validation and context boost. */
  score: number;
}

/** A recognizer finds candidates of one entity type, already validated and context-boosted. */
export interface Recognizer {
  readonly entityType: PiiType;
  /**
   * Appends findings (possibly overlapping, possibly below threshold) to `out`. `digits` are the
   * text's digit runs (digit-runs.ts), for recognizers that only match around them; null = scan all of it.
   */
  scan(text: string, out: PiiFinding[], digits: DigitRuns | null): void;
}

export function isPiiType(value: string): value is PiiType {
  return (PII_TYPES as readonly string[]).includes(value);
}
