// Types of the fake model providers: the script a test sets and the requests the fakes record.
import type { IncomingHttpHeaders } from "node:http";

export type FakeProviderName = "openai" | "anthropic" | "google" | "mistral" | "cohere";

export interface FakeToolCall {
  name: string;
  arguments: Record<string, unknown>;
  /** Default: a deterministic id in the provider's own format. */
  id?: string;
}

/**
 * Usage the fake reports, in normalised terms; each fake renders it in its provider's native fields
 * (e.g. Anthropic input_tokens = inputTokens − cachedInputTokens − cacheWriteTokens).
 */
export interface FakeUsage {
  /** Total input tokens, cached and cache-written included. */
  inputTokens: number;
  /** Total output tokens, reasoning included. */
  outputTokens: number;
  cachedInputTokens?: number;
  cacheWriteTokens?: number;
  /** Anthropic: the part of cacheWriteTokens written with the 1-hour TTL. */
  cacheWriteLongTokens?: number;
  /** Part of outputTokens spent on reasoning (OpenAI reasoning_tokens, Gemini thoughtsTokenCount). */
  reasoningTokens?: number;
  /** Cohere only: raw tokens.input_tokens minus billed input (Cohere's own preamble); default 64. */
  unbilledInputTokens?: number;
}

/** Native error answers: status plus optional message (each fake shapes the body as its provider does). */
export interface FakeError {
  status: 400 | 401 | 403 | 404 | 422 | 429 | 500 | 503 | 529;
  message?: string;
}

export interface FakeScript {
  /** Completion text; default "Hello from the fake provider." ("" for none). */
  text?: string;
  /**
   * Reasoning shown beside the answer, before it, chunked like the text: an Anthropic thinking block (with
   * a signature), Gemini thought parts (`thought: true`), a Mistral thinking chunk, and for Cohere the
   * tool_plan when there are toolCalls (default "I will call the requested tools."), else a thinking
   * content item. OpenAI chat completions show no reasoning text: ignored there; the Responses API shows it as
   * a reasoning item's summary. Default none.
   */
  reasoning?: string;
  toolCalls?: FakeToolCall[];
  /** Default: derived deterministically from the request size and the completion. */
  usage?: FakeUsage;
  /** Model name the answer reports; default the requested model. */
  model?: string;
  /** Characters per streamed text delta; default 4. */
  textChunkSize?: number;
  /** Characters per streamed tool-argument delta; default 8. */
  argsChunkSize?: number;
  /** TCP write granularity of streams: "event" (one write per event, default), "byte", N bytes, or "coalesce" (one write). */
  split?: "event" | "byte" | "coalesce" | number;
  /** Interleave keep-alive comments (": ping") before events; the Anthropic fake adds ping events too. */
  comments?: boolean;
  /** CRLF line endings in SSE (the Google fake always uses CRLF, as Gemini does). */
  crlf?: boolean;
  /** Delay before the first byte (status line included). */
  delayMs?: number;
  /** Delay between stream events (split "event" only). */
  eventDelayMs?: number;
  /** Answer with the provider's native error body and status. */
  error?: FakeError;
  /** Stream: emit the provider's native mid-stream error after N events, then end. */
  streamError?: { afterEvents: number; message?: string };
  /** Stream: stop after N events, cleanly (end) or abruptly (socket destroyed). */
  truncate?: { afterEvents: number; abrupt?: boolean };
  /** Stream: report no usage at all. */
  omitUsage?: boolean;
  /** Native finish/stop reason; default per provider ("stop"/"end_turn"/"STOP"/"COMPLETE" or the tool variant). */
  finishReason?: string;
}

export interface RecordedRequest {
  provider: FakeProviderName | undefined;
  method: string;
  /** Full request path as received, provider prefix included (no query). */
  rawPath: string;
  /** Native path after the provider prefix, e.g. "/v1/chat/completions". */
  path: string;
  /** Query string including "?", or "". */
  query: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** body parsed as JSON, undefined when it is not JSON. */
  json: unknown;
}

export interface FakeProviders {
  /** Origin of the fake server, e.g. http://127.0.0.1:41234. */
  url: string;
  /** Per-provider base URL (origin + "/<provider>" prefix), usable as PROVIDER_<NAME>_URL. */
  urls: Record<FakeProviderName, string>;
  requests: RecordedRequest[];
  /** Replaces the script used for every following request. */
  script(next: FakeScript): void;
  close(): Promise<void>;
}
