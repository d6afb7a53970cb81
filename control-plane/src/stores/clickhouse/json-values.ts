// Readers for values in JSONEachRow output. 64-bit integers arrive quoted ("5") on ClickHouse
// servers and may arrive bare from chDB; NaN/Inf arrive as null. Both are read into JS numbers.

import { TraceStoreError } from "./errors.js";

/** A number from a JSON value that may be a number, a numeric string or null (→ 0). */
export function num(value: unknown): number {
  if (typeof value === "number") return Number.isFinite(value) ? value : 0;
  if (value === null || value === undefined) return 0;
  if (typeof value === "string") {
    if (value === "nan" || value === "-nan" || value === "inf" || value === "-inf") return 0;
    const n = Number(value);
    if (value.trim() !== "" && Number.isFinite(n)) return n;
  }
  throw new TraceStoreError("bad_response", `expected a number, got ${JSON.stringify(value)}`);
}

export function str(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  throw new TraceStoreError("bad_response", `expected a string, got ${JSON.stringify(value)}`);
}

export function nullableStr(value: unknown): string | undefined {
  return value === null || value === undefined ? undefined : str(value);
}

export function strArray(value: unknown): string[] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) throw new TraceStoreError("bad_response", "expected an array of strings");
  return value.map((v) => str(v));
}

export function numArray(value: unknown): number[] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) throw new TraceStoreError("bad_response", "expected an array of numbers");
  return value.map((v) => num(v));
}

export function bool(value: unknown): boolean {
  return num(value) !== 0;
}
