// The sidecar's own answers (refusals and failures), in one JSON shape that every provider SDK surfaces:
// {error: {code, message, request_id, type, ...}} (error.message and error.code/type are what the
// openai, anthropic, genai, mistral and cohere SDKs read from an error body).
import { STATUS_CODES, type ServerResponse } from "node:http";

export class ProxyRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = "ProxyRefusal";
  }
}

/**
 * Writes the refusal with the X-Service-* headers given (they go on every answer). A response whose
 * headers already left (a stream) cannot change its status: its connection is cut instead.
 */
export function sendJsonError(res: ServerResponse, e: ProxyRefusal, requestId: string, serviceHeaders: Record<string, string>): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify({ error: { code: e.code, message: e.message, request_id: requestId, type: e.code, ...e.extra } });
  const headers: Record<string, string> = { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) };
  for (const name in serviceHeaders) headers[name] = serviceHeaders[name]!;
  if (e.retryAfterSeconds !== undefined) headers["retry-after"] = String(e.retryAfterSeconds);
  // The reason phrase given: a writeHead that threw earlier (an internal fault) leaves its own behind.
  res.writeHead(e.status, STATUS_CODES[e.status] ?? "", headers);
  res.end(body);
}
