// Inputs of the daily-budget reservation (decisions.md 7): the UTC day of a request, the most output
// tokens the request allows, and the Retry-After of a budget refusal (seconds to the next UTC midnight).
const DAY_MS = 86_400_000;

let dayStart = 0;
let dayEnd = 0;
let dayText = "";

/** 'YYYY-MM-DD' (UTC) of an epoch-ms time; the string is computed once per day. */
export function utcDay(ms: number): string {
  if (ms < dayStart || ms >= dayEnd) {
    dayStart = ms - (ms % DAY_MS);
    dayEnd = dayStart + DAY_MS;
    dayText = new Date(dayStart).toISOString().slice(0, 10);
  }
  return dayText;
}

export function secondsToUtcMidnight(ms: number): number {
  const next = ms - (ms % DAY_MS) + DAY_MS;
  return Math.max(1, Math.ceil((next - ms) / 1000));
}

/** Output tokens reserved when a request sets no maximum. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/** The request's output-token maximum in whichever native field it uses, else DEFAULT_MAX_OUTPUT_TOKENS. */
export function maxOutputTokens(body: unknown): number {
  if (!body || typeof body !== "object") return DEFAULT_MAX_OUTPUT_TOKENS;
  const b = body as Record<string, unknown>;
  const cfg = (b.generationConfig ?? b.generation_config) as Record<string, unknown> | undefined;
  const v = b.max_completion_tokens ?? b.max_tokens ?? b.max_output_tokens ?? cfg?.maxOutputTokens ?? cfg?.max_output_tokens;
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.min(Math.floor(v), 1_000_000) : DEFAULT_MAX_OUTPUT_TOKENS;
}
