// One HTTP server on 127.0.0.1 that imitates the five providers under path prefixes
// (/openai, /anthropic, /google, /mistral, /cohere), records every request and answers per script.
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { anthropicFake } from "./anthropic-fake.js";
import { cohereFake } from "./cohere-fake.js";
import { googleFake } from "./google-fake.js";
import { mistralFake } from "./mistral-fake.js";
import { openaiFake } from "./openai-fake.js";
import { IdSource } from "./reply.js";
import type { FakeContext, FakeReply } from "./reply.js";
import { sendReply } from "./send-reply.js";
import type { FakeProviderName, FakeProviders, FakeScript, RecordedRequest } from "./types.js";

const HANDLERS: Record<FakeProviderName, (ctx: FakeContext) => FakeReply> = {
  openai: openaiFake,
  anthropic: anthropicFake,
  google: googleFake,
  mistral: mistralFake,
  cohere: cohereFake,
};
const NAMES = Object.keys(HANDLERS) as FakeProviderName[];

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => resolve(Buffer.concat(parts)));
    req.on("error", reject);
  });
}

/** Splits "/openai/v1/chat/completions" into the provider and its native path. */
function route(rawPath: string): { provider: FakeProviderName | undefined; path: string } {
  const m = /^\/([a-z]+)(\/.*)?$/.exec(rawPath);
  const name = m?.[1] as FakeProviderName | undefined;
  if (name && NAMES.includes(name)) return { provider: name, path: m?.[2] ?? "/" };
  return { provider: undefined, path: rawPath };
}

/**
 * Starts the fake providers. Each provider's base URL is `${url}/${provider}` (an origin plus a path
 * prefix, as PROVIDER_*_URL allows); SDKs take `${url}/openai/v1` (openai), `${url}/anthropic`,
 * `${url}/google` (httpOptions.baseUrl), `${url}/mistral` (serverURL), `${url}/cohere` (environment).
 * The script applies to every following request until replaced; answers are deterministic (ids come
 * from a per-server counter, timestamps are fixed).
 */
export async function startFakeProviders(initial: FakeScript = {}): Promise<FakeProviders> {
  const requests: RecordedRequest[] = [];
  const ids = new IdSource();
  let current: FakeScript = initial;
  const sockets = new Set<import("node:net").Socket>();

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const raw = await readBody(req);
      const url = new URL(req.url ?? "/", "http://fake.local");
      const { provider, path } = route(url.pathname);
      let body: unknown;
      let jsonError = false;
      if (raw.length > 0) {
        try {
          body = JSON.parse(raw.toString("utf8")) as unknown;
        } catch {
          jsonError = true;
        }
      }
      requests.push({
        provider,
        method: req.method ?? "GET",
        rawPath: url.pathname,
        path,
        query: url.search,
        headers: req.headers,
        body: raw,
        json: body,
      });
      if (!provider) {
        res.writeHead(404, { "content-type": "text/plain" });
        res.end("unknown provider prefix");
        return;
      }
      const script = current;
      const reply = HANDLERS[provider]({
        method: req.method ?? "GET",
        path,
        search: url.searchParams,
        headers: req.headers,
        raw,
        body,
        jsonError,
        script,
        ids,
      });
      await sendReply(res, reply, script);
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(err));
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const urls = Object.fromEntries(NAMES.map((n) => [n, `${url}/${n}`])) as Record<FakeProviderName, string>;
  return {
    url,
    urls,
    requests,
    script(next: FakeScript) {
      current = next;
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    },
  };
}
