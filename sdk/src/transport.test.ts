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

/** Settles with the promise's outcome, or "hung" after ms (a hang must fail the test, not time it out). */
async function within<T>(p: Promise<T>, ms: number): Promise<{ value?: T; error?: unknown } | "hung"> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<"hung">((r) => (timer = setTimeout(() => r("hung"), ms)));
  const settled = p.then((value) => ({ value }), (error: unknown) => ({ error }));
  try {
    return await Promise.race([settled, hung]);
  } finally {
    clearTimeout(timer);
  }
}

test("timeouts also bound the body: an answer whose body stalls after the headers is an AgentGovTimeoutError, retried for a GET", async (t) => {
  const s = await serve([
    (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"data": [');
    },
  ]);
  const ag = new AgentGov({ baseUrl: s.url, apiKey: "k", timeoutMs: 200, maxRetries: 1, retry: { baseDelayMs: 10 } });
  const outcome = await within(ag.get("/v1/agents"), 3_000);
  t.not(outcome, "hung");
  if (outcome !== "hung") t.true(outcome.error instanceof AgentGovTimeoutError);
  t.is(s.seen.length, 2);
  await s.close().catch(() => undefined);
});

test("a body cut off mid-way is an AgentGovConnectionError (not a bare TypeError), and an idempotent call is retried", async (t) => {
  let calls = 0;
  const s = await serve([
    (_req, res) => {
      calls++;
      res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
      res.write('{"data": [');
      setTimeout(() => res.socket?.destroy(), 20);
    },
    json(200, listA),
  ]);
  const ag = new AgentGov({ baseUrl: s.url, apiKey: "k", maxRetries: 1, retry: { baseDelayMs: 5 } });
  t.deepEqual(await ag.get("/v1/agents"), listA);
  t.is(calls, 1);
  t.is(s.seen.length, 2);
  const once = await serve([
    (_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
      res.write('{"data": [');
      setTimeout(() => res.socket?.destroy(), 20);
    },
  ]);
  const post = new AgentGov({ baseUrl: once.url, apiKey: "k", maxRetries: 1, retry: { baseDelayMs: 5 } });
  await t.throwsAsync(post.post("/api/teams", { body: { name: "x" } }), { instanceOf: AgentGovConnectionError });
  t.is(once.seen.length, 1);
  await s.close();
  await once.close();
});

test("timeouts and aborts hold even with a custom fetch that ignores the signal", async (t) => {
  let calls = 0;
  const neverSettles = () => {
    calls++;
    return new Promise<Response>(() => undefined);
  };
  const ag = new AgentGov({ baseUrl: "http://example.invalid", apiKey: "k", fetch: neverSettles, timeoutMs: 100, maxRetries: 1, retry: { baseDelayMs: 5 } });
  const outcome = await within(ag.get("/v1/agents"), 3_000);
  t.not(outcome, "hung");
  if (outcome !== "hung") t.true(outcome.error instanceof AgentGovTimeoutError);
  t.is(calls, 2);
  const controller = new AbortController();
  const pending = within(ag.get("/v1/agents", { signal: controller.signal }), 3_000);
  controller.abort(new Error("stop"));
  const aborted = await pending;
  t.not(aborted, "hung");
  if (aborted !== "hung") t.is((aborted.error as Error).message, "stop");
});

test("the standalone page walkers send the filters and page size with every page, not only the cursor/offset", async (t) => {
  const { cursorPages, offsetPages } = await import("./index.js");
  const cursorQueries: Record<string, unknown>[] = [];
  for await (const page of cursorPages<number>(async (q) => {
    cursorQueries.push(q);
    return q.cursor === undefined ? { data: [1], has_more: true, next_cursor: "c1" } : { data: [2], has_more: false };
  }, { status: "active", limit: 1 })) t.is(page.items.length, 1);
  t.deepEqual(cursorQueries, [{ status: "active", limit: 1 }, { status: "active", limit: 1, cursor: "c1" }]);

  const offsetQueries: Record<string, unknown>[] = [];
  const items: number[] = [];
  for await (const page of offsetPages<number>(async (q) => {
    offsetQueries.push(q);
    const offset = q.offset as number;
    return { data: [10, 11, 12].slice(offset, offset + 2), total: 3 };
  }, { environment: "production", limit: 2 })) items.push(...page.items);
  t.deepEqual(items, [10, 11, 12]);
  t.deepEqual(offsetQueries, [{ environment: "production", limit: 2, offset: 0 }, { environment: "production", limit: 2, offset: 2 }]);
});

test("a 204 (DELETE /v1/policies/{policy_id}) resolves to undefined, and is typed so (not never)", async (t) => {
  const s = await serve([(_req, res) => res.writeHead(204).end()]);
  const ag = new AgentGov({ baseUrl: s.url, apiKey: "k" });
  const r = await ag.delete("/v1/policies/{policy_id}", { params: { path: { policy_id: "pol_1" } } });
  // Type-level: `typeof r` is exactly undefined (tsc fails on this line when it is never).
  const exactlyUndefined: [typeof r] extends [undefined] ? ([undefined] extends [typeof r] ? true : false) : false = true;
  t.true(exactlyUndefined);
  t.is(r, undefined);
  t.is(s.seen[0]!.method, "DELETE");
  await s.close();
});

// Review (session 16): answers a user meets when something between the client and the API misbehaves.

test("a 2xx answer that is not JSON is an AgentGovError invalid_response, not a bare SyntaxError", async (t) => {
  const s = await serve([(_req, res) => res.writeHead(200, { "content-type": "application/json" }).end("<html>proxy login</html>")]);
  t.teardown(s.close);
  const ag = new AgentGov({ baseUrl: s.url, apiKey: "svc_api_x", maxRetries: 0 });
  const e = await t.throwsAsync(ag.get("/api/agents"));
  t.true(e instanceof AgentGovError);
  t.is((e as AgentGovError).code, "invalid_response");
  t.is((e as AgentGovError).status, 0);
});

test("a 2xx answer without a body is invalid_response, except a 204", async (t) => {
  const s = await serve([(_req, res) => res.writeHead(200, { "content-type": "application/json", "content-length": "0" }).end(), (_req, res) => res.writeHead(204).end()]);
  t.teardown(s.close);
  const ag = new AgentGov({ baseUrl: s.url, apiKey: "svc_api_x", maxRetries: 0 });
  const e = await t.throwsAsync(ag.get("/api/agents"));
  t.is((e as AgentGovError).code, "invalid_response");
  t.regex((e as AgentGovError).message, /\(200\) had no body/);
  t.is(await ag.delete("/v1/policies/{policy_id}", { params: { path: { policy_id: "pol_x" } } }), undefined);
});

test("a group B 503 has the code group A's bodies give it: service_unavailable", async (t) => {
  const s = await serve([(_req, res) => res.writeHead(503, { "content-type": "application/json" }).end(JSON.stringify({ error: "trace store unavailable" }))]);
  t.teardown(s.close);
  const ag = new AgentGov({ baseUrl: s.url, apiKey: "svc_api_x", maxRetries: 0 });
  const e = await t.throwsAsync(ag.get("/api/traces/stats"));
  t.is((e as AgentGovError).code, "service_unavailable");
});

// A store of traces that answers /api/traces as the server does (createdAt then id, newest first;
// endDate inclusive; offset and limit), into which traces land late, as they do from sidecars.
test("a walk of /api/traces goes by keyset: traces landing during the walk neither repeat items nor hide older ones", async (t) => {
  const at = (ms: number) => new Date(Date.UTC(2026, 10, 23, 12, 0, 0, 0) + ms).toISOString();
  const store: { id: string; createdAt: string }[] = [];
  for (let i = 0; i < 40; i++) store.push({ id: `trc_${String(i).padStart(3, "0")}`, createdAt: at(Math.floor(i / 3) * 10) }); // three per time: ties
  const atStart = store.map((x) => x.id);
  let request = 0;
  const landed: string[] = [];
  const answer = (req: IncomingMessage, res: ServerResponse) => {
    const q = new URL(req.url ?? "/", "http://x").searchParams;
    // Before each page after the first, two traces land older than anything yielded so far (the walk must
    // still find them) and one newer than the walk's start (behind the walk: it need not).
    if (request++ > 0) {
      const k = request;
      store.push({ id: `trc_late_old_${k}a`, createdAt: at(-1000 - k) }, { id: `trc_late_old_${k}b`, createdAt: at(-1000 - k) }, { id: `trc_late_new_${k}`, createdAt: at(100_000 + k) });
      landed.push(`trc_late_old_${k}a`, `trc_late_old_${k}b`);
    }
    const end = q.get("endDate");
    const rows = store.filter((x) => end === null || Date.parse(x.createdAt) <= Date.parse(end)).sort((x, y) => (x.createdAt === y.createdAt ? (x.id < y.id ? 1 : -1) : x.createdAt < y.createdAt ? 1 : -1));
    const offset = Number(q.get("offset") ?? 0);
    const limit = Number(q.get("limit") ?? 50);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data: rows.slice(offset, offset + limit), total: rows.length, limit, offset }));
  };
  const s = await serve([answer]);
  t.teardown(s.close);
  const ag = new AgentGov({ baseUrl: s.url, apiKey: "svc_api_x", maxRetries: 0 });
  const walked: string[] = [];
  for await (const item of ag.paginate("/api/traces", { params: { query: { limit: 4 } } })) walked.push((item as { id: string }).id);
  t.is(new Set(walked).size, walked.length, "no item twice");
  for (const id of atStart) t.true(walked.includes(id), `${id}, there at the start`);
  for (const id of landed) t.true(walked.includes(id), `${id}, landed older than the walk's position`);
  t.false(walked.some((id) => id.startsWith("trc_late_new")), "newer than the walk's start: behind it");
  t.is(new URL(s.seen[0]!.url, s.url).searchParams.get("endDate"), null, "the first page has no end: the server's newest trace, whatever the client's clock");
  for await (const _ of ag.paginate("/api/agents", { params: { query: { limit: 2 } } })) break;
  t.is(new URL(s.seen.at(-1)!.url, s.url).searchParams.get("endDate"), null, "other lists are not touched");
});
