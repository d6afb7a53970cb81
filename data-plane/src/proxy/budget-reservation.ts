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
  cohere: [["command-r", 4_096], ["command-a-reasoning", 32_000], ["command-a", 8_192], ["", 32_768]],
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

/**
 * The input tokens a request can be billed for, by the model's context window (published limits, by name
 * prefix, first match; else the provider's largest; Anthropic 1M with its long-context beta). Used when the
 * request carries input whose tokens its bytes do not bound (see requestAttachments).
 */
const CONTEXT_WINDOW_BY_MODEL: Readonly<Record<string, readonly (readonly [string, number])[]>> = {
  openai: [["gpt-4.1", 1_047_576], ["gpt-5", 400_000], ["o1", 200_000], ["o3", 200_000], ["o4", 200_000], ["gpt-4o", 128_000], ["gpt-4-turbo", 128_000], ["gpt-3.5", 16_385], ["", 1_047_576]],
  anthropic: [["", 1_000_000]],
  google: [["gemini-1.5-pro", 2_097_152], ["", 1_048_576]],
  mistral: [["", 262_144]],
  cohere: [["", 256_000]],
};
const LARGEST_CONTEXT_WINDOW = 2_097_152;

export function modelContextWindow(provider: string, model: string): number {
  const name = model.toLowerCase().replace(/^models\//, "");
  for (const [prefix, max] of CONTEXT_WINDOW_BY_MODEL[provider] ?? []) if (name.startsWith(prefix)) return max;
  return LARGEST_CONTEXT_WINDOW;
}

export interface RequestAttachments {
  /** UTF-16 length of inline media payloads (base64 images, audio, video): no fewer bytes than the tokens they bill. */
  mediaChars: number;
  /**
   * Input whose tokens its bytes do not bound: a document (a PDF bills text plus an image per page, more
   * tokens than its compressed bytes) or a file referenced by URL or id (a few bytes for an image, a PDF or
   * an hour of video).
   */
  unbounded: boolean;
}

/**
 * Keys that reference a file by URL or id in the five providers' content parts, and input the provider
 * keeps (OpenAI Responses `previous_response_id` and `conversation`: the earlier turns are billed as input).
 */
const REFERENCE_KEYS = new Set(["file_id", "fileUri", "file_uri", "document_url", "previous_response_id", "conversation"]);
/** Parent keys / part types under which a `url` names media to fetch (OpenAI/Mistral image_url, Anthropic source, Cohere). */
const MEDIA_URL_HOLDERS = new Set(["image_url", "source", "input_image", "audio_url", "video_url"]);
const DOCUMENT_TYPE = /pdf|document|msword|officedocument|opendocument|rtf|epub/i;
/**
 * Tools the provider runs, feeding their results back to the model as input it bills (OpenAI Responses
 * web/file search, MCP, code interpreter; Anthropic server tools `web_search_…`, `web_fetch_…`,
 * `code_execution_…`; Gemini `googleSearch`, `urlContext`, `codeExecution`): the input is unbounded.
 */
const HOSTED_TOOL_TYPE = /^(?:web_search|file_search|mcp$|code_interpreter$|web_fetch|code_execution)/;
const HOSTED_TOOL_KEYS = new Set(["googleSearch", "google_search", "googleSearchRetrieval", "google_search_retrieval", "urlContext", "url_context", "codeExecution", "code_execution"]);
const DATA_URL = /^data:([^;,]*)/;

/**
 * What a request body carries besides text (budget reservations only, so not on the path of agents
 * without a budget): one walk over its JSON. Inline media count by their length; documents and references
 * make the input unbounded by the body's bytes (the reservation then takes the model's context window).
 * Detection errs on the side of "unbounded": a wrong guess reserves more (near the limit, one call at a
 * time through the in-flight allowance), never less.
 */
export function requestAttachments(body: unknown): RequestAttachments {
  let mediaChars = 0;
  let unbounded = false;
  const holders: unknown[] = [body];
  const parents: string[] = [""];
  while (holders.length > 0 && !unbounded) {
    const value = holders.pop();
    const parent = parents.pop()!;
    if (Array.isArray(value)) {
      for (const v of value) {
        if (typeof v === "string") {
          // A data URI listed on its own (Cohere embed `images`): media as in a field.
          const data = DATA_URL.exec(v);
          if (data && DOCUMENT_TYPE.test(data[1]!)) unbounded = true;
          else if (data) mediaChars += v.length;
          continue;
        }
        holders.push(v);
        parents.push(parent);
      }
      continue;
    }
    if (typeof value !== "object" || value === null) continue;
    const o = value as Record<string, unknown>;
    const mime = [o.media_type, o.mime_type, o.mimeType, o.type].find((m): m is string => typeof m === "string") ?? "";
    for (const [k, v] of Object.entries(o)) {
      if (typeof v === "string") {
        if (REFERENCE_KEYS.has(k) && v !== "") unbounded = true;
        else if (k === "url" && MEDIA_URL_HOLDERS.has(parent) && !v.startsWith("data:")) unbounded = true;
        else if (k === "image_url" && !v.startsWith("data:")) unbounded = true; // Mistral/Cohere shorthand
        const data = DATA_URL.exec(v);
        if (data) {
          if (DOCUMENT_TYPE.test(data[1]!)) unbounded = true;
          else mediaChars += v.length;
        } else if (k === "data" && (o.media_type !== undefined || o.mime_type !== undefined || o.mimeType !== undefined || parent === "input_audio")) {
          if (DOCUMENT_TYPE.test(mime)) unbounded = true;
          else mediaChars += v.length;
        }
      } else if (typeof v === "object" && v !== null) {
        if (k === "document" || (k === "source" && o.type === "document") || k === "input_file" || k === "file") unbounded = true;
        // OpenAI Responses: a conversation object, or a stored prompt template (`prompt: {id, variables}`).
        if (parent === "" && (k === "conversation" || (k === "prompt" && typeof (v as Record<string, unknown>).id === "string"))) unbounded = true;
        holders.push(v);
        parents.push(k);
      }
    }
    if (o.type === "document" || o.type === "input_file" || o.type === "file" || o.type === "document_url" || o.type === "item_reference") unbounded = true;
    // A provider-run tool whose results come back as billed input over internal turns (search, fetch, MCP, code).
    if (parent === "tools" && (HOSTED_TOOL_TYPE.test(typeof o.type === "string" ? o.type : "") || Object.keys(o).some((k) => HOSTED_TOOL_KEYS.has(k)))) unbounded = true;
  }
  return { mediaChars, unbounded };
}
