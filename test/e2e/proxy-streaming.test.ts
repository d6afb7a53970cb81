// Streaming through the sidecar, edge cases (research/gateways.md §4: buffered streams, `: ping`
// crashes, events split across TCP chunks, idle timeouts during a long time to first token, lost
// traces of interrupted streams): nothing is held back, comments pass, split events are parsed,
// keep-alive comments fill a long silence without corrupting the stream for any SDK, a client that
// goes away aborts the provider call and the trace is still recorded, a stream the provider ends cleanly
// before its end marker reaches the SDK as the provider's error event and is traced as an error with the
// usage it carried.
import test from "ava";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { ApiError as GoogleApiError } from "@google/genai";
import type { Sidecar } from "@agentgov/data-plane";
import { eventually } from "../harness/stack.js";
import { estimateTokens, getProvider, parseSse } from "../../data-plane/src/providers/index.js";
import { computeCost, priceFor } from "../../data-plane/src/pricing/index.js";
import { nativeRequest, rawRequest, type FakeProviderName } from "../fakes/providers/index.js";
import { MODELS, PROVIDERS, rawCall, readChunks, recordingFetch, sdkClients, startProxyWorld, type ProxyWorld } from "./proxy-helpers.js";
import { DRIVERS } from "./proxy-sdk-drivers.js";
import { gate, sleep, startControlledUpstream, tick, write, type ControlledUpstream } from "./proxy-upstreams.js";

let w: ProxyWorld;
let ctl: ControlledUpstream;
/** Sidecar in front of the controlled upstream, keep-alives off (byte-exact comparisons). */
let exact: Sidecar;
/** Sidecar in front of the controlled upstream, a keep-alive comment after 100 ms of silence. */
let ka: Sidecar;
let agentId: string;

test.before(async () => {
  w = await startProxyWorld();
  ctl = await startControlledUpstream();
  const urls = {
    PROVIDER_OPENAI_URL: ctl.urls.openai,
    PROVIDER_ANTHROPIC_URL: ctl.urls.anthropic,
    PROVIDER_GOOGLE_URL: ctl.urls.google,
    PROVIDER_MISTRAL_URL: ctl.urls.mistral,
    PROVIDER_COHERE_URL: ctl.urls.cohere,
  };
  exact = await w.stack.sidecar({ ...urls, SSE_KEEPALIVE_MS: "0" });
  ka = await w.stack.sidecar({ ...urls, SSE_KEEPALIVE_MS: "100" });
  agentId = await w.agent("streaming");
  await eventually(async () => exact.state().agents.has(agentId) && ka.state().agents.has(agentId));
});
test.after.always(async () => {
  await w?.stop();
  await ctl?.close();
});

const USAGE = { inputTokens: 57, outputTokens: 14 };
const TEXT = "Split into single bytes, with pings.";

/** A native stream exactly as the fake provider sends it (comments/pings on), to replay through the controlled upstream. */
async function capture(p: FakeProviderName): Promise<{ bytes: Buffer; contentType: string; path: string; headers: Record<string, string>; body: unknown }> {
  const req = nativeRequest(p, { stream: true });
  w.fakes.script({ text: TEXT, usage: USAGE, comments: true });
  const direct = await rawRequest(`${w.fakes.urls[p]}${req.path}`, { headers: req.headers, body: req.body });
  if (direct.status !== 200) throw new Error(`capture ${p}: ${direct.status} ${direct.text}`);
  return { bytes: direct.bytes, contentType: String(direct.headers["content-type"]), path: req.path, headers: req.headers, body: req.body };
}

const sseHeaders = (contentType: string) => ({ "content-type": contentType, "cache-control": "no-cache" });

