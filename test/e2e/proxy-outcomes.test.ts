// Every outcome of a proxy call (DESIGN.md §7, §11) with the X-Service-* headers on each answer:
// 401/403/404/400/413 refusals (not traced), paused agent 403, rate limit and budget 429 (traced as
// blocked), policy block 403, provider unreachable 502, provider timeout 504, provider errors passed
// through unchanged (traced as error); plus the forwarding rules: spec path with native bodies (Gemini:
// model and stream taken from the body and removed), hop-by-hop fields, bodies byte for byte, a
// provider that compresses anyway.
import test, { type ExecutionContext } from "ava";
import { createServer } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import type { Sidecar } from "@agentgov/data-plane";
import { eventually } from "../harness/stack.js";
import { nativeRequest } from "../fakes/providers/index.js";
import { estimateTokens } from "../../data-plane/src/providers/index.js";
import { computeCost, priceFor } from "../../data-plane/src/pricing/index.js";
import { MODELS, PROVIDERS, rawCall, startProxyWorld, type ProxyWorld, type RawAnswer } from "./proxy-helpers.js";
import { startControlledUpstream, write, type ControlledUpstream } from "./proxy-upstreams.js";

let w: ProxyWorld;
let ctl: ControlledUpstream;
/** Sidecar in front of the controlled upstream (Mistral: a closed port), UPSTREAM_TIMEOUT_MS 500. */
let edge: Sidecar;
let agentId: string;

async function closedPortUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return `http://127.0.0.1:${port}`;
}

test.before(async () => {
  w = await startProxyWorld();
  ctl = await startControlledUpstream();
  edge = await w.stack.sidecar({
    PROVIDER_OPENAI_URL: ctl.urls.openai,
    PROVIDER_ANTHROPIC_URL: ctl.urls.anthropic,
    PROVIDER_GOOGLE_URL: ctl.urls.google,
    PROVIDER_MISTRAL_URL: await closedPortUrl(),
    PROVIDER_COHERE_URL: ctl.urls.cohere,
    UPSTREAM_TIMEOUT_MS: "500",
  });
  agentId = await w.agent("outcomes");
  await eventually(async () => edge.state().agents.has(agentId));
});
test.after.always(async () => {
  await w?.stop();
  await ctl?.close();
});

const CHAT = { model: "gpt-4o", messages: [{ role: "user", content: "hello" }] };
const OPENAI_OK = { id: "chatcmpl-1", object: "chat.completion", created: 1, model: "gpt-4o", choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }], usage: { prompt_tokens: 8, completion_tokens: 2, total_tokens: 10 } };

function serviceHeadersPresent(t: ExecutionContext, res: RawAnswer, label: string): void {
  t.regex(String(res.headers["x-service-trace-id"]), /^trc_[0-9A-Z]{26}$/, `${label}: X-Service-Trace-Id`);
  t.regex(String(res.headers["x-service-cost"]), /^\d+(\.\d+)?$/, `${label}: X-Service-Cost`);
  t.regex(String(res.headers["x-service-policies"]), /^\d+$/, `${label}: X-Service-Policies`);
  t.regex(String(res.headers["x-service-overhead-ms"]), /^\d+\.\d{3}$/, `${label}: X-Service-Overhead-Ms`);
}

/** A provider failure the sidecar answers itself: status and code in the error shape, X-Service-* headers, a trace of status error. */
async function assertTracedFailure(t: ExecutionContext, res: RawAnswer, status: number, code: string, label: string): Promise<void> {
  t.is(res.status, status, label);
  t.is(errorOf(res).code, code, label);
  serviceHeadersPresent(t, res, label);
  const trace = await w.trace(String(res.headers["x-service-trace-id"]));
  t.is(trace.status, "error", label);
  t.is(trace.httpStatus, status, label);
  t.is(trace.errorCode, code, label);
}

function errorOf(res: RawAnswer): { code: string; message: string; request_id: string; policy_id?: string; trace_id?: string } {
  return (JSON.parse(res.text) as { error: { code: string; message: string; request_id: string } }).error;
}

