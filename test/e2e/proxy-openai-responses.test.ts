// OpenAI's Responses API (`client.responses.create` / `.stream` of the official openai SDK) through the
// sidecar: JSON and SSE answers reach the SDK as sent and are traced with the provider's usage and the
// price table's exact cost; tool calls are counted for the agent; provider errors surface as the SDK's
// own; inbound and outbound policies govern the Responses shapes (instructions and input items; output
// text, reasoning summaries and function-call arguments), and in a stream every repeat of a text (its
// `*.done` event, output_item.done, response.completed) carries what the deltas carried; an outbound
// block ends the stream with an error event the SDK raises.
import test from "ava";
import OpenAI from "openai";
import { parseSse } from "../../data-plane/src/providers/index.js";
import { computeCost, priceFor } from "../../data-plane/src/pricing/index.js";
import { eventually } from "../harness/stack.js";
import { rawRequest } from "../fakes/providers/index.js";
import { rawCall, recordedOpenAI, recordingFetch, startProxyWorld, type ProxyWorld } from "./proxy-helpers.js";
import { createPolicy } from "./policy-helpers.js";

let w: ProxyWorld;
const MODEL = "gpt-4o";

test.before(async () => {
  w = await startProxyWorld({ SSE_KEEPALIVE_MS: "0" });
});
test.after.always(async () => {
  await w?.stop();
});

const client = (agentId: string) => recordedOpenAI(w, agentId);

const traceIdOf = (rec: ReturnType<typeof recordingFetch>): string => rec.last().headers.get("x-service-trace-id") ?? "";

test.serial("JSON: the SDK gets the answer, the provider gets the body as sent, the trace has its usage and exact cost", async (t) => {
  const agent = await w.agent("responses-json");
  const { rec, openai } = client(agent);
  w.fakes.script({ text: "Hello from the Responses API.", usage: { inputTokens: 1200, outputTokens: 40, cachedInputTokens: 1024 } });
  const before = w.fakes.requests.length;
  const r = await openai.responses.create({ model: MODEL, instructions: "Be terse.", input: "Say hello." });
  t.is(r.output_text, "Hello from the Responses API.");
  const sent = w.fakes.requests[before]!;
  t.is(sent.path, "/v1/responses");
  t.is(sent.headers.authorization, "Bearer sk-openai-test");
  t.deepEqual(sent.json, { model: MODEL, instructions: "Be terse.", input: "Say hello." });

  const trace = await w.trace(traceIdOf(rec));
  t.is(trace.status, "success");
  t.is(trace.provider, "openai");
  t.is(trace.model, MODEL);
  t.false(trace.streamed);
  t.is(trace.inputTokens, 1200);
  t.is(trace.outputTokens, 40);
  t.false(trace.tokensEstimated);
  const expected = computeCost(priceFor("openai", MODEL), { inputTokens: 1200, outputTokens: 40, cachedInputTokens: 1024, cacheWriteTokens: 0 });
  t.is(trace.costUsd, expected.totalCost);
  t.is(Number(rec.last().headers.get("x-service-cost")), expected.totalCost);
  t.is(trace.prompt, "Be terse.\n\nSay hello.");
  t.is(trace.completion, "Hello from the Responses API.");
});

test.serial("cache writes (input_tokens_details.cache_write_tokens) are priced at the cache-write rate, JSON and stream", async (t) => {
  const agent = await w.agent("responses-cache-write");
  const { rec, openai } = client(agent);
  const model = "gpt-5.6";
  const usage = { inputTokens: 1000, outputTokens: 50, cachedInputTokens: 100, cacheWriteTokens: 200 };
  const price = priceFor("openai", model);
  t.true(price !== undefined && price.cacheWrite !== price.input, "the model prices cache writes apart");
  const expected = computeCost(price, usage).totalCost;
  t.not(expected, computeCost(price, { ...usage, cacheWriteTokens: 0 }).totalCost);

  w.fakes.script({ text: "Cached.", usage });
  await openai.responses.create({ model, input: "Say it." });
  const json = await w.trace(traceIdOf(rec));
  t.is(json.cacheWriteTokens, 200);
  t.is(json.cachedInputTokens, 100);
  t.is(json.costUsd, expected);
  t.is(Number(rec.last().headers.get("x-service-cost")), expected);

  w.fakes.script({ text: "Cached.", usage });
  const stream = openai.responses.stream({ model, input: "Say it." });
  for await (const _e of stream) {
    // drain
  }
  const streamed = await w.trace(traceIdOf(rec));
  t.true(streamed.streamed);
  t.is(streamed.cacheWriteTokens, 200);
  t.is(streamed.costUsd, expected);
});