for (const p of PROVIDERS) {
  test.serial(`${p}: a stream written one byte at a time, comments and pings included, reaches the client byte for byte and its usage is read`, async (t) => {
    const native = await capture(p);
    t.true(native.bytes.includes(p === "anthropic" ? "event: ping" : ": ping"), "the captured stream carries keep-alive comments/pings");
    ctl.handle(async (_req, res) => {
      res.socket?.setNoDelay(true);
      res.writeHead(200, sseHeaders(native.contentType));
      res.flushHeaders();
      for (let i = 0; i < native.bytes.length; i++) {
        await write(res, native.bytes.subarray(i, i + 1));
        await tick();
      }
      res.end();
    });
    const before = ctl.requests.length;
    const got = await rawRequest(`${exact.url}/v1/proxy/${p}${native.path}`, { headers: { ...native.headers, ...w.serviceHeaders(agentId) }, body: native.body });
    t.is(got.status, 200);
    t.true(got.bytes.equals(native.bytes), "the client gets exactly the provider's bytes");
    t.true(Buffer.from(ctl.requests[before]!.body).equals(Buffer.from(JSON.stringify(native.body))), "the request body is forwarded byte for byte");
    const trace = await w.trace(String(got.headers["x-service-trace-id"]));
    t.is(trace.status, "success");
    t.is(trace.inputTokens, USAGE.inputTokens);
    t.is(trace.outputTokens, USAGE.outputTokens);
    t.false(trace.tokensEstimated);
    t.is(trace.completion, TEXT);
  });
}

test.serial("headers reach the client before the first event, and the first event before the provider sends the rest", async (t) => {
  t.timeout(30_000, "the sidecar held back bytes the provider had sent");
  const headersSeen = gate();
  const firstSeen = gate();
  ctl.handle(async (_req, res) => {
    res.writeHead(200, sseHeaders("text/event-stream"));
    res.flushHeaders();
    await headersSeen.promise; // nothing more until the client has the headers
    await write(res, 'data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":"first"}}]}\n\n');
    await firstSeen.promise; // the rest only once the client has the first event
    await write(res, 'data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"content":" second"},"finish_reason":"stop"}]}\n\n');
    await write(res, 'data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-4o","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}\n\n');
    await write(res, "data: [DONE]\n\n");
    res.end();
  });
  const res = await fetch(`${exact.url}/v1/proxy/openai/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk", ...w.serviceHeaders(agentId) },
    body: JSON.stringify({ model: "gpt-4o", stream: true, messages: [{ role: "user", content: "hi" }] }),
  });
  t.is(res.status, 200);
  headersSeen.open();
  let firstAt = "";
  const text = await readChunks(res, (soFar) => {
    if (!firstAt && soFar.includes('"content":"first"')) {
      firstAt = soFar;
      firstSeen.open();
    }
  });
  t.false(firstAt.includes("second"), "the first event arrived alone");
  t.true(text.endsWith("data: [DONE]\n\n"));
  const trace = await w.trace(res.headers.get("x-service-trace-id") ?? "");
  t.is(trace.completion, "first second");
  t.is(trace.inputTokens, 5);
  t.is(trace.outputTokens, 2);
});

test.serial("a long silence before the first token is filled with SSE keep-alive comments, only between events", async (t) => {
  t.timeout(30_000);
  for (const p of ["openai", "google"] as const) {
    const native = await capture(p);
    const keepAliveSeen = gate();
    ctl.handle(async (_req, res) => {
      res.writeHead(200, sseHeaders(native.contentType));
      res.flushHeaders();
      await keepAliveSeen.promise; // the provider is "thinking"
      const sep = p === "google" ? "\r\n\r\n" : "\n\n";
      const half = native.bytes.indexOf(sep, Math.floor(native.bytes.length / 3)) + sep.length / 2; // after a data line, before the blank line ending its event
      await write(res, native.bytes.subarray(0, half));
      await sleep(350); // silence in the middle of an event: no comment may be inserted here
      await write(res, native.bytes.subarray(half));
      res.end();
    });
    const res = await fetch(`${ka.url}/v1/proxy/${p}${native.path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...native.headers, ...w.serviceHeaders(agentId) },
      body: JSON.stringify(native.body),
    });
    const text = await readChunks(res, (soFar) => {
      if (soFar.includes(": keep-alive")) keepAliveSeen.open();
    });
    const comment = p === "google" ? ": keep-alive\r\n\r\n" : ": keep-alive\n\n";
    t.true(text.startsWith(comment), `${p}: the stream starts with keep-alive comments`);
    const stripped = text.split(comment).join("");
    t.is(stripped, native.bytes.toString("utf8"), `${p}: apart from whole comment events, the provider's bytes are unchanged`);
    const trace = await w.trace(res.headers.get("x-service-trace-id") ?? "");
    t.is(trace.status, "success");
    t.is(trace.outputTokens, USAGE.outputTokens);
  }
});