test.serial("refusals before the agent is known: 401, 403, 404, 400, 413, each with the X-Service-* headers, none traced", async (t) => {
  const agentKey = await w.stack.api.post<{ data: { key: string } }>("/api/keys", { name: "read-only", scope: "agent" });
  await eventually(async () => [...w.sidecar.state().keysByHash.values()].some((k) => k.scope === "agent"));
  const url = w.proxyUrl("openai", "/v1/chat/completions");
  const ok = { "x-request-id": "req-test-42", authorization: "Bearer sk", ...w.serviceHeaders(agentId) };
  const cases: [string, Promise<RawAnswer>, number, string][] = [
    ["no key", rawCall(url, { headers: { "x-service-agent": agentId }, body: CHAT }), 401, "unauthorized"],
    ["unknown key", rawCall(url, { headers: { ...ok, "X-Service-Key": "svc_api_NotAKeyNotAKeyNotAKeyNotAKey00" }, body: CHAT }), 401, "unauthorized"],
    ["agent-scope key", rawCall(url, { headers: { ...ok, "X-Service-Key": agentKey.body.data.key }, body: CHAT }), 403, "forbidden"],
    ["unknown agent", rawCall(url, { headers: { ...ok, "X-Service-Agent": "agt_01J00000000000000000000000" }, body: CHAT }), 404, "not_found"],
    ["no agent header", rawCall(url, { headers: { "x-service-key": w.stack.adminKey }, body: CHAT }), 404, "not_found"],
    ["unknown provider", rawCall(w.proxyUrl("acme", "/chat/completions"), { headers: ok, body: CHAT }), 404, "not_found"],
    ["ungoverned path", rawCall(w.proxyUrl("openai", "/v1/images/generations"), { headers: ok, body: CHAT }), 404, "not_found"],
    ["GET", rawCall(url, { method: "GET", headers: ok }), 404, "not_found"],
    ["outside /v1/proxy", rawCall(`${w.sidecar.url}/v1/chat/completions`, { headers: ok, body: CHAT }), 404, "not_found"],
    ["invalid JSON", rawCall(url, { headers: ok, body: "{not json" }), 400, "bad_request"],
    ["Gemini spec path without a model", rawCall(w.proxyUrl("google", "/chat/completions"), { headers: ok, body: { contents: [] } }), 400, "bad_request"],
    ["declared body over 10 MiB", rawCall(url, { headers: { ...ok, "content-length": String(10 * 1024 * 1024 + 1) }, body: Buffer.alloc(10 * 1024 * 1024 + 1, 32) }), 413, "payload_too_large"],
  ];
  const refused: string[] = [];
  for (const [label, pending, status, code] of cases) {
    const res = await pending;
    t.is(res.status, status, `${label}: ${res.text.slice(0, 200)}`);
    t.is(errorOf(res).code, code, label);
    t.is(res.headers["content-type"], "application/json", label);
    serviceHeadersPresent(t, res, label);
    t.is(res.headers["x-service-cost"], "0", label);
    if (label !== "no key" && label !== "no agent header") {
      t.is(res.headers["x-request-id"], "req-test-42", `${label}: X-Request-Id echoed`);
      t.is(errorOf(res).request_id, "req-test-42", label);
    }
    refused.push(String(res.headers["x-service-trace-id"]));
  }
  // A chunked body over the limit (no Content-Length) is refused as it streams in.
  const chunked = await new Promise<RawAnswer>((resolve, reject) => {
    import("node:http").then(({ request }) => {
      const req = request(url, { method: "POST", headers: { "content-type": "application/json", ...ok } }, (res) => {
        const parts: Buffer[] = [];
        res.on("data", (c: Buffer) => parts.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, trailers: res.trailers, bytes: Buffer.concat(parts), text: Buffer.concat(parts).toString() }));
      });
      req.on("error", reject);
      const mb = Buffer.alloc(1024 * 1024, 32);
      for (let i = 0; i < 11; i++) req.write(mb);
      req.end();
    }, reject);
  });
  t.is(chunked.status, 413);
  serviceHeadersPresent(t, chunked, "chunked over 10 MiB");
  // None of these is traced: a later request's trace is stored, theirs are not.
  w.fakes.script({});
  const later = await rawCall(url, { headers: ok, body: CHAT });
  await w.trace(String(later.headers["x-service-trace-id"]));
  for (const id of refused) t.is(await w.stack.cp.traces.get(w.stack.cp.tenantId, id), null);
});

