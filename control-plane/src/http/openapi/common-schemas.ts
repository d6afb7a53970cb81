// Schemas shared by many routes: error bodies, pagination parameters, timestamps.
import { z } from "./zod.js";

export const Timestamp = z.string().openapi({ format: "date-time", example: "2026-11-21T10:00:00.000Z" });

export const ErrorA = z
  .object({ error: z.object({ code: z.string(), message: z.string(), request_id: z.string() }) })
  .openapi("ErrorA");

export const ErrorB = z
  .object({ error: z.string(), details: z.array(z.object({ path: z.string(), message: z.string() })).optional() })
  .openapi("ErrorB");

/**
 * An integer query parameter within [min, max] with a default; limit=abc, limit=0, limit=201 are 400s.
 * Any count of digits is a whole number, so a value over max is reported as too big, not as malformed.
 */
export function intParam(def: number, min: number, max: number) {
  return z
    .string()
    .regex(/^\d+$/, "must be a whole number")
    // Digits past what a double holds exactly are all above every max: clamping keeps the "Too big" message.
    .transform((s) => Math.min(Number(s), Number.MAX_SAFE_INTEGER))
    .pipe(z.number().int().min(min).max(max))
    .optional()
    .transform((v) => v ?? def)
    .openapi({ type: "integer", default: def, minimum: min, maximum: max });
}

export const cursorLimit = (def: number, max: number) => intParam(def, 1, max);
export const offsetParam = () => intParam(0, 0, 1_000_000_000);

/** ISO 8601 date or date-time query parameter. */
export const isoDateParam = z
  .string()
  .max(40)
  .refine((s) => /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(s) && !Number.isNaN(Date.parse(s)), {
    message: "must be an ISO 8601 date-time",
  })
  .transform((s) => new Date(s))
  .openapi({ type: "string", format: "date-time" });

export const boolParam = z
  .enum(["true", "false"])
  .transform((v) => v === "true")
  .openapi({ type: "boolean" });

export const iso = (d: Date): string => d.toISOString();