for (const p of PROVIDERS) {
  test.serial(`${p}: its official SDK parses a stream that began with keep-alive comments`, async (t) => {
    const native = await capture(p);
    ctl.handle(async (_req, res) => {
      res.writeHead(200, sseHeaders(native.contentType));
      res.flushHeaders();
      await sleep(450); // ≥ 3 keep-alive intervals of 100 ms
      await write(res, native.bytes);
      res.end();
    });
    const rec = recordingFetch();
    const out = await DRIVERS[p].stream(sdkClients(ka.url, w.serviceHeaders(agentId), rec.fetch), false, "What is the weather in Paris?");
    t.is(out.text, TEXT);
  });
}

test.serial("a client that goes away mid-stream aborts the provider call; the trace is recorded with the partial answer", async (t) => {
  t.timeout(30_000);
  ctl.handle(async (_req, res) => {
    res.writeHead(200, sseHeaders("text/event-stream; charset=utf-8"));
    await write(res, 'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[],"usage":{"input_tokens":12,"output_tokens":1}}}\n\n');
    await write(res, 'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n');
    await write(res, 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Partial answer"}}\n\n');
    // …and then the provider keeps thinking; only the sidecar's abort ends this request.
  });
  const before = ctl.requests.length;
  const abort = new AbortController();
  const res = await fetch(`${exact.url}/v1/proxy/anthropic/v1/messages`, {
    method: "POST",
    signal: abort.signal,
    headers: { "content-type": "application/json", "x-api-key": "sk-ant", "anthropic-version": "2023-06-01", ...w.serviceHeaders(agentId) },
    body: JSON.stringify({ model: "claude-sonnet-4-6", max_tokens: 100, stream: true, messages: [{ role: "user", content: "Tell me a long story" }] }),
  });
  const traceId = res.headers.get("x-service-trace-id") ?? "";
  await t.throwsAsync(
    readChunks(res, (soFar) => {
      if (soFar.includes("Partial answer")) abort.abort();
    }),
    { any: true },
  );
  await ctl.requests[before]!.aborted; // the sidecar closed its upstream connection
  const trace = await w.trace(traceId);
  t.is(trace.status, "error");
  t.is(trace.errorCode, "client_closed");
  t.true(trace.streamed);
  t.is(trace.completion, "Partial answer");
  t.true(trace.tokensEstimated, "no final usage arrived: tokens are counted locally and flagged");
  t.true(trace.inputTokens > 0 && trace.outputTokens > 0);
  t.true(trace.costUsd > 0, "the partial call is charged");
});

test.serial("an Anthropic stream cut before message_delta keeps message_start's input and cache counts; only the output is counted locally", async (t) => {
  t.timeout(30_000);
  ctl.handle(async (_req, res) => {
    res.writeHead(200, sseHeaders("text/event-stream; charset=utf-8"));
    const usage = { input_tokens: 12, cache_read_input_tokens: 90000, cache_creation_input_tokens: 300, output_tokens: 1 };
    await write(res, `event: message_start\ndata: ${JSON.stringify({ type: "message_start", message: { id: "msg_2", type: "message", role: "assistant", model: "claude-sonnet-4-6", content: [], usage } })}\n\n`);
    await write(res, 'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n');
    await write(res, 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Partial answer"}}\n\n');
  });
  const abort = new AbortController();
  const res = await fetch(`${exact.url}/v1/proxy/anthropic/v1/messages`, {
    method: "POST",
    signal: abort.signal,
    headers: { "content-type": "application/json", "x-api-key": "sk-ant", "anthropic-version": "2023-06-01", ...w.serviceHeaders(agentId) },
    body: JSON.stringify({ model: "claude-sonnet-4-6", max_tokens: 100, stream: true, messages: [{ role: "user", content: "Summarise the cached book" }] }),
  });
  const traceId = res.headers.get("x-service-trace-id") ?? "";
  await t.throwsAsync(
    readChunks(res, (soFar) => {
      if (soFar.includes("Partial answer")) abort.abort();
    }),
    { any: true },
  );
  const trace = await w.trace(traceId);
  t.is(trace.errorCode, "client_closed");
  t.true(trace.tokensEstimated, "the output was counted locally");
  t.is(trace.inputTokens, 90312);
  t.is(trace.cachedInputTokens, 90000);
  t.is(trace.cacheWriteTokens, 300);
  t.is(trace.outputTokens, estimateTokens("Partial answer"));
  const usage = { inputTokens: 90312, cachedInputTokens: 90000, cacheWriteTokens: 300, outputTokens: estimateTokens("Partial answer") };
  t.is(trace.costUsd, computeCost(priceFor("anthropic", "claude-sonnet-4-6"), usage).totalCost, "cache reads priced at the cache-read rate");
});

test.serial("a client that goes away while the provider is still thinking (JSON) aborts the provider call; the trace is recorded", async (t) => {
  t.timeout(30_000);
  const arrived = gate();
  ctl.handle(() => {
    arrived.open(); // never answers
  });
  const before = ctl.requests.length;
  const abort = new AbortController();
  const pending = fetch(`${exact.url}/v1/proxy/openai/v1/chat/completions`, {
    method: "POST",
    signal: abort.signal,
    headers: { "content-type": "application/json", authorization: "Bearer sk", ...w.serviceHeaders(agentId) },
    body: JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: "slow question" }] }),
  });
  await arrived.promise;
  abort.abort();
  await t.throwsAsync(pending, { any: true });
  await ctl.requests[before]!.aborted;
  const trace = await eventually(async () => {
    const r = await w.stack.api.get<{ data: { id: string; status: string }[] }>(`/v1/traces?agent_id=${agentId}&status=error&limit=5`);
    for (const s of r.body.data) {
      const full = await w.stack.cp.traces.get(w.stack.cp.tenantId, s.id);
      if (full?.errorCode === "client_closed" && full.prompt === "slow question") return full;
    }
    return undefined;
  });
  t.is(trace.httpStatus, 499);
  t.false(trace.streamed);
  // The provider got the prompt and bills it: counted locally, priced, charged (not a 0-token, $0 trace).
  t.is(trace.inputTokens, estimateTokens("slow question"));
  t.is(trace.outputTokens, 0);
  t.true(trace.tokensEstimated);
  t.is(trace.costUsd, computeCost(priceFor("openai", "gpt-4o"), { inputTokens: estimateTokens("slow question"), outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0 }).totalCost);
  t.true(trace.costUsd > 0);
});

