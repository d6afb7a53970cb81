// Inputs of the daily-budget reservation (decisions.md 7): the UTC day of a request, the most output
// tokens the request can be billed for, and the Retry-After of a budget refusal (seconds to the next UTC midnight).
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

/**
 * The most output tokens a model can answer with, when the request sets no maximum: the reservation must
 * be an upper bound, or parallel requests overspend (a gpt-4o answer without max_tokens reached 16,384
 * tokens against the 4,096 reserved before). Published maxima of the current models, by name prefix,
 * first match; else the provider's largest. Anthropic requires max_tokens.
 */
const MAX_OUTPUT_BY_MODEL: Readonly<Record<string, readonly (readonly [string, number])[]>> = {
  openai: [["gpt-5", 128_000], ["o1", 100_000], ["o3", 100_000], ["o4", 100_000], ["gpt-4.1", 32_768], ["gpt-4o", 16_384], ["gpt-4-turbo", 4_096], ["gpt-4", 8_192], ["gpt-3.5", 4_096], ["", 128_000]],
  anthropic: [["", 128_000]],
  google: [["gemini-1.5", 8_192], ["gemini-2.0", 8_192], ["", 65_536]],
  // Mistral bounds an answer by the context window only (128k for the current models).
  mistral: [["", 131_072]],
  cohere: [["command-r", 4_096], ["command-a", 8_192], ["", 32_768]],
};
const LARGEST_MAX_OUTPUT = 131_072;

/** Output tokens reserved for a request to `model` of `provider` that sets no maximum. */
export function modelMaxOutputTokens(provider: string, model: string): number {
  const name = model.toLowerCase().replace(/^models\//, "");
  for (const [prefix, max] of MAX_OUTPUT_BY_MODEL[provider] ?? []) if (name.startsWith(prefix)) return max;
  return LARGEST_MAX_OUTPUT;
}

/**
 * The most output tokens the request can be billed for: its maximum in whichever native field it uses
 * (else the model's, modelMaxOutputTokens), times the answers it asks for (OpenAI/Mistral `n`, Gemini
 * `candidateCount`: each is billed).
 */
export function maxOutputTokens(body: unknown, provider: string, model: string): number {
  const b = body && typeof body === "object" ? (body as Record<string, unknown>) : {};
  const cfg = (b.generationConfig ?? b.generation_config) as Record<string, unknown> | undefined;
  const v = b.max_completion_tokens ?? b.max_tokens ?? b.max_output_tokens ?? cfg?.maxOutputTokens ?? cfg?.max_output_tokens;
  const each = typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.min(Math.floor(v), 1_000_000) : modelMaxOutputTokens(provider, model);
  const n = b.n ?? cfg?.candidateCount ?? cfg?.candidate_count;
  const answers = typeof n === "number" && Number.isFinite(n) && n > 1 ? Math.min(Math.floor(n), 128) : 1;
  return each * answers;
}
