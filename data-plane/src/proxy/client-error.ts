// Answers to requests node:http's parser refuses before any handler sees them (oversized headers, a
// malformed request line or Content-Length, a request that arrives too slowly). Node's own answer is a
// bare status line; ours carries the error shape of every other sidecar answer and its X-Service-*
// headers (DESIGN.md §7: on every answer), so an SDK surfaces it like any other refusal. Not traced:
// no agent is known yet. As node:http does, it answers only on a connection that has written nothing
// yet (else the bytes could land inside an answer already on its way) and then closes it.
import type { Duplex } from "node:stream";
import { newTraceId } from "./trace-id.js";

const REFUSALS: Record<string, { status: number; reason: string; code: string; message: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, reason: "Request Header Fields Too Large", code: "request_header_fields_too_large", message: "request headers too large" },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { status: 413, reason: "Payload Too Large", code: "payload_too_large", message: "chunk extensions too large" },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, reason: "Request Timeout", code: "request_timeout", message: "the request did not arrive in time" },
};
const MALFORMED = { status: 400, reason: "Bad Request", code: "bad_request", message: "malformed HTTP request" };

/** The raw answer for a parser error `code` (exported for the tests). */
export function clientErrorResponse(code: string | undefined): string {
  const r = (code !== undefined ? REFUSALS[code] : undefined) ?? MALFORMED;
  const traceId = newTraceId(Date.now());
  const requestId = `req_${traceId.slice(4)}`;
  const body = JSON.stringify({ error: { code: r.code, message: r.message, request_id: requestId, type: r.code } });
  return (
    `HTTP/1.1 ${r.status} ${r.reason}\r\n` +
    "content-type: application/json\r\n" +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    `x-service-trace-id: ${traceId}\r\n` +
    "x-service-cost: 0\r\nx-service-policies: 0\r\nx-service-overhead-ms: 0.000\r\n" +
    `x-request-id: ${requestId}\r\n` +
    "connection: close\r\n\r\n" +
    body
  );
}

/** The server's 'clientError' listener: write, then destroy, as node:http's default listener does. */
export function answerClientError(err: Error & { code?: string }, socket: Duplex & { bytesWritten?: number }): void {
  if (err.code !== "ECONNRESET" && socket.writable && socket.bytesWritten === 0) socket.write(clientErrorResponse(err.code));
  socket.destroy();
}