test.serial("a provider that drops the connection mid-stream: the SDK gets the provider's native error event, the trace has status error", async (t) => {
  w.fakes.script({ text: "This answer will be cut short by the provider.", truncate: { afterEvents: 3, abrupt: true } });
  const rec = recordingFetch();
  const c = sdkClients(w.sidecar.url, w.serviceHeaders(agentId), rec.fetch);
  const err = await t.throwsAsync(DRIVERS.openai.stream(c, false));
  t.true(err instanceof OpenAI.APIError, String(err));
  t.regex(err?.message ?? "", /stream interrupted/);
  const trace = await w.trace(rec.last().headers.get("x-service-trace-id") ?? "");
  t.is(trace.status, "error");
  t.is(trace.errorCode, "upstream_unavailable");
  t.true(trace.tokensEstimated);
});

test.serial("a provider's own mid-stream error event is passed through and the trace has status error", async (t) => {
  w.fakes.script({ text: "Half an answer before the provider fails.", streamError: { afterEvents: 4, message: "Overloaded" } });
  const rec = recordingFetch();
  const c = sdkClients(w.sidecar.url, w.serviceHeaders(agentId), rec.fetch);
  const err = await t.throwsAsync(DRIVERS.anthropic.stream(c, false));
  t.true(err instanceof Anthropic.APIError, String(err));
  t.regex(err?.message ?? "", /Overloaded/);
  const trace = await w.trace(rec.last().headers.get("x-service-trace-id") ?? "");
  t.is(trace.status, "error");
  t.is(trace.errorCode, "upstream_stream_error");
});

