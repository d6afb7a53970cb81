// A controllable upstream for the proxy's streaming tests: one local HTTP server whose answer a test
// sets per request (exact bytes, chunking, pauses it releases itself), under the same /<provider>
// prefixes as the fakes, so a sidecar's PROVIDER_*_URL can point at it. It records what it received
// and tells a test when the sidecar closed the connection (an aborted upstream call).
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface ControlledRequest {
  path: string;
  headers: IncomingMessage["headers"];
  body: Buffer;
  /** Resolves when the sidecar closed this request's connection before the answer was complete. */
  aborted: Promise<void>;
}

export type ControlledHandler = (req: ControlledRequest, res: ServerResponse) => Promise<void> | void;

export interface ControlledUpstream {
  url: string;
  urls: Record<"openai" | "anthropic" | "google" | "mistral" | "cohere", string>;
  requests: ControlledRequest[];
  handle(h: ControlledHandler): void;
  close(): Promise<void>;
}

export async function startControlledUpstream(): Promise<ControlledUpstream> {
  let handler: ControlledHandler = (_req, res) => {
    res.writeHead(500).end("no handler");
  };
  const requests: ControlledRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      let abortedResolve!: () => void;
      const aborted = new Promise<void>((r) => (abortedResolve = r));
      res.on("close", () => {
        if (!res.writableFinished) abortedResolve();
      });
      const recorded: ControlledRequest = { path: req.url ?? "/", headers: req.headers, body: Buffer.concat(parts), aborted };
      requests.push(recorded);
      Promise.resolve(handler(recorded, res)).catch(() => res.destroy());
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    urls: { openai: `${url}/openai`, anthropic: `${url}/anthropic`, google: `${url}/google`, mistral: `${url}/mistral`, cohere: `${url}/cohere` },
    requests,
    handle(h) {
      handler = h;
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

/** res.write as a promise (resolves once the bytes are handed to the socket). */
export function write(res: ServerResponse, data: string | Buffer): Promise<void> {
  return new Promise((resolve, reject) => res.write(data, (e) => (e ? reject(e) : resolve())));
}

/** A promise with its resolve function, for a test to release an upstream pause. */
export function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

export const tick = () => new Promise<void>((r) => setImmediate(r));
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