test.serial("stream: the SDK's events and final response, usage from response.completed, exact cost", async (t) => {
  const agent = await w.agent("responses-stream");
  const { rec, openai } = client(agent);
  w.fakes.script({ text: "Streaming the Responses API, delta by delta.", reasoning: "Plan the answer.", usage: { inputTokens: 300, outputTokens: 70, reasoningTokens: 20 } });
  const stream = openai.responses.stream({ model: MODEL, input: "Stream please." });
  let deltas = "";
  for await (const e of stream) if (e.type === "response.output_text.delta") deltas += e.delta;
  const final = await stream.finalResponse();
  t.is(deltas, "Streaming the Responses API, delta by delta.");
  t.is(final.output_text, deltas);
  t.regex(rec.last().headers.get("content-type") ?? "", /text\/event-stream/);
  const trace = await w.trace(traceIdOf(rec));
  t.is(trace.status, "success");
  t.true(trace.streamed);
  t.is(trace.inputTokens, 300);
  t.is(trace.outputTokens, 70);
  t.false(trace.tokensEstimated);
  t.is(trace.costUsd, computeCost(priceFor("openai", MODEL), { inputTokens: 300, outputTokens: 70, cachedInputTokens: 0, cacheWriteTokens: 0 }).totalCost);
  t.is(trace.completion, deltas);
});

test.serial("tool calls in JSON and in a stream reach the SDK and are counted for the agent", async (t) => {
  const agent = await w.agent("responses-tools");
  const { rec, openai } = client(agent);
  const tools = [{ type: "function" as const, name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } }, strict: false }];
  w.fakes.script({ text: "", toolCalls: [{ name: "get_weather", arguments: { city: "Paris" } }, { name: "get_time", arguments: { tz: "Europe/Paris" } }] });
  const r = await openai.responses.create({ model: MODEL, input: "weather?", tools });
  t.deepEqual(r.output.map((o) => (o.type === "function_call" ? o.name : o.type)), ["get_weather", "get_time"]);
  t.deepEqual((await w.trace(traceIdOf(rec))).toolCalls.map((c) => c.name), ["get_weather", "get_time"]);
  const stream = openai.responses.stream({ model: MODEL, input: "weather?", tools });
  const final = await stream.finalResponse();
  const calls = final.output.flatMap((o) => (o.type === "function_call" ? [[o.name, o.arguments]] : []));
  t.deepEqual(calls, [
    ["get_weather", '{"city":"Paris"}'],
    ["get_time", '{"tz":"Europe/Paris"}'],
  ]);
  t.deepEqual((await w.trace(traceIdOf(rec))).toolCalls.map((c) => c.name), ["get_weather", "get_time"]);
  const counts = await eventually(async () => {
    const res = await w.stack.api.get<{ data: { toolName: string; callCount: number }[] }>(`/api/agents/${agent}/tools`);
    const c = Object.fromEntries(res.body.data.map((x) => [x.toolName, x.callCount]));
    return c.get_weather === 2 && c.get_time === 2 ? c : undefined;
  });
  t.deepEqual(counts, { get_weather: 2, get_time: 2 });
});

test.serial("provider errors reach the SDK as APIError with their status; the trace has status error", async (t) => {
  const agent = await w.agent("responses-errors");
  const { rec, openai } = client(agent);
  for (const status of [400, 429, 500] as const) {
    w.fakes.script({ error: { status, message: `scripted ${status}` } });
    const err = await t.throwsAsync(openai.responses.create({ model: MODEL, input: "hi" }), { instanceOf: OpenAI.APIError });
    t.is((err as InstanceType<typeof OpenAI.APIError>).status, status);
    const trace = await w.trace(traceIdOf(rec));
    t.is(trace.status, "error");
    t.is(trace.errorCode, `upstream_${status}`);
  }
});

test.serial("a background response is refused with 400 before the provider is called", async (t) => {
  const agent = await w.agent("responses-background");
  const before = w.fakes.requests.length;
  const res = await rawCall(w.proxyUrl("openai", "/v1/responses"), { headers: { authorization: "Bearer k", ...w.serviceHeaders(agent) }, body: { model: MODEL, input: "hi", background: true } });
  t.is(res.status, 400);
  t.regex(res.text, /background/);
  t.is(w.fakes.requests.length, before);
});