/** A Mistral SDK stream's text and the finish reasons it yields (its failures are finish reasons, not errors). */
async function mistralStream(c: ReturnType<typeof sdkClients>): Promise<{ text: string; finishes: unknown[] }> {
  let text = "";
  const finishes: unknown[] = [];
  for await (const e of await c.mistral.chat.stream({ model: MODELS.mistral, messages: [{ role: "user", content: "Tell me" }] })) {
    const choice = e.data.choices[0];
    if (typeof choice?.delta.content === "string") text += choice.delta.content;
    if (choice?.finishReason) finishes.push(choice.finishReason);
  }
  return { text, finishes };
}

test.serial("Mistral's own failure, a chunk finishing with \"error\" then [DONE], passes unchanged; the trace is an error with the stream's usage", async (t) => {
  const script = { text: "Half an answer before Mistral fails.", finishReason: "error", usage: { inputTokens: 44, outputTokens: 9 } };
  const req = nativeRequest("mistral", { stream: true });
  w.fakes.script(script);
  const direct = await rawRequest(`${w.fakes.urls.mistral}${req.path}`, { headers: req.headers, body: req.body });
  w.fakes.script(script);
  const via = await rawCall(w.proxyUrl("mistral", req.path), { headers: { ...req.headers, ...w.serviceHeaders(agentId) }, body: req.body });
  t.is(via.status, 200);
  // (Each answer of the fake has an id of its own.)
  const sameIds = (text: string) => text.replace(/"id":"[0-9a-f]{32}"/g, '"id":"…"');
  t.true(/"finish_reason":"error"/.test(direct.text));
  t.is(sameIds(via.text), sameIds(direct.text), "every byte as the provider sent it, nothing appended");
  const trace = await w.trace(String(via.headers["x-service-trace-id"]));
  t.is(trace.status, "error");
  t.is(trace.errorCode, "upstream_stream_error");
  t.is(trace.completion, script.text);
  t.false(trace.tokensEstimated);
  t.is(trace.inputTokens, 44);
  t.is(trace.outputTokens, 9);
  t.is(trace.costUsd, computeCost(priceFor("mistral", MODELS.mistral), { inputTokens: 44, outputTokens: 9, cachedInputTokens: 0, cacheWriteTokens: 0 }).totalCost);

  // Its SDK hands the failure to the caller as the finish reason.
  w.fakes.script(script);
  const sdk = await mistralStream(sdkClients(w.sidecar.url, w.serviceHeaders(agentId), fetch));
  t.is(sdk.text, script.text);
  t.deepEqual(sdk.finishes, ["error"]);
});

// A stream the provider ends cleanly (the socket closes normally) before its end marker: the client holds
// an unfinished answer. The fake sends every event but the marker (OpenAI/Mistral `data: [DONE]`, after the
// finish and usage chunks; Anthropic `message_stop`, after message_delta's usage; Cohere `message-end`,
// which carries the usage, and the `data: [DONE]` after it; Gemini's finishing chunk, the one with
// finishReason and the final usage).
const CUT_TEXT = "An answer the provider never finishes.";
const CUT_USAGE = { inputTokens: 61, outputTokens: 23 };
/** How the stream cut before its marker reaches the trace's usage. */
const CUT_USAGE_READ: Record<FakeProviderName, "exact" | "input" | "estimated"> = { openai: "exact", mistral: "exact", anthropic: "exact", google: "input", cohere: "estimated" };

/** Events the provider sends after its end marker (Cohere's `data: [DONE]` after message-end). */
const AFTER_MARKER: Record<FakeProviderName, number> = { openai: 0, mistral: 0, anthropic: 0, google: 0, cohere: 1 };