/** Sends raw bytes on a fresh connection and parses the one answer (status, headers, body) until the server closes. */
function rawExchange(url: string, bytes: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(bytes));
    const parts: Buffer[] = [];
    socket.on("data", (c: Buffer) => parts.push(c));
    socket.on("error", reject);
    socket.on("close", () => {
      const text = Buffer.concat(parts).toString("utf8");
      const [head = "", body = ""] = text.split("\r\n\r\n");
      const [statusLine = "", ...lines] = head.split("\r\n");
      const headers: Record<string, string> = {};
      for (const l of lines) headers[l.slice(0, l.indexOf(":")).toLowerCase()] = l.slice(l.indexOf(":") + 1).trim();
      resolve({ status: Number(statusLine.split(" ")[1]), headers, body });
    });
  });
}

test.serial("requests node:http's parser refuses (oversized headers, malformed request line or Content-Length) get the error shape and the X-Service-* headers", async (t) => {
  const cases: [string, string, number, string][] = [
    ["20 KB of headers", `POST /v1/proxy/openai/chat/completions HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\nContent-Length: 2\r\n\r\n{}`, 431, "request_header_fields_too_large"],
    ["garbage request line", "GARBAGE\r\n\r\n", 400, "bad_request"],
    ["Content-Length: abc", "POST /v1/proxy/openai/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}", 400, "bad_request"],
  ];
  for (const [label, bytes, status, code] of cases) {
    const r = await rawExchange(w.sidecar.url, bytes);
    t.is(r.status, status, label);
    t.is(r.headers["content-type"], "application/json", label);
    t.regex(r.headers["x-service-trace-id"] ?? "", /^trc_[0-9A-Z]{26}$/, label);
    t.is(r.headers["x-service-cost"], "0", label);
    t.is(r.headers["x-service-policies"], "0", label);
    t.regex(r.headers["x-service-overhead-ms"] ?? "", /^\d+\.\d{3}$/, label);
    const body = JSON.parse(r.body) as { error: { code: string; message: string; request_id: string } };
    t.is(body.error.code, code, label);
    t.is(body.error.request_id, r.headers["x-request-id"] ?? "(none)", label);
    t.is(Number(r.headers["content-length"]), Buffer.byteLength(r.body), label);
  }
});

test.serial("a paused agent gets 403 agent_paused (traced as blocked); an archived agent 404", async (t) => {
  const id = await w.agent("to-pause");
  const patch = await w.stack.api.call("PATCH", `/v1/agents/${id}`, { status: "paused" });
  t.is(patch.status, 200);
  // No waiting: the PATCH answers once the sidecars have been sent the change.
  const before = w.fakes.requests.length;
  const res = await rawCall(w.proxyUrl("openai", "/chat/completions"), { headers: { authorization: "Bearer sk", ...w.serviceHeaders(id) }, body: CHAT });
  t.is(res.status, 403);
  t.is(errorOf(res).code, "agent_paused");
  serviceHeadersPresent(t, res, "paused");
  t.is(w.fakes.requests.length, before, "the provider is not called");
  const trace = await w.trace(String(res.headers["x-service-trace-id"]));
  t.is(trace.status, "blocked");
  t.deepEqual(trace.policiesFired, ["agent_paused"]);
  t.is(trace.httpStatus, 403);
  await w.stack.api.call("PATCH", `/v1/agents/${id}`, { status: "archived" });
  const archived = await rawCall(w.proxyUrl("openai", "/chat/completions"), { headers: { authorization: "Bearer sk", ...w.serviceHeaders(id) }, body: CHAT });
  t.is(archived.status, 404);
  serviceHeadersPresent(t, archived, "archived");
});

