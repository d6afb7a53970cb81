// Time helpers for the trace store. Both engines get times as 'YYYY-MM-DD hh:mm:ss' (UTC) or epoch
// seconds; milliseconds live in a separate Int64 column. DateTime is a UInt32 of seconds, so times
// are clamped to what it can hold.

import { TraceStoreError } from "./errors.js";

export const MIN_MS = 0;
/** Last millisecond a DateTime (UInt32 seconds) can hold. */
export const MAX_MS = 4_294_967_295_999;
export const DAY_MS = 86_400_000;

/** 'YYYY-MM-DD hh:mm:ss' in UTC for an epoch-ms value. */
export function formatDateTime(ms: number): string {
  const iso = new Date(ms).toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}

/** Epoch ms of a Date, refusing invalid dates. */
export function dateMs(d: Date, what: string): number {
  const ms = d instanceof Date ? d.getTime() : Number.NaN;
  if (!Number.isFinite(ms)) throw new TraceStoreError("invalid_argument", `${what} is not a valid date`);
  return ms;
}

export function clampMs(ms: number): number {
  return Math.min(MAX_MS, Math.max(MIN_MS, Math.floor(ms)));
}

/** Whole seconds of an epoch-ms value (for DateTime comparisons). */
export function seconds(ms: number): number {
  return Math.floor(ms / 1000);
}

/** Epoch ms of 00:00:00 UTC of a 'YYYY-MM-DD' day, refusing anything else. */
export function utcDayStartMs(day: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) throw new TraceStoreError("invalid_argument", `not a YYYY-MM-DD day: ${JSON.stringify(day)}`);
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  if (!Number.isFinite(ms) || formatDateTime(ms).slice(0, 10) !== day) {
    throw new TraceStoreError("invalid_argument", `not a calendar day: ${day}`);
  }
  return ms;
}

/** Epoch ms of the first instant of the month after a 'YYYYMM' partition id, or null if it is not one. */
export function monthPartitionEndMs(partitionId: string): number | null {
  const m = /^(\d{4})(\d{2})$/.exec(partitionId);
  if (!m) return null;
  const year = Number(m[1]);
  const month = Number(m[2]);
  if (month < 1 || month > 12) return null;
  return Date.UTC(year, month, 1); // Date.UTC months are 0-based: `month` is the next one
}
