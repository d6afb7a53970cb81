// Each provider's official SDK pointed at the sidecar (base URL + X-Service-* headers, as the README
// documents) works unchanged: JSON, SSE streaming, tool calls (counted per agent in
// GET /api/agents/:id/tools) and provider errors (surfaced by the SDK as its own typed error, trace
// status error). What reaches the provider is checked on the fake's recorded request.
import test from "ava";
import { ApiError as GoogleApiError } from "@google/genai";
import { MistralError } from "@mistralai/mistralai/models/errors";
import { CohereError } from "cohere-ai";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { eventually } from "../harness/stack.js";
import type { FakeProviderName } from "../fakes/providers/index.js";
import { CREDENTIAL, MODELS, PROVIDERS, recordingFetch, sdkClients, startProxyWorld, type ProxyWorld } from "./proxy-helpers.js";
import { DRIVERS } from "./proxy-sdk-drivers.js";

let w: ProxyWorld;
const agents = {} as Record<FakeProviderName, string>;

test.before(async () => {
  w = await startProxyWorld();
  for (const p of PROVIDERS) agents[p] = await w.agent(`sdk-${p}`, undefined, p);
});
test.after.always(async () => {
  await w?.stop();
});

const NATIVE_PATH: Record<FakeProviderName, (stream: boolean) => string> = {
  openai: () => "/v1/chat/completions",
  anthropic: () => "/v1/messages",
  google: (stream) => `/v1beta/models/${MODELS.google}:${stream ? "streamGenerateContent" : "generateContent"}`,
  mistral: () => "/v1/chat/completions",
  cohere: () => "/v2/chat",
};

function clients(p: FakeProviderName) {
  const rec = recordingFetch();
  return { rec, c: sdkClients(w.sidecar.url, w.serviceHeaders(agents[p]), rec.fetch) };
}

/** The status an SDK error carries, whatever the SDK calls it. */
function statusOf(e: unknown): number | undefined {
  if (e instanceof OpenAI.APIError || e instanceof Anthropic.APIError) return e.status;
  if (e instanceof GoogleApiError) return e.status;
  if (e instanceof MistralError) return e.statusCode;
  if (e instanceof CohereError) return e.statusCode;
  return undefined;
}