test.serial("the rate limit answers 429 rate_limit_exceeded with Retry-After, traced as blocked, the provider not called", async (t) => {
  const id = await w.agent("rate-limited", "rate_limit: 2\n");
  const call = () => rawCall(w.proxyUrl("openai", "/chat/completions"), { headers: { authorization: "Bearer sk", ...w.serviceHeaders(id) }, body: CHAT });
  w.fakes.script({});
  t.is((await call()).status, 200);
  t.is((await call()).status, 200);
  const before = w.fakes.requests.length;
  const res = await call();
  t.is(res.status, 429);
  t.is(errorOf(res).code, "rate_limit_exceeded");
  t.regex(String(res.headers["retry-after"]), /^\d+$/);
  t.true(Number(res.headers["retry-after"]) >= 1 && Number(res.headers["retry-after"]) <= 60);
  serviceHeadersPresent(t, res, "rate limit");
  t.is(w.fakes.requests.length, before);
  const trace = await w.trace(String(res.headers["x-service-trace-id"]));
  t.is(trace.status, "blocked");
  t.deepEqual(trace.policiesFired, ["rate_limit"]);
  t.is(trace.errorCode, "rate_limit_exceeded");
});

test.serial("a spent daily budget answers 429 budget_exceeded with Retry-After, traced as blocked, the provider not called", async (t) => {
  const id = await w.agent("tight-budget", "budget_limit_daily: 0.0001\n");
  const call = () => rawCall(w.proxyUrl("openai", "/chat/completions"), { headers: { authorization: "Bearer sk", ...w.serviceHeaders(id) }, body: CHAT });
  // The first call may start (spend is below the limit); its real cost ($0.00125) uses the budget up.
  w.fakes.script({ usage: { inputTokens: 100, outputTokens: 100 } });
  const first = await call();
  t.is(first.status, 200);
  t.is(first.headers["x-service-cost"], "0.00125");
  const before = w.fakes.requests.length;
  const res = await call();
  t.is(res.status, 429);
  t.is(errorOf(res).code, "budget_exceeded");
  const retry = Number(res.headers["retry-after"]);
  t.true(retry >= 1 && retry <= 86_400);
  serviceHeadersPresent(t, res, "budget");
  t.is(w.fakes.requests.length, before);
  const trace = await w.trace(String(res.headers["x-service-trace-id"]));
  t.is(trace.status, "blocked");
  t.deepEqual(trace.policiesFired, ["budget"]);
});

test.serial("policies: an inbound block is 403 policy_violation; an inbound redaction changes only the forwarded text; an outbound block still reports the cost", async (t) => {
  const id = await w.agent("governed");
  const mk = async (body: Record<string, unknown>) => {
    const r = await w.stack.api.post<{ id: string }>("/v1/policies", { ...body, agents: [id] });
    if (r.status !== 201) throw new Error(JSON.stringify(r.body));
    return r.body.id;
  };
  const blockId = await mk({ name: "no secrets", action: "block", priority: 1, conditions: { direction: "inbound", keywords: ["project-x"] } });
  await mk({ name: "redact email", action: "redact", priority: 2, conditions: { direction: "inbound", pii_types: ["email"] } });
  await mk({ name: "no leaks out", action: "block", priority: 3, conditions: { direction: "outbound", keywords: ["confidential"] } });
  await eventually(async () => w.sidecar.state().orderedPolicies.length >= 3);
  const headers = { authorization: "Bearer sk", ...w.serviceHeaders(id) };
  const url = w.proxyUrl("openai", "/chat/completions");

  const before = w.fakes.requests.length;
  const blocked = await rawCall(url, { headers, body: { model: "gpt-4o", messages: [{ role: "user", content: "tell me about Project-X" }] } });
  t.is(blocked.status, 403);
  t.like(errorOf(blocked), { code: "policy_violation", policy_id: blockId, trace_id: String(blocked.headers["x-service-trace-id"]) });
  t.is(blocked.headers["x-service-policies"], "2", "the two inbound policies were evaluated");
  t.is(w.fakes.requests.length, before, "the provider is not called");

  w.fakes.script({ text: "Noted." });
  const redacted = await rawCall(url, { headers, body: { model: "gpt-4o", messages: [{ role: "user", content: "mail me at jane.doe@example.com" }] } });
  t.is(redacted.status, 200);
  const sent = w.fakes.requests.at(-1)!.json as { messages: { content: string }[] };
  t.is(sent.messages[0]?.content, "mail me at [REDACTED:email]");
  t.is(redacted.headers["x-service-policies"], "3", "inbound and outbound policies were evaluated");

  w.fakes.script({ text: "This is confidential material.", usage: { inputTokens: 10, outputTokens: 5 } });
  const outBlocked = await rawCall(url, { headers, body: { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] } });
  t.is(outBlocked.status, 403);
  t.is(errorOf(outBlocked).code, "policy_violation");
  t.true(Number(outBlocked.headers["x-service-cost"]) > 0, "the provider was paid: the cost is reported");
  const trace = await w.trace(String(outBlocked.headers["x-service-trace-id"]));
  t.is(trace.status, "blocked");
  t.is(trace.costUsd, Number(outBlocked.headers["x-service-cost"]));
});