test.serial("inbound redaction rewrites instructions, input items and earlier call arguments before they leave", async (t) => {
  const agent = await w.agent("responses-inbound");
  await createPolicy(w, { name: "responses inbound", action: "redact", priority: 1, conditions: { direction: "inbound", pii_types: ["email"] }, agents: [agent] });
  const { openai } = client(agent);
  w.fakes.script({ text: "ok" });
  const before = w.fakes.requests.length;
  await openai.responses.create({
    model: MODEL,
    instructions: "Escalate to boss@example.com.",
    input: [
      { role: "user", content: [{ type: "input_text", text: "I am ann@example.com" }] },
      { type: "function_call", call_id: "c1", name: "mail", arguments: '{"to":"carl@example.com","n":1}' },
      { type: "function_call_output", call_id: "c1", output: "sent to carl@example.com" },
    ],
  });
  const sent = w.fakes.requests[before]!.json as { instructions: string; input: Record<string, unknown>[] };
  t.is(sent.instructions, "Escalate to [REDACTED:email].");
  t.deepEqual(sent.input[0]!.content, [{ type: "input_text", text: "I am [REDACTED:email]" }]);
  t.is(sent.input[1]!.arguments, '{"to":"[REDACTED:email]","n":1}');
  t.is(sent.input[2]!.output, "sent to [REDACTED:email]");
});

const SECRET = "Your SSN is 536-22-8726 and your card is 4111 1111 1111 1111; keep them safe.";
const REDACTED = "Your SSN is [REDACTED:ssn] and your card is [REDACTED:credit_card]; keep them safe.";

/** Every text the stream repeats, by event: the done events, the items and the final response. */
function repeatedTexts(text: string): string[] {
  const out: string[] = [];
  for (const e of parseSse(text).events) {
    const j = JSON.parse(e.data) as Record<string, unknown>;
    if (j.type === "response.output_text.done") out.push(String(j.text));
    if (j.type === "response.content_part.done") out.push(String((j.part as { text: string }).text));
    const items = j.type === "response.output_item.done" ? [j.item] : j.type === "response.completed" ? ((j.response as { output: unknown[] }).output ?? []) : [];
    for (const item of items as { type: string; content?: { text: string }[] }[]) if (item.type === "message") for (const c of item.content ?? []) out.push(c.text);
  }
  return out;
}

test.serial("outbound redaction in a stream: deltas, every repeat and the SDK's final response carry the redacted text", async (t) => {
  const agent = await w.agent("responses-redact");
  await createPolicy(w, { name: "responses redact", action: "redact", priority: 1, conditions: { direction: "outbound", pii_types: ["ssn", "credit_card"] }, agents: [agent] });
  const script = { text: SECRET, usage: { inputTokens: 40, outputTokens: 30 }, textChunkSize: 3 };
  w.fakes.script(script);
  const { openai } = client(agent);
  const stream = openai.responses.stream({ model: MODEL, input: "numbers?" });
  let deltas = "";
  for await (const e of stream) if (e.type === "response.output_text.delta") deltas += e.delta;
  t.is(deltas, REDACTED);
  t.is((await stream.finalResponse()).output_text, REDACTED);

  const body = { model: MODEL, input: "numbers?", stream: true };
  w.fakes.script(script);
  const direct = await rawRequest(`${w.fakes.urls.openai}/v1/responses`, { headers: { authorization: "Bearer k" }, body });
  w.fakes.script(script);
  const via = await rawCall(w.proxyUrl("openai", "/v1/responses"), { headers: { authorization: "Bearer k", ...w.serviceHeaders(agent) }, body });
  t.false(via.text.includes("8726") || via.text.includes("1111 1111"), "no digit of the entities left the sidecar");
  t.deepEqual(repeatedTexts(via.text), [REDACTED, REDACTED, REDACTED, REDACTED]);
  const kinds = (s: string) => parseSse(s).events.map((e) => e.event);
  const up = kinds(direct.text);
  const down = kinds(via.text);
  let i = 0;
  for (const k of down) if (k === up[i]) i++;
  t.is(i, up.length, "every upstream event reached the client, in order");
  t.true(down.length - up.length <= 1, "at most one delta inserted (the held tail before output_text.done)");
});