/** The number of events of the fake's whole stream for `p` up to its end marker (the cut one has one fewer). */
async function streamEvents(p: FakeProviderName): Promise<number> {
  const req = nativeRequest(p, { stream: true });
  w.fakes.script({ text: CUT_TEXT, usage: CUT_USAGE });
  const direct = await rawRequest(`${w.fakes.urls[p]}${req.path}`, { headers: req.headers, body: req.body });
  return parseSse(direct.text).events.length - AFTER_MARKER[p];
}

for (const p of PROVIDERS) {
  test.serial(`${p}: a stream the provider ends cleanly before its end marker reaches the SDK as the provider's error; the trace is an upstream_stream_error with the usage the stream carried`, async (t) => {
    const events = await streamEvents(p);
    w.fakes.script({ text: CUT_TEXT, usage: CUT_USAGE, truncate: { afterEvents: events - 1 } });
    const rec = recordingFetch();
    const c = sdkClients(w.sidecar.url, w.serviceHeaders(agentId), rec.fetch);
    if (p === "cohere") {
      // Cohere v2 has no error event: a failed stream ends with message-end, finish_reason ERROR and its
      // error, which the SDK yields as an event (it raises nothing).
      let finish: string | undefined;
      let error: string | undefined;
      let text = "";
      const s = await c.cohere.chatStream({ model: MODELS.cohere, messages: [{ role: "user", content: "Tell me" }] });
      for await (const e of s) {
        if (e.type === "content-delta") text += e.delta?.message?.content?.text ?? "";
        if (e.type === "message-end") {
          finish = e.delta?.finishReason;
          error = e.delta?.error;
        }
      }
      t.is(text, CUT_TEXT, "every text event came");
      t.is(finish, "ERROR");
      t.regex(error ?? "", /ended before its end marker \(message-end\)/);
    } else if (p === "mistral") {
      // Mistral's own failure is a chunk finishing with "error", which its SDK yields (the sidecar's is too): the
      // caller sees the provider's finish chunk ("stop", which came before the cut) and then "error".
      const sdk = await mistralStream(c);
      t.is(sdk.text, CUT_TEXT, "every text event came");
      t.deepEqual(sdk.finishes, ["stop", "error"]);
    } else {
      const err = await t.throwsAsync(DRIVERS[p].stream(c, false, "Tell me"));
      if (p === "openai") t.true(err instanceof OpenAI.APIError, String(err));
      if (p === "anthropic") t.true(err instanceof Anthropic.APIError, String(err));
      if (p === "google") t.true(err instanceof GoogleApiError && err.status === 502, String(err));
      t.regex(String(err?.message), /ended before its end/);
    }
    const trace = await w.trace(rec.last().headers.get("x-service-trace-id") ?? "");
    t.true(trace.streamed);
    t.is(trace.status, "error");
    t.is(trace.errorCode, "upstream_stream_error");
    t.true(trace.completion !== "" && CUT_TEXT.startsWith(trace.completion), trace.completion);
    const read = CUT_USAGE_READ[p];
    if (read === "exact") {
      t.false(trace.tokensEstimated, "the usage the stream carried before the cut");
      t.is(trace.inputTokens, CUT_USAGE.inputTokens);
      t.is(trace.outputTokens, CUT_USAGE.outputTokens);
      t.is(trace.costUsd, computeCost(priceFor(p, MODELS[p]), { ...CUT_USAGE, cachedInputTokens: 0, cacheWriteTokens: 0 }).totalCost);
    } else {
      // Gemini's running usageMetadata carries the prompt count (kept); Cohere's usage comes only with message-end.
      t.true(trace.tokensEstimated);
      t.is(trace.outputTokens, estimateTokens(trace.completion));
      if (read === "input") t.is(trace.inputTokens, CUT_USAGE.inputTokens);
      else t.true(trace.inputTokens > 0);
    }
    t.true(trace.costUsd > 0, "the cut call is charged");

    // On the wire: every event the provider sent (all but its marker), then its native error event, last.
    const req = nativeRequest(p, { stream: true });
    w.fakes.script({ text: CUT_TEXT, usage: CUT_USAGE, truncate: { afterEvents: events - 1 } });
    const raw = await rawCall(w.proxyUrl(p, req.path), { headers: { ...req.headers, ...w.serviceHeaders(agentId) }, body: req.body });
    const observer = getProvider(p)!.streamObserver();
    observer.push(raw.bytes);
    const why = observer.end().errorMessage ?? "";
    t.regex(why, /ended before its end/);
    const expected = getProvider(p)!.errorEvent(why, "upstream_stream_error", { status: 502, details: { trace_id: String(raw.headers["x-service-trace-id"]) } });
    t.true(raw.text.endsWith(expected), `${p}: the stream ends with the adapter's error event: ${raw.text.slice(-300)}`);
    t.is(parseSse(raw.text).events.length, events, "the provider's events but its marker, and the error event");
  });
}