test.serial("an unreachable provider is 502 upstream_unavailable, traced as error", async (t) => {
  const res = await rawCall(`${edge.url}/v1/proxy/mistral/v1/chat/completions`, { headers: { authorization: "Bearer m", ...w.serviceHeaders(agentId) }, body: { model: "mistral-small-latest", messages: [{ role: "user", content: "hi" }] } });
  await assertTracedFailure(t, res, 502, "upstream_unavailable", "502");
  const trace = await w.trace(String(res.headers["x-service-trace-id"]));
  t.is(trace.inputTokens, 0, "never reached the provider: nothing billed");
  t.is(trace.costUsd, 0);
});

test.serial("a provider that does not answer within UPSTREAM_TIMEOUT_MS is 504 upstream_timeout (no headers, or a body that stalls)", async (t) => {
  for (const stall of ["headers", "body"] as const) {
    ctl.handle(async (_req, res) => {
      if (stall === "body") {
        res.writeHead(200, { "content-type": "application/json" });
        await write(res, '{"id":"chatcmpl-1",');
      }
      // …and nothing more
    });
    const res = await rawCall(`${edge.url}/v1/proxy/openai/v1/chat/completions`, { headers: { authorization: "Bearer sk", ...w.serviceHeaders(agentId) }, body: CHAT });
    await assertTracedFailure(t, res, 504, "upstream_timeout", `504 ${stall}`);
    // The provider received the prompt: it is counted locally and priced, not recorded as free.
    const trace = await w.trace(String(res.headers["x-service-trace-id"]));
    t.is(trace.inputTokens, estimateTokens("hello"), `504 ${stall}`);
    t.true(trace.tokensEstimated, `504 ${stall}`);
    t.true(trace.costUsd > 0, `504 ${stall}`);
  }
});

test.serial("a provider that drops the connection in the middle of a JSON answer is 502 upstream_unavailable, traced as error", async (t) => {
  ctl.handle(async (_req, res) => {
    res.writeHead(200, { "content-type": "application/json", "content-length": "400" });
    await write(res, '{"id":"chatcmpl-1","object":"chat.completion",');
    res.socket?.destroy();
  });
  const res = await rawCall(`${edge.url}/v1/proxy/openai/v1/chat/completions`, { headers: { authorization: "Bearer sk", ...w.serviceHeaders(agentId) }, body: CHAT });
  await assertTracedFailure(t, res, 502, "upstream_unavailable", "502 mid-body");
});

test.serial("provider 4xx/5xx answers are passed through unchanged (status, body bytes, headers), traced as error", async (t) => {
  for (const status of [400, 401, 403, 404, 413, 422, 429, 500, 503, 529]) {
    const body = Buffer.from(`{\n  "error": {"message": "scripted failure ${status} \\u00e9", "type": "x", "code": ${status}}\n}\n`);
    ctl.handle((_req, res) => {
      res.writeHead(status, { "content-type": "application/json", "retry-after": "7", "x-request-id": `req_provider_${status}`, "x-ratelimit-remaining-requests": "0", "x-service-evil": "1", "content-length": String(body.length) });
      res.end(body);
    });
    const res = await rawCall(`${edge.url}/v1/proxy/openai/v1/chat/completions`, { headers: { authorization: "Bearer sk", ...w.serviceHeaders(agentId) }, body: CHAT });
    t.is(res.status, status);
    t.true(res.bytes.equals(body), `${status}: body unchanged`);
    t.is(res.headers["retry-after"], "7");
    t.is(res.headers["x-upstream-request-id"], `req_provider_${status}`, "the provider's request id is kept, under its own name");
    t.is(res.headers["x-service-evil"], undefined, "a provider's X-Service-* field does not pass for the sidecar's");
    t.is(res.headers["x-ratelimit-remaining-requests"], "0");
    t.is(res.headers["content-length"], String(body.length));
    serviceHeadersPresent(t, res, String(status));
    const trace = await w.trace(String(res.headers["x-service-trace-id"]));
    t.is(trace.status, "error");
    t.is(trace.httpStatus, status);
    t.is(trace.errorCode, `upstream_${status}`);
    t.is(res.headers["x-request-id"], trace.requestId, "X-Request-Id is the sidecar's (the trace's)");
  }
});