test.serial("outbound redaction of a JSON answer and of streamed function-call arguments (deltas, done, item, final response)", async (t) => {
  const agent = await w.agent("responses-redact-tools");
  await createPolicy(w, { name: "responses redact email", action: "redact", priority: 1, conditions: { direction: "outbound", pii_types: ["email"] }, agents: [agent] });
  const { openai } = client(agent);
  w.fakes.script({ text: "Write to dora@example.com today." });
  t.is((await openai.responses.create({ model: MODEL, input: "who?" })).output_text, "Write to [REDACTED:email] today.");

  w.fakes.script({ text: "", toolCalls: [{ name: "send_mail", arguments: { to: "dora@example.com", body: "hi" } }], argsChunkSize: 5 });
  const stream = openai.responses.stream({ model: MODEL, input: "mail dora" });
  let args = "";
  const repeats: string[] = [];
  for await (const e of stream) {
    if (e.type === "response.function_call_arguments.delta") args += e.delta;
    if (e.type === "response.function_call_arguments.done") repeats.push(e.arguments);
    if (e.type === "response.output_item.done" && e.item.type === "function_call") repeats.push(e.item.arguments);
  }
  const final = await stream.finalResponse();
  const expected = '{"to":"[REDACTED:email]","body":"hi"}';
  t.is(args, expected);
  t.deepEqual(repeats, [expected, expected]);
  t.deepEqual(final.output.flatMap((o) => (o.type === "function_call" ? [o.arguments] : [])), [expected]);
});

test.serial("an outbound block mid-stream ends it with an error event the SDK raises; the trace says blocked", async (t) => {
  const agent = await w.agent("responses-block");
  await createPolicy(w, { name: "responses block ssn", action: "block", priority: 1, conditions: { direction: "outbound", pii_types: ["ssn"] }, agents: [agent] });
  w.fakes.script({ text: SECRET, textChunkSize: 3 });
  const { rec, openai } = client(agent);
  const stream = openai.responses.stream({ model: MODEL, input: "numbers?" });
  let deltas = "";
  const err = await t.throwsAsync(async () => {
    for await (const e of stream) if (e.type === "response.output_text.delta") deltas += e.delta;
  });
  t.true(err instanceof OpenAI.APIError, String(err));
  t.regex(String(err?.message), /blocked by policy/);
  t.false(deltas.includes("8726"));
  const trace = await w.trace(traceIdOf(rec));
  t.is(trace.status, "blocked");
  t.deepEqual(trace.policiesFired, ["responses block ssn"]);
});

test.serial("a stream the provider ends cleanly before response.completed ends with an error event the SDK raises; the trace is an error", async (t) => {
  const agent = await w.agent("responses-cut");
  const { rec, openai } = client(agent);
  w.fakes.script({ text: "An answer that will not finish.", truncate: { afterEvents: 6 } });
  const stream = openai.responses.stream({ model: MODEL, input: "hi" });
  const err = await t.throwsAsync(async () => {
    for await (const e of stream) void e;
  });
  t.true(err instanceof OpenAI.APIError, String(err));
  const trace = await w.trace(traceIdOf(rec));
  t.is(trace.status, "error");
  t.is(trace.errorCode, "upstream_stream_error");
  t.true(trace.tokensEstimated);
});

test.serial("an openai SDK whose base URL lacks /v1 (…/v1/proxy/openai, the spec's chat path) reaches chat, the Responses API and embeddings alike, each forwarded to its /v1 endpoint and traced", async (t) => {
  const agent = await w.agent("responses-base-url-without-v1");
  const rec = recordingFetch();
  const openai = new OpenAI({ apiKey: "sk-openai-test", baseURL: `${w.sidecar.url}/v1/proxy/openai`, defaultHeaders: w.serviceHeaders(agent), fetch: rec.fetch, maxRetries: 0 });
  w.fakes.script({ text: "Fine.", usage: { inputTokens: 12, outputTokens: 2 } });
  const calls: [string, () => Promise<unknown>][] = [
    ["/v1/chat/completions", () => openai.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "Say fine." }] })],
    ["/v1/responses", () => openai.responses.create({ model: MODEL, input: "Say fine." })],
    ["/v1/embeddings", () => openai.embeddings.create({ model: "text-embedding-3-small", input: "Index me." })],
  ];
  for (const [path, call] of calls) {
    const before = w.fakes.requests.length;
    await call();
    t.is(w.fakes.requests[before]?.path, path);
    t.is(rec.last().status, 200, path);
    const trace = await w.trace(traceIdOf(rec));
    t.is(trace.status, "success", path);
    t.is(trace.inputTokens, 12, path);
  }
});
