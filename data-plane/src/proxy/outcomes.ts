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
 * The refusals a retry of the same request can end differently: a rate limit's window moves on, the
 * provider may be reachable or answer in time, a fault of ours may not recur. Every other refusal is
 * final for that request — a policy block, a daily budget used up (its Retry-After is the time to UTC
 * midnight), an answer the policies could not read (the provider was paid: a retry pays again), bad
 * input, a refused key — and says `x-should-retry: false`, which the openai and anthropic SDKs obey
 * before their own rules: without it they retried every 5xx (paying the provider three times for one
 * unreadable answer) and waited out a budget's Retry-After of many hours, without a cap.
 */
const RETRYABLE_CODES: ReadonlySet<string> = new Set(["rate_limit_exceeded", "upstream_unavailable", "upstream_timeout", "internal_error"]);

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
  if (!RETRYABLE_CODES.has(e.code)) headers["x-should-retry"] = "false";
  // The reason phrase given: a writeHead that threw earlier (an internal fault) leaves its own behind.
  res.writeHead(e.status, STATUS_CODES[e.status] ?? "", headers);
  res.end(body);
}
