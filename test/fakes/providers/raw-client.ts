// Test helper: sends a request and keeps the raw response bytes exactly as received (chunk by chunk).
import { request } from "node:http";
import type { IncomingHttpHeaders } from "node:http";

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** Every chunk as received from the socket. */
  chunks: Buffer[];
  bytes: Buffer;
  text: string;
  /** True when the connection ended with an error (aborted stream). */
  aborted: boolean;
}

export function rawRequest(url: string, options: { method?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<RawResponse> {
  const payload = options.body === undefined ? undefined : typeof options.body === "string" ? options.body : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: options.method ?? (payload === undefined ? "GET" : "POST"),
        headers: { ...(payload !== undefined ? { "content-type": "application/json" } : {}), ...(options.headers ?? {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let aborted = false;
        let done = false;
        const finish = () => {
          if (done) return;
          done = true;
          const bytes = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, chunks, bytes, text: bytes.toString("utf8"), aborted });
        };
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", finish);
        res.on("aborted", () => {
          aborted = true;
        });
        res.on("error", () => {
          aborted = true;
          finish();
        });
        res.on("close", () => {
          if (!res.complete) aborted = true;
          finish();
        });
      },
    );
    req.on("error", reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}