test.serial("a 200 answer that says its generation failed is passed unchanged and traced as error upstream_answer_error, with its usage and cost", async (t) => {
  // The providers' own signals: Mistral's finish_reason "error", Cohere's ERROR (through the fakes).
  for (const [provider, finishReason] of [["mistral", "error"], ["cohere", "ERROR"]] as const) {
    const script = { text: "Half an answer.", finishReason, usage: { inputTokens: 31, outputTokens: 4 } };
    const req = nativeRequest(provider);
    w.fakes.script(script);
    const res = await rawCall(w.proxyUrl(provider, req.path), { headers: { ...req.headers, ...w.serviceHeaders(agentId) }, body: req.body });
    t.is(res.status, 200, provider);
    const answer = JSON.parse(res.text) as { finish_reason?: string; choices?: { finish_reason: string }[] };
    t.is(answer.choices?.[0]?.finish_reason ?? answer.finish_reason, finishReason, `${provider}: the provider's answer as it came`);
    const trace = await w.trace(String(res.headers["x-service-trace-id"]));
    t.is(trace.status, "error", provider);
    t.is(trace.errorCode, "upstream_answer_error", provider);
    t.is(trace.httpStatus, 200, provider);
    t.is(trace.inputTokens, 31, provider);
    t.is(trace.outputTokens, 4, provider);
    t.is(trace.costUsd, computeCost(priceFor(provider, MODELS[provider]), { inputTokens: 31, outputTokens: 4, cachedInputTokens: 0, cacheWriteTokens: 0 }).totalCost, provider);
    t.is(Number(res.headers["x-service-cost"]), trace.costUsd, provider);
  }
  // An error object in a 200 body (OpenAI-compatible servers), and a Responses object whose status is "failed".
  const failures: [string, Buffer][] = [
    ["/v1/chat/completions", Buffer.from('{"error":{"message":"model overloaded","type":"server_error","code":null}}')],
    ["/v1/responses", Buffer.from(JSON.stringify({ id: "resp_1", object: "response", status: "failed", error: { code: "server_error", message: "The model failed to generate a response." }, model: "gpt-4o", output: [], usage: { input_tokens: 12, output_tokens: 0, total_tokens: 12 } }))],
  ];
  for (const [path, body] of failures) {
    ctl.handle((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": String(body.length) });
      res.end(body);
    });
    const res = await rawCall(`${edge.url}/v1/proxy/openai${path}`, { headers: { authorization: "Bearer sk", ...w.serviceHeaders(agentId) }, body: path === "/v1/responses" ? { model: "gpt-4o", input: "hello" } : CHAT });
    t.is(res.status, 200, path);
    t.true(res.bytes.equals(body), `${path}: body unchanged`);
    const trace = await w.trace(String(res.headers["x-service-trace-id"]));
    t.is(trace.status, "error", path);
    t.is(trace.errorCode, "upstream_answer_error", path);
  }
  // A clean answer of each of those shapes stays a success.
  w.fakes.script({ text: "A whole answer." });
  const req = nativeRequest("mistral");
  const ok = await rawCall(w.proxyUrl("mistral", req.path), { headers: { ...req.headers, ...w.serviceHeaders(agentId) }, body: req.body });
  const trace = await w.trace(String(ok.headers["x-service-trace-id"]));
  t.is(trace.status, "success");
  t.is(trace.errorCode, "");
});

