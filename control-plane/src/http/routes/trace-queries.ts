// What the trace routes of both groups share: strict query parameters for time bounds and numbers,
// the mapping of trace-store failures to REST errors, and current agent names for display.
import { z } from "../openapi/zod.js";
import { badRequest } from "../../errors/app-error.js";
import { isTraceStoreError } from "../../stores/clickhouse/index.js";
import type { Queryable } from "../../stores/postgres/db.js";
import { isStorableText } from "../../domain/storable-text.js";

const DAY_MS = 86_400_000;
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** Epoch ms of 00:00 UTC of a calendar day, or NaN when the day does not exist (2026-02-30). */
function utcDayMs(y: string, mo: string, d: string): number {
  const date = new Date(0);
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d)); // unlike Date.UTC, years 0–99 stay as they are
  return date.toISOString().slice(0, 10) === `${y}-${mo}-${d}` ? date.getTime() : Number.NaN;
}

/** Epoch ms of an ISO 8601 date or date-time (no offset = UTC), or NaN when it is not a real calendar time. */
export function parseIsoMs(s: string, dateOnlyAs: "start" | "end"): number {
  const d = DATE_ONLY.exec(s);
  if (d) {
    const ms = utcDayMs(d[1]!, d[2]!, d[3]!);
    return dateOnlyAs === "end" ? ms + DAY_MS - 1 : ms;
  }
  const m = DATE_TIME.exec(s);
  if (!m) return Number.NaN;
  const [, y = "", mo = "", da = "", h, mi, se = "00", frac = "", zone = "Z"] = m;
  const ymd = `${y}-${mo}-${da}`;
  if (Number.isNaN(utcDayMs(y, mo, da)) || Number(h) > 23 || Number(mi) > 59 || Number(se) > 59) return Number.NaN;
  const offset = zone.toUpperCase() === "Z" ? "Z" : zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone;
  return Date.parse(`${ymd}T${h}:${mi}:${se}.${(frac + "000").slice(0, 3)}${offset}`);
}

/**
 * An inclusive time bound: ISO 8601 date-time (offset optional, UTC when absent) or a date. A date
 * as an end bound means the end of that UTC day, as a start bound its beginning.
 */
export function timeBoundParam(as: "start" | "end") {
  return z
    .string()
    .max(40)
    .refine((s) => Number.isFinite(parseIsoMs(s, as)), { message: "must be an ISO 8601 date or date-time" })
    .transform((s) => new Date(parseIsoMs(s, as)))
    .openapi({
      type: "string",
      format: "date-time",
      description: as === "end" ? "Inclusive; a date alone means the end of that UTC day" : "Inclusive; a date alone means the start of that UTC day",
    });
}

const DECIMAL = /^[+-]?(\d{1,20}(\.\d{0,20})?|\.\d{1,20})([eE][+-]?\d{1,3})?$/;

/** A finite decimal number within [min, max]. */
export function numberParam(min: number, max: number, description: string) {
  return z
    .string()
    .max(48)
    .regex(DECIMAL, "must be a decimal number")
    .transform(Number)
    .pipe(z.number().finite().min(min).max(max))
    .openapi({ type: "number", minimum: min, maximum: max, description });
}

/** A free-text filter value (agent id): compared for equality, escaped by the store. */
export const filterString = z.string().min(1).max(200);
/**
 * The environment filter: as on GET /api/agents, an empty value is a value, the environment of agents
 * created without one (their traces carry ""), not an error.
 */
export const environmentFilter = z.string().max(200);

/**
 * Runs a trace-store call; an argument the store refuses becomes a 400. An unavailable engine is
 * answered 503 by the error handler (http/middleware/errors.ts), as for every route.
 */
export async function fromStore<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    if (isTraceStoreError(e) && e.code === "invalid_argument") throw badRequest(e.message);
    throw e;
  }
}

/** Current names of the given agents of the tenant (agents renamed since a trace keep one name). */
export async function agentNames(db: Queryable, tenantId: string, ids: Iterable<string>): Promise<Map<string, string>> {
  // Trace rows come from ingest, not from a checked request: an id Postgres cannot take is no agent's.
  const list = [...new Set(ids)].filter(isStorableText);
  if (list.length === 0) return new Map();
  const r = await db.query<{ id: string; name: string }>("SELECT id, name FROM agents WHERE tenant_id = $1 AND id = ANY($2)", [tenantId, list]);
  return new Map(r.rows.map((row) => [row.id, row.name]));
}
