// Where each provider is reached (origin and path prefix from PROVIDER_*_URL, computed once at start)
// and how a failed upstream call becomes an answer: 504 upstream_timeout or 502 upstream_unavailable.
import type { Readable } from "node:stream";
import { ProxyRefusal } from "./outcomes.js";

export interface UpstreamEndpoint {
  /** scheme://host[:port] for the undici dispatcher. */
  origin: string;
  /** Path prefix of the base URL without a trailing slash ("" when none); the native path is appended. */
  prefix: string;
}

/** PROVIDER_*_URL values → endpoint per provider name (DESIGN.md §11: origin + optional prefix, no API version). */
export function upstreamEndpoints(baseUrls: Record<string, string>): Map<string, UpstreamEndpoint> {
  const out = new Map<string, UpstreamEndpoint>();
  for (const [name, base] of Object.entries(baseUrls)) {
    const url = new URL(base);
    out.set(name, { origin: url.origin, prefix: url.pathname.replace(/\/+$/, "") });
  }
  return out;
}

const TIMEOUT_CODES = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "UND_ERR_CONNECT_TIMEOUT", "ETIMEDOUT"]);

function codeOf(e: unknown): string {
  const err = e as { code?: unknown; name?: unknown; cause?: { code?: unknown } } | undefined;
  if (typeof err?.code === "string") return err.code;
  if (typeof err?.cause?.code === "string") return err.cause.code;
  return typeof err?.name === "string" ? err.name : "";
}

/** True for the error an aborted (client went away) upstream call rejects with. */
export function isAbort(e: unknown): boolean {
  const code = codeOf(e);
  return code === "AbortError" || code === "UND_ERR_ABORTED";
}

/** Failures before a connection to the provider existed: name resolution, refusal, no route, connect timeout. */
const BEFORE_CONNECTION = new Set(["UND_ERR_CONNECT_TIMEOUT", "ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EAI_NONAME", "EHOSTUNREACH", "ENETUNREACH", "EHOSTDOWN", "ENETDOWN", "EADDRNOTAVAIL"]);

/**
 * True when the call failed before a connection to the provider existed, so the provider never saw the
 * request and billed nothing. Any other failure (a reset, a connection closed before or during the
 * answer, a timeout after connecting) may come after the provider read the prompt: it is charged.
 */
export function neverReachedProvider(e: unknown): boolean {
  return BEFORE_CONNECTION.has(codeOf(e));
}

/**
 * The answer for an upstream call that failed before the client got any byte of the response: the
 * provider and the error code only. The error's message names the provider's internal address
 * ("connect ECONNREFUSED 10.0.3.7:443"): it is for the sidecar's log (upstreamFailureDetail), not the client.
 */
export function upstreamFailure(e: unknown, provider: string): ProxyRefusal {
  const code = codeOf(e);
  if (TIMEOUT_CODES.has(code) || code === "TimeoutError") {
    return new ProxyRefusal(504, "upstream_timeout", `${provider} did not answer in time (${code})`);
  }
  return new ProxyRefusal(502, "upstream_unavailable", `${provider} is unreachable${code ? ` (${code})` : ""}`);
}

/**
 * The same failure with its full detail, for the sidecar's log. undici's messages name the address and
 * the error, never the request's headers or body (no credential).
 */
export function upstreamFailureDetail(e: unknown, provider: string): Error {
  const code = codeOf(e);
  const detail = e instanceof Error ? e.message : String(e);
  return new Error(`${provider} is unreachable: ${code ? `${code}: ` : ""}${detail}`, { cause: e });
}

/**
 * The whole body of a provider's answer as one Buffer. A body that arrives in one chunk (the usual
 * JSON answer) is that chunk itself, a view of the socket's read: undici's `arrayBuffer()` would copy
 * it into a new ArrayBuffer, and every ArrayBuffer is one more the young-generation GC sweeps.
 * Rejects with the body's error (undici's body timeout, an abort) or when it closes before its end.
 */
export function readUpstreamBody(body: Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    body.on("data", (c: Buffer) => {
      chunks.push(c);
      size += c.length;
    });
    body.once("end", () => {
      done = true;
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    });
    body.once("error", (e) => {
      done = true;
      reject(e);
    });
    body.once("close", () => {
      if (!done) reject(Object.assign(new Error("the provider's answer ended before its body was complete"), { code: "UND_ERR_SOCKET" }));
    });
  });
}