for (const p of PROVIDERS) {
  test.serial(`${p}: a JSON call through the official SDK reaches the provider as sent and is traced`, async (t) => {
    w.fakes.script({ text: "Hello through the sidecar.", usage: { inputTokens: 31, outputTokens: 9 } });
    const before = w.fakes.requests.length;
    const { rec, c } = clients(p);
    const out = await DRIVERS[p].json(c, false);
    t.is(out.text, "Hello through the sidecar.");

    t.is(w.fakes.requests.length, before + 1, "one upstream call");
    const sent = w.fakes.requests[before]!;
    t.is(sent.path, NATIVE_PATH[p](false));
    const [credName, credValue] = CREDENTIAL[p];
    t.is(sent.headers[credName], credValue, "the provider's own credential header is forwarded as it came");
    t.deepEqual(Object.keys(sent.headers).filter((h) => h.startsWith("x-service-")), [], "X-Service-* never leaves the sidecar");
    t.regex(String(sent.headers.via), /agentgov-sidecar/);
    t.is(sent.headers["accept-encoding"], "identity");

    const headers = rec.last().headers;
    const traceId = headers.get("x-service-trace-id") ?? "";
    t.regex(traceId, /^trc_[0-9A-Z]{26}$/);
    t.is(headers.get("x-service-policies"), "0");
    t.regex(headers.get("x-service-overhead-ms") ?? "", /^\d+\.\d{3}$/);
    const trace = await w.trace(traceId);
    t.is(trace.status, "success");
    t.is(trace.provider, p);
    t.is(trace.model, MODELS[p]);
    t.is(trace.httpStatus, 200);
    t.false(trace.streamed);
    t.is(trace.inputTokens, 31);
    t.is(trace.outputTokens, 9);
    t.false(trace.tokensEstimated);
    t.true(trace.costUsd > 0);
    t.is(Number(headers.get("x-service-cost")), trace.costUsd);
    t.is(trace.completion, "Hello through the sidecar.");
  });

  test.serial(`${p}: an SSE stream through the official SDK yields every delta and its usage is traced`, async (t) => {
    w.fakes.script({ text: "Streaming through the sidecar, chunk by chunk.", usage: { inputTokens: 44, outputTokens: 12 }, comments: true });
    const before = w.fakes.requests.length;
    const { rec, c } = clients(p);
    const out = await DRIVERS[p].stream(c, false);
    t.is(out.text, "Streaming through the sidecar, chunk by chunk.");
    const sent = w.fakes.requests[before]!;
    t.is(sent.path, NATIVE_PATH[p](true));
    if (p === "google") t.is(sent.query, "?alt=sse");
    const headers = rec.last().headers;
    t.regex(headers.get("content-type") ?? "", /text\/event-stream/);
    t.is(headers.get("trailer"), "X-Service-Cost");
    const trace = await w.trace(headers.get("x-service-trace-id") ?? "");
    t.is(trace.status, "success");
    t.true(trace.streamed);
    t.is(trace.inputTokens, 44);
    t.is(trace.outputTokens, 12);
    t.false(trace.tokensEstimated);
    t.is(trace.completion, "Streaming through the sidecar, chunk by chunk.");
  });

  test.serial(`${p}: tool calls in JSON and in a stream reach the SDK and are counted for the agent`, async (t) => {
    const toolCalls = [
      { name: "get_weather", arguments: { city: "Paris" } },
      { name: "get_time", arguments: { tz: "Europe/Paris" } },
    ];
    w.fakes.script({ text: "", toolCalls });
    const { rec, c } = clients(p);
    const json = await DRIVERS[p].json(c, true);
    t.deepEqual(json.tools, ["get_weather", "get_time"]);
    const jsonTrace = await w.trace(rec.last().headers.get("x-service-trace-id") ?? "");
    t.deepEqual(jsonTrace.toolCalls.map((x) => x.name), ["get_weather", "get_time"]);
    const streamed = await DRIVERS[p].stream(c, true);
    t.deepEqual(streamed.tools, ["get_weather", "get_time"]);
    const streamTrace = await w.trace(rec.last().headers.get("x-service-trace-id") ?? "");
    t.deepEqual(streamTrace.toolCalls.map((x) => x.name), ["get_weather", "get_time"]);
    const tools = await eventually(async () => {
      const r = await w.stack.api.get<{ data: { toolName: string; callCount: number }[]; total: number }>(`/api/agents/${agents[p]}/tools`);
      const counts = Object.fromEntries(r.body.data.map((x) => [x.toolName, x.callCount]));
      return counts.get_weather === 2 && counts.get_time === 2 ? counts : undefined;
    });
    t.deepEqual(tools, { get_weather: 2, get_time: 2 });
  });

  test.serial(`${p}: provider errors reach the SDK as its own typed errors and the trace has status error`, async (t) => {
    const { rec, c } = clients(p);
    for (const status of [400, 429, 500] as const) {
      w.fakes.script({ error: { status, message: `scripted ${status}` } });
      const err = await t.throwsAsync(DRIVERS[p].json(c, false));
      t.is(statusOf(err), status, `${p} ${status}: ${String(err)}`);
      const headers = rec.last().headers;
      t.regex(headers.get("x-service-trace-id") ?? "", /^trc_/);
      t.is(headers.get("x-service-cost"), "0");
      const trace = await w.trace(headers.get("x-service-trace-id") ?? "");
      t.is(trace.status, "error");
      t.is(trace.httpStatus, status);
      t.is(trace.errorCode, `upstream_${status}`);
      t.is(trace.costUsd, 0);
    }
  });
}
