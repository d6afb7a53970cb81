// Where each provider is reached (origin and path prefix from PROVIDER_*_URL, computed once at start)
// and how a failed upstream call becomes an answer: 504 upstream_timeout or 502 upstream_unavailable.
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

/** The answer for an upstream call that failed before the client got any byte of the response. */
export function upstreamFailure(e: unknown, provider: string): ProxyRefusal {
  const code = codeOf(e);
  if (TIMEOUT_CODES.has(code) || code === "TimeoutError") {
    return new ProxyRefusal(504, "upstream_timeout", `${provider} did not answer in time (${code})`);
  }
  const detail = e instanceof Error ? e.message : String(e);
  return new ProxyRefusal(502, "upstream_unavailable", `${provider} is unreachable: ${code ? `${code}: ` : ""}${detail}`);
}
