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
  /**
   * Read the whole answer body inside the attempt (so `timeoutMs` bounds it too, and a body cut off
   * mid-way is a connection failure, retried like one). The AgentGov client sets it; leave it off
   * for streamed answers.
   */
  readBody?: boolean;
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
        // Raced with the signal: a custom fetch that ignores it still cannot outlive the timeout or an abort.
        response = await untilAborted(inner(new Request(request.clone(), { signal })), signal);
        if (options.readBody && !(retryableStatus(response.status, method) && !last && !tooLongToWait(response, options))) {
          response = await untilAborted(buffered(response), signal);
        }
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
      if (tooLongToWait(response, options)) return response;
      const retryAfter = parseRetryAfter(response.headers.get("retry-after"), Date.now());
      const wait = retryAfter !== undefined ? retryAfter * 1000 : backoff(attempt, options, random);
      await response.body?.cancel().catch(() => undefined);
      await sleep(wait, callerSignal);
    }
  };
}

function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (v) => (signal.removeEventListener("abort", onAbort), resolve(v)),
      (e) => (signal.removeEventListener("abort", onAbort), reject(e)),
    );
  });
}

/** A Retry-After beyond maxRetryAfterMs is not waited for: the answer is returned as it is. */
function tooLongToWait(response: Response, options: RetryOptions): boolean {
  const retryAfter = parseRetryAfter(response.headers.get("retry-after"), Date.now());
  return retryAfter !== undefined && retryAfter * 1000 > options.maxRetryAfterMs;
}

const NULL_BODY_STATUS = new Set([204, 205, 304]);

/** The same answer with its body read to the end (throws when reading fails or is aborted). */
async function buffered(response: Response): Promise<Response> {
  if (response.status < 200 || response.status > 599) return response; // not constructible; fetch never yields these
  const body = NULL_BODY_STATUS.has(response.status) ? null : await response.arrayBuffer();
  const copy = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  Object.defineProperty(copy, "url", { value: response.url });
  return copy;
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