test.serial("the same stream with its end marker is a success (the cut tests' control)", async (t) => {
  for (const p of PROVIDERS) {
    w.fakes.script({ text: CUT_TEXT, usage: CUT_USAGE });
    const rec = recordingFetch();
    const out = await DRIVERS[p].stream(sdkClients(w.sidecar.url, w.serviceHeaders(agentId), rec.fetch), false, "Tell me");
    t.is(out.text, CUT_TEXT, p);
    const trace = await w.trace(rec.last().headers.get("x-service-trace-id") ?? "");
    t.is(trace.status, "success", p);
    t.is(trace.errorCode, "", p);
  }
});

test.serial("Gemini's JSON-array stream the provider ends cleanly before its closing ] stays unclosed for the client (no JSON reader accepts it); the trace is an upstream_stream_error with the usage its elements carried", async (t) => {
  w.fakes.script({ text: CUT_TEXT, usage: CUT_USAGE });
  const url = w.proxyUrl("google", "/v1beta/models/gemini-2.5-flash:streamGenerateContent");
  const headers = { "x-goog-api-key": "g", ...w.serviceHeaders(agentId) };
  const body = { contents: [{ role: "user", parts: [{ text: "Tell me" }] }] };
  const whole = await rawCall(url, { headers, body });
  const elements = (JSON.parse(whole.text) as unknown[]).length;
  w.fakes.script({ text: CUT_TEXT, usage: CUT_USAGE, truncate: { afterEvents: elements } }); // every element, no "]"
  const res = await rawCall(url, { headers, body });
  t.is(res.status, 200);
  t.true(res.text.startsWith("["));
  t.throws(() => JSON.parse(res.text) as unknown, undefined, "the array the provider did not close is not closed for it");
  t.true(JSON.parse(`${res.text}]`) instanceof Array, "every element the provider sent came, as sent");
  const trace = await w.trace(String(res.headers["x-service-trace-id"]));
  t.is(trace.status, "error");
  t.is(trace.errorCode, "upstream_stream_error");
  t.is(trace.completion, CUT_TEXT);
  t.false(trace.tokensEstimated, "the finishing element's usage came");
  t.is(trace.inputTokens, CUT_USAGE.inputTokens);
  t.is(trace.outputTokens, CUT_USAGE.outputTokens);
  t.is(String(res.trailers["x-service-cost"]), String(trace.costUsd));
});

test.serial("an OpenAI stream without include_usage is counted locally and flagged tokens_estimated", async (t) => {
  w.fakes.script({ text: "No usage in this stream." });
  const res = await rawRequest(w.proxyUrl("openai", "/v1/chat/completions"), {
    headers: { authorization: "Bearer sk", ...w.serviceHeaders(agentId) },
    body: { model: "gpt-4o", stream: true, messages: [{ role: "user", content: "count my tokens please" }] },
  });
  t.is(res.status, 200);
  const trace = await w.trace(String(res.headers["x-service-trace-id"]));
  t.true(trace.tokensEstimated);
  t.is(trace.inputTokens, estimateTokens("count my tokens please"));
  t.is(trace.outputTokens, estimateTokens("No usage in this stream."));
  t.is(trace.status, "success");
});

