// The SDK transport against a scripted local HTTP server: retries on 429/5xx with Retry-After,
// no retry of non-idempotent calls on 500, timeouts, caller aborts, and the typed errors.
import test from "ava";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { AgentGov, AgentGovError, AgentGovTimeoutError, AgentGovConnectionError, parseRetryAfter } from "./index.js";

type Step = (req: IncomingMessage, res: ServerResponse) => void;

async function serve(steps: Step[]) {
  const seen: { method: string; url: string; at: number; body: string; auth: string | undefined }[] = [];
  let i = 0;
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", at: Date.now(), body, auth: req.headers.authorization });
      const step = steps[Math.min(i++, steps.length - 1)]!;
      step(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const addr = server.address();
  const url = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`;
  return {
    url,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Step => (_req, res) => {
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
};
const listA = { data: [], has_more: false };

test("429 with Retry-After is waited for, then retried", async (t) => {
  const s = await serve([json(429, { error: { code: "rate_limit_exceeded", message: "slow down", request_id: "r1" } }, { "retry-after": "1" }), json(200, listA)]);
  const ag = new AgentGov({ baseUrl: s.url, apiKey: "svc_api_x" });
  const out = await ag.get("/v1/agents");
  t.deepEqual(out, listA);
  t.is(s.seen.length, 2);
  t.true(s.seen[1]!.at - s.seen[0]!.at >= 950, "waited for Retry-After");
  t.is(s.seen[0]!.auth, "Bearer svc_api_x");
  await s.close();
});

test("5xx on an idempotent call is retried with backoff up to maxRetries, then surfaces as AgentGovError", async (t) => {
  const s = await serve([json(503, { error: "down" }), json(502, { error: "bad gateway" }), json(500, { error: { code: "internal_error", message: "boom", request_id: "req_9" } })]);
  const ag = new AgentGov({ baseUrl: s.url, apiKey: "k", maxRetries: 2, retry: { baseDelayMs: 10 } });
  const e = await t.throwsAsync(ag.get("/v1/agents"), { instanceOf: AgentGovError });
  t.is(s.seen.length, 3);
  t.is(e?.status, 500);
  t.is(e?.code, "internal_error");
  t.is(e?.requestId, "req_9");
  t.is(e?.message, "boom");
  await s.close();
});

test("a POST is not repeated after a 500 (it may have been processed) but is after a 429", async (t) => {
  const s = await serve([json(500, { error: "boom" })]);
  const ag = new AgentGov({ baseUrl: s.url, apiKey: "k", retry: { baseDelayMs: 10 } });
  await t.throwsAsync(ag.post("/api/agents", { body: { name: "a" } }), { instanceOf: AgentGovError });
  t.is(s.seen.length, 1);
  await s.close();

  const s2 = await serve([json(429, { error: "Too many requests" }, { "retry-after": "0" }), json(201, { data: { id: "agt_1" } })]);
  const ag2 = new AgentGov({ baseUrl: s2.url, apiKey: "k" });
  const created = await ag2.post("/api/agents", { body: { name: "a" } });
  t.is((created.data as { id: string }).id, "agt_1");
  t.is(s2.seen.length, 2);
  t.is(s2.seen[1]!.body, JSON.stringify({ name: "a" }), "the body is sent again intact");
  await s2.close();
});

test("a Retry-After longer than maxRetryAfterMs is not waited for: the 429 surfaces with its delay", async (t) => {
  const s = await serve([json(429, { error: "Too many requests" }, { "retry-after": "120" })]);
  const ag = new AgentGov({ baseUrl: s.url, apiKey: "k" });
  const e = await t.throwsAsync(ag.get("/api/agents"), { instanceOf: AgentGovError });
  t.is(s.seen.length, 1);
  t.is(e?.status, 429);
  t.is(e?.code, "rate_limit_exceeded");
  t.is(e?.retryAfterSeconds, 120);
  t.is(e?.message, "Too many requests");
  await s.close();
});

test("group B errors carry the status code, the message and the validation details", async (t) => {
  const s = await serve([json(400, { error: "invalid body", details: [{ path: "body.name", message: "Required" }] }, { "x-request-id": "req_b" })]);
  const ag = new AgentGov({ baseUrl: s.url, apiKey: "k" });
  const e = await t.throwsAsync(ag.post("/api/agents", { body: { name: "" } }), { instanceOf: AgentGovError });
  t.is(e?.code, "bad_request");
  t.is(e?.message, "invalid body");
  t.is(e?.requestId, "req_b");
  t.deepEqual(e?.details, [{ path: "body.name", message: "Required" }]);
  await s.close();
});

test("timeouts: each attempt is bounded; an idempotent call is retried, then AgentGovTimeoutError", async (t) => {
  const s = await serve([() => undefined /* never answers */]);
  const ag = new AgentGov({ baseUrl: s.url, apiKey: "k", timeoutMs: 200, maxRetries: 1, retry: { baseDelayMs: 10 } });
  const e = await t.throwsAsync(ag.get("/v1/agents"), { instanceOf: AgentGovTimeoutError });
  t.is(e?.code, "timeout");
  t.is(e?.status, 0);
  t.is(s.seen.length, 2);
  await s.close().catch(() => undefined);
});

test("AbortSignal: the caller's abort rejects at once with its reason, also during a backoff wait", async (t) => {
  const s = await serve([json(503, { error: "down" }, { "retry-after": "30" })]);
  const ag = new AgentGov({ baseUrl: s.url, apiKey: "k", retry: { maxRetryAfterMs: 60_000 } });
  const controller = new AbortController();
  const pending = ag.get("/v1/agents", { signal: controller.signal });
  setTimeout(() => controller.abort(new Error("user gave up")), 200);
  const e = await t.throwsAsync(pending);
  t.is(e?.message, "user gave up");
  t.is(s.seen.length, 1);
  await s.close();
});

test("connection refused is an AgentGovConnectionError after the retries", async (t) => {
  const s = await serve([json(200, listA)]);
  await s.close();
  const ag = new AgentGov({ baseUrl: s.url, apiKey: "k", maxRetries: 1, retry: { baseDelayMs: 5 } });
  const e = await t.throwsAsync(ag.get("/v1/agents"), { instanceOf: AgentGovConnectionError });
  t.is(e?.code, "connection_error");
});

test("parseRetryAfter reads seconds and HTTP dates", (t) => {
  t.is(parseRetryAfter("3", 0), 3);
  t.is(parseRetryAfter(new Date(10_000).toUTCString(), 4_000), 6);
  t.is(parseRetryAfter("soon", 0), undefined);
  t.is(parseRetryAfter(null, 0), undefined);
});

test("cursor pagination stops when a server repeats a cursor", async (t) => {
  const s = await serve([json(200, { data: [{ id: "a" }], has_more: true, next_cursor: "c1" })]);
  const ag = new AgentGov({ baseUrl: s.url, apiKey: "k" });
  const seen: unknown[] = [];
  await t.throwsAsync(
    (async () => {
      for await (const x of ag.paginate("/v1/agents")) seen.push(x);
    })(),
    { message: /returned cursor c1 twice/ },
  );
  t.is(seen.length, 2);
  t.true(s.seen[1]!.url.includes("cursor=c1"));
  await s.close();
});
