// Which request headers go upstream and which response headers come back (RFC 9110 §7.6.1: hop-by-hop
// fields and every field named in Connection are not forwarded; §7.6.3: a gateway adds Via to what it
// forwards). X-Service-* never leaves the sidecar; the provider's own credential header (Authorization,
// x-api-key, x-goog-api-key) is forwarded exactly as it came, never translated.
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";

/** Hop-by-hop fields (RFC 9110 §7.6.1, plus the legacy Proxy-Connection and Keep-Alive). */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade"]);
/** Fields the sidecar sets itself on the upstream request. */
const REPLACED_UPSTREAM = new Set(["host", "content-length", "accept-encoding", "expect"]);
const VIA = "1.1 agentgov-sidecar";
const SERVICE_PREFIX = "x-service-";
/**
 * Provider response fields that speak for the provider's origin, not the sidecar's (a different origin):
 * cookies its CDN sets, HSTS, Alt-Svc, Clear-Site-Data; and, by prefix, every Access-Control-* (CORS).
 */
const ORIGIN_BOUND = new Set(["set-cookie", "set-cookie2", "strict-transport-security", "alt-svc", "clear-site-data"]);
const CORS_PREFIX = "access-control-";

/** Extra field names a Connection header lists (beyond the hop-by-hop ones), lower-case; undefined when none. */
function connectionListed(value: string | string[] | undefined): Set<string> | undefined {
  // The usual values name no extra field: skip the split (and its garbage) on every request and response.
  if (value === undefined || value === "keep-alive" || value === "close") return undefined;
  let listed: Set<string> | undefined;
  for (const token of (Array.isArray(value) ? value.join(",") : value).split(",")) {
    const name = token.trim().toLowerCase();
    if (name === "" || name === "close" || HOP_BY_HOP.has(name)) continue;
    (listed ??= new Set()).add(name);
  }
  return listed;
}

/** The headers of the upstream request: the client's, minus hop-by-hop and X-Service-*, plus identity encoding and Via. */
export function upstreamRequestHeaders(h: IncomingHttpHeaders, bodyLength: number): Record<string, string> {
  const listed = connectionListed(h.connection);
  const out: Record<string, string> = {};
  for (const name in h) {
    const value = h[name];
    if (value === undefined || HOP_BY_HOP.has(name) || REPLACED_UPSTREAM.has(name) || name.startsWith(SERVICE_PREFIX)) continue;
    if (listed?.has(name)) continue;
    out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  // The sidecar reads every answer (usage, tools, policies): it asks for an uncompressed body (decisions.md 11).
  out["accept-encoding"] = "identity";
  out["content-length"] = String(bodyLength);
  out.via = out.via ? `${out.via}, ${VIA}` : VIA;
  return out;
}

/** Where the provider's own X-Request-Id goes: X-Request-Id carries the sidecar's (DESIGN.md §4). */
const UPSTREAM_REQUEST_ID = "x-upstream-request-id";

/**
 * The provider's response headers as the client gets them: hop-by-hop fields, X-Service-* (the
 * sidecar's own namespace: a provider's field of that name would pass for the sidecar's) and the fields
 * bound to the provider's origin (ORIGIN_BOUND, Access-Control-*) dropped, the
 * provider's X-Request-Id renamed X-Upstream-Request-Id (support tickets need it; X-Request-Id echoes
 * the client's), and the framing fields (content-length, content-encoding when the sidecar decoded the
 * body) left for the caller to set.
 */
export function downstreamResponseHeaders(h: Record<string, string | string[] | undefined>, dropEncoding: boolean): OutgoingHttpHeaders {
  const listed = connectionListed(h.connection);
  const out: OutgoingHttpHeaders = {};
  for (const name in h) {
    const value = h[name];
    if (value === undefined || HOP_BY_HOP.has(name) || name === "content-length" || (dropEncoding && name === "content-encoding")) continue;
    if (listed?.has(name) || ORIGIN_BOUND.has(name) || name.startsWith(SERVICE_PREFIX) || name.startsWith(CORS_PREFIX)) continue;
    out[name === "x-request-id" ? UPSTREAM_REQUEST_ID : name] = value;
  }
  return out;
}

/** Sets the X-Service-* headers and X-Request-Id (the sidecar's request id, on every answer) on a response's headers. */
export function addServiceHeaders(out: OutgoingHttpHeaders, service: Record<string, string>): OutgoingHttpHeaders {
  for (const name in service) out[name] = service[name];
  return out;
}