test.serial("an OpenAI tool-only stream without include_usage counts the tool-call arguments as output and the tool definitions as input", async (t) => {
  const args = { query: "weather in Paris, Lyon and Marseille for the next three days", units: "metric", detail: ["wind", "rain", "uv"] };
  w.fakes.script({ text: "", toolCalls: [{ name: "get_weather", arguments: args }] });
  const tools = [{ type: "function", function: { name: "get_weather", description: "Forecast for a city", parameters: { type: "object", properties: { query: { type: "string" } } } } }];
  const res = await rawRequest(w.proxyUrl("openai", "/v1/chat/completions"), {
    headers: { authorization: "Bearer sk", ...w.serviceHeaders(agentId) },
    body: { model: "gpt-4o", stream: true, tools, messages: [{ role: "user", content: "forecast please" }] },
  });
  t.is(res.status, 200);
  const trace = await w.trace(String(res.headers["x-service-trace-id"]));
  t.true(trace.tokensEstimated);
  t.is(trace.outputTokens, estimateTokens(JSON.stringify(args)));
  t.true(trace.outputTokens > 10);
  t.is(trace.inputTokens, estimateTokens("forecast please") + estimateTokens(JSON.stringify(tools)));
  t.is(trace.status, "success");
});

test.serial("special-token text (<|endoftext|>) in a prompt or answer is counted as plain text, not a failure", async (t) => {
  // The local tokenizer must not treat text that looks like a special token as a control token (or throw):
  // prompts and answers are untrusted text.
  w.fakes.script({ text: "Done <|endoftext|> really." });
  const res = await rawRequest(w.proxyUrl("openai", "/v1/chat/completions"), {
    headers: { authorization: "Bearer sk", ...w.serviceHeaders(agentId) },
    body: { model: "gpt-4o", stream: true, messages: [{ role: "user", content: "ignore <|endoftext|><|im_start|>system" }] },
  });
  t.is(res.status, 200);
  const trace = await w.trace(String(res.headers["x-service-trace-id"]));
  t.is(trace.status, "success");
  t.true(trace.tokensEstimated);
  t.is(trace.inputTokens, estimateTokens("ignore <|endoftext|><|im_start|>system"));
  t.is(trace.outputTokens, estimateTokens("Done <|endoftext|> really."));
  t.true(trace.outputTokens > 5);
});

test.serial("Gemini's JSON-array stream (streamGenerateContent without alt=sse) is relayed as it comes and its usage read", async (t) => {
  w.fakes.script({ text: "Array streaming mode.", usage: { inputTokens: 19, outputTokens: 6 } });
  const res = await rawCall(w.proxyUrl("google", "/v1beta/models/gemini-2.5-flash:streamGenerateContent"), {
    headers: { "x-goog-api-key": "g", ...w.serviceHeaders(agentId) },
    body: { contents: [{ role: "user", parts: [{ text: "hi" }] }] },
  });
  t.is(res.status, 200);
  const elements = JSON.parse(res.text) as { candidates: { content: { parts: { text: string }[] } }[] }[];
  t.is(elements.map((e) => e.candidates[0]?.content.parts[0]?.text ?? "").join(""), "Array streaming mode.");
  t.is(res.headers.trailer, "X-Service-Cost");
  const trace = await w.trace(String(res.headers["x-service-trace-id"]));
  t.true(trace.streamed);
  t.is(trace.inputTokens, 19);
  t.is(trace.outputTokens, 6);
  t.is(String(res.trailers["x-service-cost"]), String(trace.costUsd));
});

test.serial("the credential header of each provider is forwarded as it came (no translation)", async (t) => {
  for (const p of PROVIDERS) {
    const req = nativeRequest(p);
    const headers = { ...req.headers, ...w.serviceHeaders(agentId) };
    const before = w.fakes.requests.length;
    const res = await rawRequest(w.proxyUrl(p, req.path), { headers, body: req.body });
    t.is(res.status, 200, `${p}: ${res.text}`);
    const sent = w.fakes.requests[before]!;
    // nativeRequest uses x-api-key (Anthropic) and x-goog-api-key (Gemini): each arrives as sent, nothing is added
    for (const [k, v] of Object.entries(req.headers)) t.is(sent.headers[k], v, `${p}: ${k}`);
    for (const other of ["authorization", "x-api-key", "x-goog-api-key"]) if (!(other in req.headers)) t.false(other in sent.headers, `${p}: ${other}`);
  }
});
