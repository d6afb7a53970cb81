// Unit tests of the proxy's small helpers: SSE boundary tracking, hop-by-hop header rules, URL split,
// USD formatting, budget-reservation inputs, reading a provider's answer.
import { PassThrough } from "node:stream";
import test from "ava";
import { SseBoundary } from "./sse-boundary.js";
import { addServiceHeaders, downstreamResponseHeaders, upstreamRequestHeaders } from "./headers.js";
import { parseProxyUrl } from "./route.js";
import { formatUsd } from "./cost.js";
import { maxOutputTokens, secondsToUtcMidnight, utcDay } from "./budget-reservation.js";
import { readUpstreamBody } from "./upstream.js";

function boundaryAfter(...chunks: string[]): boolean {
  const b = new SseBoundary();
  for (const c of chunks) b.push(Buffer.from(c));
  return b.atBoundary();
}

test("SSE boundary: only after an empty line (LF, CRLF or CR), whatever the chunking; never after a trailing CR (an LF may follow)", (t) => {
  t.true(boundaryAfter());
  t.true(boundaryAfter("data: x\n\n"));
  t.true(boundaryAfter("data: x\r\n\r\n"));
  t.true(boundaryAfter("data: x\r\r", "\n"));
  t.true(boundaryAfter("data: x\r\r", ": c\n\n"));
  t.true(boundaryAfter(": ping\n\n"));
  t.true(boundaryAfter("data: x\n", "\n"));
  t.true(boundaryAfter("data: x\r\n\r", "\n"));
  t.true(boundaryAfter("d", "a", "t", "a", ":", " ", "x", "\n", "\n"));
  t.false(boundaryAfter("data: x"));
  t.false(boundaryAfter("data: x\n"));
  t.false(boundaryAfter("data: x\r\n"));
  t.false(boundaryAfter("data: x\n\ndata: y"));
  t.false(boundaryAfter("data: x\n\nevent: a\n"));
  t.false(boundaryAfter("data: x\n", "\n", "d"));
  // A CR at the end may be the first half of a CRLF: the event's end is known only with the next byte.
  t.false(boundaryAfter("data: x\r\n\r"));
  t.false(boundaryAfter("data: x\r\n", "\r"));
  t.false(boundaryAfter("data: x\r\r"));
  t.false(boundaryAfter("\r"));
});

test("upstream headers: hop-by-hop, Connection-listed and X-Service-* dropped; credentials kept; identity encoding and Via set", (t) => {
  const h = upstreamRequestHeaders(
    {
      host: "sidecar:8181",
      connection: "keep-alive, X-Drop",
      "x-drop": "1",
      "keep-alive": "timeout=5",
      te: "trailers",
      "transfer-encoding": "chunked",
      "proxy-authorization": "Basic x",
      upgrade: "h2c",
      expect: "100-continue",
      "content-length": "999",
      "accept-encoding": "gzip, br",
      authorization: "Bearer sk",
      "x-api-key": "k",
      "x-goog-api-key": "g",
      "x-service-key": "svc_api_x",
      "x-service-agent": "agt_x",
      "anthropic-version": "2023-06-01",
      via: "1.1 lb",
      "x-multi": ["a", "b"],
    },
    42,
  );
  t.deepEqual(h, {
    authorization: "Bearer sk",
    "x-api-key": "k",
    "x-goog-api-key": "g",
    "anthropic-version": "2023-06-01",
    via: "1.1 lb, 1.1 agentgov-sidecar",
    "x-multi": "a, b",
    "accept-encoding": "identity",
    "content-length": "42",
  });
});

test("downstream headers: hop-by-hop, framing and the provider's X-Service-* dropped; X-Request-Id is the sidecar's, the provider's kept as X-Upstream-Request-Id", (t) => {
  const h = downstreamResponseHeaders(
    { "content-type": "application/json", "content-length": "10", connection: "x-hop", "x-hop": "1", "keep-alive": "timeout=5", "transfer-encoding": "chunked", "content-encoding": "gzip", "x-request-id": "req_provider", "retry-after": "3", "x-service-cost": "0", "x-service-evil": "1" },
    true,
  );
  t.deepEqual(h, { "content-type": "application/json", "x-upstream-request-id": "req_provider", "retry-after": "3" });
  addServiceHeaders(h, { "x-service-trace-id": "trc_1", "x-request-id": "req_sidecar" });
  t.is(h["x-request-id"], "req_sidecar");
  t.is(h["x-upstream-request-id"], "req_provider");
  t.is(h["x-service-trace-id"], "trc_1");
  t.is(downstreamResponseHeaders({ "content-encoding": "zstd" }, false)["content-encoding"], "zstd");
});