test.serial("hop-by-hop fields are not forwarded either way (RFC 9110 §7.6.1), X-Service-* never, Via is added, the rest passes", async (t) => {
  ctl.handle((_req, res) => {
    const body = JSON.stringify(OPENAI_OK);
    res.writeHead(200, { "content-type": "application/json", connection: "x-hop-resp", "x-hop-resp": "1", "keep-alive": "timeout=5", "x-end-to-end": "kept", "content-length": String(Buffer.byteLength(body)) });
    res.end(body);
  });
  const before = ctl.requests.length;
  const res = await rawCall(`${edge.url}/v1/proxy/openai/v1/chat/completions`, {
    headers: {
      authorization: "Bearer sk-end-to-end",
      connection: "keep-alive, x-hop-req",
      "x-hop-req": "1",
      "keep-alive": "timeout=5",
      te: "trailers",
      "proxy-authorization": "Basic Zm9vOmJhcg==",
      "x-custom-end-to-end": "yes",
      "openai-organization": "org-1",
      "X-Service-Session": "sess-1",
      ...w.serviceHeaders(agentId),
    },
    body: CHAT,
  });
  t.is(res.status, 200);
  const sent = ctl.requests[before]!.headers;
  for (const h of ["x-hop-req", "te", "proxy-authorization", "x-service-key", "x-service-agent", "x-service-session"]) t.is(sent[h], undefined, `${h} not forwarded`);
  t.not(sent["keep-alive"], "timeout=5");
  t.is(sent.authorization, "Bearer sk-end-to-end");
  t.is(sent["x-custom-end-to-end"], "yes");
  t.is(sent["openai-organization"], "org-1");
  t.regex(String(sent.via), /1\.1 agentgov-sidecar/);
  t.is(sent["accept-encoding"], "identity");
  t.is(res.headers["x-hop-resp"], undefined);
  t.not(res.headers["keep-alive"], "timeout=5");
  t.is(res.headers["x-end-to-end"], "kept");
  const trace = await w.trace(String(res.headers["x-service-trace-id"]));
  t.is(trace.sessionId, "sess-1");
});

test.serial("JSON bodies pass byte for byte both ways when no policy changes them", async (t) => {
  const requestBytes = Buffer.from('{ "messages" : [ {"content":"caf\\u00e9 \u00e9t\u00e9 \ud83d\ude00","role":"user"} ],\n\t"model":"gpt-4o" , "temperature": 0.70 }');
  const answer = Buffer.from(`{"choices":[{"message":{"content":"ok \\u2713","role":"assistant"},"index":0,"finish_reason":"stop"}] ,\n "usage":{"completion_tokens":3,"prompt_tokens":11,"total_tokens":14}, "model":"gpt-4o", "object":"chat.completion"}`);
  ctl.handle((_req, res) => {
    res.writeHead(200, { "content-type": "application/json", "content-length": String(answer.length) });
    res.end(answer);
  });
  const before = ctl.requests.length;
  const res = await rawCall(`${edge.url}/v1/proxy/openai/v1/chat/completions`, { headers: { authorization: "Bearer sk", ...w.serviceHeaders(agentId) }, body: requestBytes });
  t.is(res.status, 200);
  t.true(ctl.requests[before]!.body.equals(requestBytes), "request bytes unchanged");
  t.is(ctl.requests[before]!.headers["content-length"], String(requestBytes.length));
  t.true(res.bytes.equals(answer), "answer bytes unchanged");
  const trace = await w.trace(String(res.headers["x-service-trace-id"]));
  t.is(trace.inputTokens, 11);
  t.is(trace.completion, "ok ✓");
});

test.serial("the spec path /v1/proxy/{provider}/chat/completions takes each provider's native body (Gemini: model and stream from the body, removed)", async (t) => {
  for (const p of PROVIDERS) {
    for (const stream of [false, true]) {
      const req = nativeRequest(p, { stream });
      const body = p === "google" ? { model: MODELS.google, ...(stream ? { stream: true } : {}), ...req.body } : req.body;
      const bytes = Buffer.from(JSON.stringify(body));
      w.fakes.script({ text: "spec path works", usage: { inputTokens: 7, outputTokens: 3 } });
      const before = w.fakes.requests.length;
      const res = await rawCall(w.proxyUrl(p, "/chat/completions"), { headers: { ...req.headers, ...w.serviceHeaders(agentId) }, body: bytes });
      t.is(res.status, 200, `${p} ${stream}: ${res.text.slice(0, 300)}`);
      const sent = w.fakes.requests[before]!;
      const nativePath = req.path.split("?")[0] ?? req.path;
      t.is(sent.path, nativePath, `${p} ${stream}`);
      if (p === "google") {
        t.is(sent.query, stream ? "?alt=sse" : "");
        t.deepEqual(sent.json, req.body, "model and stream removed, the rest unchanged");
      } else {
        t.true(sent.body.equals(bytes), `${p}: the native body is forwarded byte for byte`);
      }
      const trace = await w.trace(String(res.headers["x-service-trace-id"]));
      t.is(trace.model, MODELS[p]);
      t.is(trace.streamed, stream);
      t.is(trace.outputTokens, 3);
    }
  }
});

