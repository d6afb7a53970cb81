// Which request headers go upstream and which response headers come back (RFC 9110 hop-by-hop rules):
// X-Service-* never leaves the sidecar; the provider's own credential header is forwarded as it came.
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";

const HOP_BY_HOP = new Set([
  "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade", "host", "content-length",
]);

function connectionListed(h: IncomingHttpHeaders | Record<string, string | string[] | undefined>): Set<string> {
  const v = h["connection"];
  const text = Array.isArray(v) ? v.join(",") : (v ?? "");
  return new Set(text.split(",").map((s) => s.trim().toLowerCase()).filter(Boolean));
}

export function upstreamRequestHeaders(h: IncomingHttpHeaders, bodyLength: number): Record<string, string> {
  const listed = connectionListed(h);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(h)) {
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || listed.has(lower) || lower.startsWith("x-service-") || lower === "accept-encoding") continue;
    out[lower] = Array.isArray(value) ? value.join(", ") : value;
  }
  // The sidecar reads the answer (usage, tools, policies), so it asks for an uncompressed body.
  out["accept-encoding"] = "identity";
  out["content-length"] = String(bodyLength);
  return out;
}

export function downstreamResponseHeaders(h: Record<string, string | string[] | undefined>): OutgoingHttpHeaders {
  const listed = connectionListed(h);
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(h)) {
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || listed.has(lower) || lower === "content-encoding") continue;
    out[lower] = value;
  }
  return out;
}