test("downstream headers: fields bound to the provider's origin (cookies, CORS, HSTS, Alt-Svc, Clear-Site-Data) dropped", (t) => {
  const h = downstreamResponseHeaders(
    {
      "content-type": "application/json",
      "set-cookie": ["__cf_bm=abc; Domain=.api.example.com; HttpOnly", "_cfuvid=def"],
      "set-cookie2": "old=1",
      "access-control-allow-origin": "*",
      "access-control-allow-credentials": "true",
      "access-control-expose-headers": "x-request-id",
      "strict-transport-security": "max-age=31536000; includeSubDomains",
      "alt-svc": 'h3=":443"; ma=86400',
      "clear-site-data": '"cookies"',
      "x-ratelimit-remaining-requests": "99",
      "openai-processing-ms": "12",
    },
    false,
  );
  t.deepEqual(h, { "content-type": "application/json", "x-ratelimit-remaining-requests": "99", "openai-processing-ms": "12" });
});

test("proxy URLs split into provider, native sub-path and query", (t) => {
  t.deepEqual(parseProxyUrl("/v1/proxy/google/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"), {
    pathname: "/v1/proxy/google/v1beta/models/gemini-2.5-flash:streamGenerateContent",
    providerName: "google",
    subPath: "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
    search: "?alt=sse",
  });
  t.deepEqual(parseProxyUrl("/v1/proxy/openai"), { pathname: "/v1/proxy/openai", providerName: "openai", subPath: "/", search: "" });
  t.is(parseProxyUrl("/v1/chat/completions"), undefined);
  t.is(parseProxyUrl("/v1/proxyx/openai/chat/completions"), undefined);
});

test("USD amounts are plain decimals without float noise", (t) => {
  t.is(formatUsd(0), "0");
  t.is(formatUsd(1.5), "1.5");
  t.is(formatUsd(0.00125), "0.00125");
  t.is(formatUsd(15 / 1e10), "0.0000000015");
  t.is(formatUsd(0.1 + 0.2), "0.3");
  t.is(Number(formatUsd(123456789 / 1e10)), 123456789 / 1e10);
});

test("budget reservation inputs: max output tokens in each native field (else the model's maximum), times the answers asked for; UTC day, seconds to midnight", (t) => {
  t.is(maxOutputTokens({ max_tokens: 300 }, "openai", "gpt-4o"), 300);
  t.is(maxOutputTokens({ max_completion_tokens: 77, max_tokens: 300 }, "openai", "gpt-4o"), 77);
  t.is(maxOutputTokens({ generationConfig: { maxOutputTokens: 512 } }, "google", "gemini-2.5-flash"), 512);
  t.is(maxOutputTokens({ max_output_tokens: 64 }, "cohere", "command-a-03-2025"), 64);
  t.is(maxOutputTokens({}, "cohere", "command-a-03-2025"), 8_192);
  t.is(maxOutputTokens({}, "cohere", "command-a-reasoning-08-2025"), 32_000); // reasoning answers are longer
  // No maximum: the model's own (a gpt-4o answer reaches 16,384 tokens), else the provider's largest.
  t.is(maxOutputTokens({}, "openai", "gpt-4o-mini"), 16_384);
  t.is(maxOutputTokens({ max_tokens: -1 }, "openai", "gpt-4o-2024-08-06"), 16_384);
  t.is(maxOutputTokens({}, "openai", "gpt-5-mini"), 128_000);
  t.is(maxOutputTokens({}, "openai", "some-future-model"), 128_000);
  t.is(maxOutputTokens({}, "google", "models/gemini-2.5-pro"), 65_536);
  t.is(maxOutputTokens({}, "mistral", "mistral-small-latest"), 131_072);
  // Every answer asked for is billed.
  t.is(maxOutputTokens({ max_tokens: 1000, n: 8 }, "openai", "gpt-4o"), 8000);
  t.is(maxOutputTokens({ generationConfig: { maxOutputTokens: 100, candidateCount: 3 } }, "google", "gemini-2.5-flash"), 300);
  t.is(maxOutputTokens({ max_tokens: 1000, n: 1 }, "openai", "gpt-4o"), 1000);
  const ms = Date.UTC(2026, 10, 21, 23, 59, 30, 500);
  t.is(utcDay(ms), "2026-11-21");
  t.is(utcDay(ms + 30_000), "2026-11-22");
  t.is(utcDay(ms), "2026-11-21");
  t.is(secondsToUtcMidnight(ms), 30);
});

test("readUpstreamBody: one chunk is returned as is (no copy), several are joined; an error or an early close rejects", async (t) => {
  const one = new PassThrough();
  const chunk = Buffer.from('{"id":"x"}');
  const read1 = readUpstreamBody(one);
  one.end(chunk);
  t.is(await read1, chunk);

  const many = new PassThrough();
  const read2 = readUpstreamBody(many);
  many.write("ab");
  many.write("cd");
  many.end("ef");
  t.is((await read2).toString(), "abcdef");

  const failing = new PassThrough();
  const read3 = readUpstreamBody(failing);
  failing.write("ab");
  failing.destroy(Object.assign(new Error("body timeout"), { code: "UND_ERR_BODY_TIMEOUT" }));
  t.is((await t.throwsAsync(read3) as Error & { code: string }).code, "UND_ERR_BODY_TIMEOUT");

  const cut = new PassThrough();
  const read4 = readUpstreamBody(cut);
  cut.write("ab");
  cut.destroy();
  t.is((await t.throwsAsync(read4) as Error & { code: string }).code, "UND_ERR_SOCKET");
});
