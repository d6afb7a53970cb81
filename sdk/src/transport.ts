// The SDK's fetch: per-attempt timeout, caller's AbortSignal, and retries with exponential backoff and
// full jitter on 429 and 5xx, honouring Retry-After. A request that may have been processed is only
// repeated when repeating it is harmless: 429 and 503 (refused before any work) for every method;
// other 5xx, timeouts and connection failures only for idempotent methods (GET, HEAD, PUT, DELETE, OPTIONS).
import { AgentGovConnectionError, AgentGovTimeoutError, parseRetryAfter } from "./errors.js";

export type FetchLike = (input: Request) => Promise<Response>;

export interface RetryOptions {
  /** Attempts after the first (default 2). 0 turns retries off. */
  maxRetries: number;
  /** Per-attempt time limit in ms (default 60 000). */
  timeoutMs: number;
  /** First backoff step in ms (default 250); doubles per attempt, capped by maxDelayMs. */
  baseDelayMs: number;
  /** Longest wait between attempts in ms (default 8 000). */
  maxDelayMs: number;
  /** A Retry-After longer than this (ms) is not waited for: the error is returned at once (default 60 000). */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryOptions = { maxRetries: 2, timeoutMs: 60_000, baseDelayMs: 250, maxDelayMs: 8_000, maxRetryAfterMs: 60_000 };

const IDEMPOTENT = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"]);

function retryableStatus(status: number, method: string): boolean {
  if (status === 429 || status === 503) return true;
  return status >= 500 && IDEMPOTENT.has(method);
}

function sleep(ms: number, signal: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Wraps a fetch with timeouts, cancellation and retries. */
export function retryingFetch(inner: FetchLike, options: RetryOptions, random: () => number = Math.random): FetchLike {
  return async (request: Request): Promise<Response> => {
    const callerSignal = request.signal;
    const method = request.method.toUpperCase();
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= options.maxRetries;
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(new AgentGovTimeoutError(options.timeoutMs)), options.timeoutMs);
      const signal = AbortSignal.any([callerSignal, timeout.signal]);
      let response: Response;
      try {
        response = await inner(new Request(request.clone(), { signal }));
      } catch (e) {
        clearTimeout(timer);
        if (callerSignal.aborted) throw callerSignal.reason;
        const failure = timeout.signal.aborted ? new AgentGovTimeoutError(options.timeoutMs, e) : new AgentGovConnectionError(e);
        // A refused connection never reached the server; anything else may have.
        const neverSent = hasCode(e, "ECONNREFUSED");
        if (last || !(IDEMPOTENT.has(method) || neverSent)) throw failure;
        await sleep(backoff(attempt, options, random), callerSignal);
        continue;
      }
      clearTimeout(timer);
      if (!retryableStatus(response.status, method) || last) return response;
      const retryAfter = parseRetryAfter(response.headers.get("retry-after"), Date.now());
      if (retryAfter !== undefined && retryAfter * 1000 > options.maxRetryAfterMs) return response;
      const wait = retryAfter !== undefined ? retryAfter * 1000 : backoff(attempt, options, random);
      await response.body?.cancel().catch(() => undefined);
      await sleep(wait, callerSignal);
    }
  };
}

function backoff(attempt: number, o: RetryOptions, random: () => number): number {
  return random() * Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** attempt);
}

function hasCode(e: unknown, code: string): boolean {
  for (let cur: unknown = e, depth = 0; cur && depth < 5; depth++) {
    if (typeof cur === "object" && (cur as { code?: unknown }).code === code) return true;
    cur = (cur as { cause?: unknown }).cause;
  }
  return false;
}
