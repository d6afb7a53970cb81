// The sidecar's own answers (refusals and failures), in one JSON shape that every provider SDK surfaces:
// {error: {code, message, request_id, ...}}.
import type { ServerResponse } from "node:http";

export class ProxyRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export function sendJsonError(res: ServerResponse, e: ProxyRefusal, requestId: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = JSON.stringify({ error: { code: e.code, message: e.message, request_id: requestId, type: e.code, ...e.extra } });
  const h: Record<string, string> = { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), "x-request-id": requestId, ...headers };
  if (e.retryAfterSeconds !== undefined) h["retry-after"] = String(e.retryAfterSeconds);
  res.writeHead(e.status, h);
  res.end(body);
}