test.serial("a provider that compresses its answer anyway is decoded: the client gets plain bytes, usage is read", async (t) => {
  const plain = Buffer.from(JSON.stringify(OPENAI_OK));
  const sse = Buffer.from(
    'data: {"id":"c","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"content":"zipped"},"finish_reason":"stop"}]}\n\n' +
      'data: {"id":"c","object":"chat.completion.chunk","model":"gpt-4o","choices":[],"usage":{"prompt_tokens":8,"completion_tokens":2,"total_tokens":10}}\n\ndata: [DONE]\n\n',
  );
  for (const [kind, bytes, type] of [["json", plain, "application/json"], ["sse", sse, "text/event-stream"]] as const) {
    const zipped = gzipSync(bytes);
    ctl.handle((_req, res) => {
      res.writeHead(200, { "content-type": type, "content-encoding": "gzip", "content-length": String(zipped.length) });
      res.end(zipped);
    });
    const res = await rawCall(`${edge.url}/v1/proxy/openai/v1/chat/completions`, { headers: { authorization: "Bearer sk", ...w.serviceHeaders(agentId) }, body: { ...CHAT, stream: kind === "sse" } });
    t.is(res.status, 200);
    t.is(res.headers["content-encoding"], undefined, kind);
    t.true(res.bytes.equals(bytes), `${kind}: decoded bytes`);
    const trace = await w.trace(String(res.headers["x-service-trace-id"]));
    t.is(trace.inputTokens, 8, kind);
    t.is(trace.outputTokens, 2, kind);
    t.false(trace.tokensEstimated, kind);
  }
});

test.serial("a 2xx answer that is not JSON: 502 unreadable_answer (traced) when an outbound redact policy applies, else passed through byte for byte", async (t) => {
  const governed = await w.agent("unreadable-governed");
  const r = await w.stack.api.post<{ id: string }>("/v1/policies", { name: "redact email out", action: "redact", priority: 1, conditions: { direction: "outbound", pii_types: ["email"] }, agents: [governed] });
  t.is(r.status, 201);
  await eventually(async () => edge.state().agents.has(governed) && edge.state().orderedPolicies.some((p) => p.id === r.body.id));
  const garbage = Buffer.from("jane.doe@example.com \u00e9\n\x00\xff not json", "latin1");
  for (const [label, headers] of [
    ["text/plain", { "content-type": "text/plain" }],
    ["unknown encoding", { "content-type": "application/json", "content-encoding": "zstd" }],
  ] as const) {
    ctl.handle((_req, res) => {
      res.writeHead(200, { ...headers, "content-length": String(garbage.length) });
      res.end(garbage);
    });
    const refused = await rawCall(`${edge.url}/v1/proxy/openai/v1/chat/completions`, { headers: { authorization: "Bearer sk", ...w.serviceHeaders(governed) }, body: CHAT });
    await assertTracedFailure(t, refused, 502, "unreadable_answer", label);
    t.false(refused.text.includes("jane.doe"), label);
    t.is(errorOf(refused).trace_id, String(refused.headers["x-service-trace-id"]), label);
    const trace = await w.trace(String(refused.headers["x-service-trace-id"]));
    t.true(trace.costUsd > 0, `${label}: the provider answered, so its prompt is priced`);

    // The same answer to an agent without outbound block/redact policies passes unchanged.
    const passed = await rawCall(`${edge.url}/v1/proxy/openai/v1/chat/completions`, { headers: { authorization: "Bearer sk", ...w.serviceHeaders(agentId) }, body: CHAT });
    t.is(passed.status, 200, label);
    t.true(passed.bytes.equals(garbage), `${label}: bytes unchanged`);
    t.is((await w.trace(String(passed.headers["x-service-trace-id"]))).status, "success", label);
  }
});
