// OPENAI_STREAM_USAGE (README, proxy section). With `add`, an OpenAI chat stream whose request does not ask
// for usage is forwarded asking for it, the client still receives the stream it asked for (no usage chunk,
// no `usage` member), and the trace and the budget get the provider's usage instead of a local count:
// a reasoning model's hidden reasoning tokens are charged, so the budget holds. Requests that ask for
// usage themselves, JSON calls and the other providers' streams pass byte for byte. The default, `budgeted`,
// does so for agents with a daily budget only.
import test from "ava";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import type { Sidecar } from "@agentgov/data-plane";
import { eventually } from "../harness/stack.js";
import { estimateTokens } from "../../data-plane/src/providers/index.js";
import { computeCost, priceFor } from "../../data-plane/src/pricing/index.js";
import type { RecordedRequest } from "../fakes/providers/index.js";
import { MODELS, rawCall, recordingFetch, sdkClients, startProxyWorld, type ProxyWorld } from "./proxy-helpers.js";
import { createPolicy } from "./policy-helpers.js";

let w: ProxyWorld;
/** A sidecar with the default, OPENAI_STREAM_USAGE=budgeted (w.sidecar has `add`). */
let budgeted: Sidecar;
let agentId: string;
test.before(async () => {
  w = await startProxyWorld({ OPENAI_STREAM_USAGE: "add" });
  agentId = await w.agent("stream-usage");
  budgeted = await w.stack.sidecar({ PROVIDER_OPENAI_URL: w.fakes.urls.openai });
});

/** An agent the default sidecar knows. */
async function agentOf(sidecar: Sidecar, name: string, configYaml?: string): Promise<string> {
  const id = await w.agent(name, configYaml);
  await eventually(async () => sidecar.state().agents.has(id));
  return id;
}
test.after.always(async () => {
  await w?.stop();
});

const lastRequest = (): RecordedRequest => w.fakes.requests[w.fakes.requests.length - 1]!;
const exactCost = (usage: { inputTokens: number; outputTokens: number }) =>
  computeCost(priceFor("openai", MODELS.openai), { ...usage, cachedInputTokens: 0, cacheWriteTokens: 0 }).totalCost;

test.serial("the openai SDK's stream without include_usage: the client gets no usage chunk; the trace has the provider's usage and exact cost", async (t) => {
  const usage = { inputTokens: 31, outputTokens: 1200, reasoningTokens: 1180 }; // mostly hidden reasoning
  w.fakes.script({ text: "Short visible answer.", usage });
  const rec = recordingFetch();
  const { openai } = sdkClients(w.sidecar.url, w.serviceHeaders(agentId), rec.fetch);
  const messages = [{ role: "user" as const, content: "think hard, answer briefly" }];
  const stream = await openai.chat.completions.create({ model: MODELS.openai, messages, stream: true, temperature: 0.2 });
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);

  t.is(chunks.map((c) => c.choices[0]?.delta.content ?? "").join(""), "Short visible answer.");
  t.true(chunks.every((c) => c.choices.length > 0), "no chunk without choices reached the client");
  t.true(chunks.every((c) => !("usage" in c)), "no usage member reached the client");

  const sent = lastRequest().json as Record<string, unknown>;
  t.deepEqual(sent.stream_options, { include_usage: true }, "the provider was asked for usage");
  t.deepEqual({ ...sent, stream_options: undefined }, { model: MODELS.openai, messages, stream: true, temperature: 0.2, stream_options: undefined }, "the rest of the body as sent");

  const trace = await w.trace(String(rec.last().headers.get("x-service-trace-id")));
  t.false(trace.tokensEstimated);
  t.is(trace.inputTokens, usage.inputTokens);
  t.is(trace.outputTokens, usage.outputTokens, "reasoning tokens included, not the visible answer's count");
  t.true(trace.outputTokens > 10 * estimateTokens("Short visible answer."));
  t.is(trace.costUsd, exactCost(usage));
  t.is(trace.status, "success");
});

test.serial("stream_options without include_usage (or set false): other options kept, the client's stream has no usage", async (t) => {
  w.fakes.script({ text: "Options kept.", usage: { inputTokens: 9, outputTokens: 4 } });
  const res = await rawCall(w.proxyUrl("openai", "/v1/chat/completions"), {
    headers: { authorization: "Bearer sk", ...w.serviceHeaders(agentId) },
    body: { model: MODELS.openai, stream: true, stream_options: { include_usage: false, include_obfuscation: false }, messages: [{ role: "user", content: "hello" }] },
  });
  t.is(res.status, 200);
  t.deepEqual((lastRequest().json as Record<string, unknown>).stream_options, { include_usage: true, include_obfuscation: false });
  t.false(res.text.includes('"usage"'));
  t.false(res.text.includes('"choices":[]'));
  t.true(res.text.endsWith("data: [DONE]\n\n"));
  const trace = await w.trace(String(res.headers["x-service-trace-id"]));
  t.false(trace.tokensEstimated);
  t.is(trace.outputTokens, 4);
  t.is(String(res.trailers["x-service-cost"]), String(trace.costUsd), "the trailer carries the exact cost");
});

test.serial("a request that asks for usage itself, a JSON call and a Mistral stream are forwarded byte for byte", async (t) => {
  w.fakes.script({ text: "As asked.", usage: { inputTokens: 7, outputTokens: 3 } });
  const cases: [string, string, string][] = [
    ["openai", "/v1/chat/completions", `{"model":"${MODELS.openai}","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"a"}]}`],
    ["openai", "/v1/chat/completions", `{"model":"${MODELS.openai}","messages":[{"role":"user","content":"b"}]}`],
    ["mistral", "/v1/chat/completions", `{"model":"${MODELS.mistral}","stream":true,"messages":[{"role":"user","content":"c"}]}`],
  ];
  const mistralAgent = await w.agent("stream-usage-mistral", undefined, "mistral");
  for (const [provider, path, body] of cases) {
    const res = await rawCall(w.proxyUrl(provider, path), {
      headers: { authorization: "Bearer sk", "content-type": "application/json", ...w.serviceHeaders(provider === "mistral" ? mistralAgent : agentId) },
      body,
    });
    t.is(res.status, 200, `${provider} ${body}`);
    t.is(lastRequest().body.toString("utf8"), body, "forwarded as sent");
    if (body.includes("include_usage")) t.true(res.text.includes('"choices":[],"usage":{'), "the usage chunk the client asked for reaches it");
  }
});

test.serial("an outbound redact policy still applies to the filtered stream", async (t) => {
  const a = await w.agent("stream-usage-redact");
  await createPolicy(w, { name: "usage redact", action: "redact", priority: 1, conditions: { direction: "outbound", pii_types: ["ssn"] }, agents: [a] });
  w.fakes.script({ text: "Your number is 536-22-8726, keep it safe.", usage: { inputTokens: 11, outputTokens: 14 } });
  const res = await rawCall(w.proxyUrl("openai", "/v1/chat/completions"), {
    headers: { authorization: "Bearer sk", ...w.serviceHeaders(a) },
    body: { model: MODELS.openai, stream: true, messages: [{ role: "user", content: "what is my number" }] },
  });
  t.is(res.status, 200);
  t.false(res.text.includes("536-22-8726"));
  t.false(res.text.includes('"usage"'));
  const trace = await w.trace(String(res.headers["x-service-trace-id"]));
  t.false(trace.tokensEstimated);
  t.is(trace.outputTokens, 14);
  t.true(trace.policiesFired.includes("usage redact"));
});

// The default, OPENAI_STREAM_USAGE=budgeted: asked for the agents with a daily budget only.

test.serial("default (budgeted): the budget holds for hidden reasoning tokens, charged from the provider's usage; the fourth call is refused", async (t) => {
  const usage = { inputTokens: 20, outputTokens: 5000 };
  const c = exactCost(usage);
  // Each call reserves its prompt's length and max_completion_tokens (6,000) at the price: a budget of 2.5
  // calls' exact cost fits two reservations, the third passes as the one in-flight allowance (spend 2 × c is
  // below the limit; limits/budget.ts), the fourth is refused. Charged from a local count of the visible
  // "ok", each call would cost ~1/1000 of c and dozens would pass.
  const a = await agentOf(budgeted, "stream-usage-budget", `budget_limit_daily: ${2.5 * c}\n`);
  w.fakes.script({ text: "ok", usage: { ...usage, reasoningTokens: 4990 } });
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) {
    const res = await rawCall(`${budgeted.url}/v1/proxy/openai/v1/chat/completions`, {
      headers: { authorization: "Bearer sk", ...w.serviceHeaders(a) },
      body: { model: MODELS.openai, stream: true, max_completion_tokens: 6000, messages: [{ role: "user", content: "think" }] },
    });
    statuses.push(res.status);
    if (res.status !== 200) continue;
    t.false(res.text.includes('"usage"'), "the client's stream is the one it asked for");
    const trace = await w.trace(String(res.headers["x-service-trace-id"]));
    t.false(trace.tokensEstimated);
    t.is(trace.costUsd, c);
  }
  t.deepEqual(statuses, [200, 200, 200, 429]);
});

test.serial("default (budgeted): an agent without a budget has its stream request forwarded byte for byte and counted locally", async (t) => {
  const a = await agentOf(budgeted, "stream-usage-no-budget");
  w.fakes.script({ text: "Counted here.", usage: { inputTokens: 9, outputTokens: 400 } });
  const body = `{"model":"${MODELS.openai}","stream":true,"messages":[{"role":"user","content":"count"}]}`;
  const res = await rawCall(`${budgeted.url}/v1/proxy/openai/v1/chat/completions`, { headers: { authorization: "Bearer sk", ...w.serviceHeaders(a) }, body });
  t.is(res.status, 200);
  t.is(lastRequest().body.toString("utf8"), body);
  const trace = await w.trace(String(res.headers["x-service-trace-id"]));
  t.true(trace.tokensEstimated);
  t.is(trace.outputTokens, estimateTokens("Counted here."));
});

test.serial("a server that refuses stream_options (older Azure OpenAI versions): the call goes once more as sent, and that provider is not asked again", async (t) => {
  const seen: Record<string, unknown>[] = [];
  const refusal = JSON.stringify({ error: { message: "Unrecognized request argument supplied: stream_options", type: "invalid_request_error", param: null, code: null } });
  const chunk = (content: string) => `data: ${JSON.stringify({ id: "chatcmpl-az", object: "chat.completion.chunk", created: 1, model: "gpt-4o", choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => (raw += c.toString()));
    req.on("end", () => {
      const body = JSON.parse(raw) as Record<string, unknown>;
      seen.push(body);
      if (body.model === "no-such-model") {
        res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "The model `no-such-model` does not exist", type: "invalid_request_error", param: "model", code: null } }));
      } else if ("stream_options" in body) {
        res.writeHead(400, { "content-type": "application/json" }).end(refusal);
      } else {
        res.writeHead(200, { "content-type": "text/event-stream" }).end(chunk("Old ") + chunk("server.") + "data: [DONE]\n\n");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const sidecar = await w.stack.sidecar({ PROVIDER_OPENAI_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, OPENAI_STREAM_USAGE: "add" });
    await eventually(async () => sidecar.state().agents.has(agentId));
    const call = (model: string) =>
      rawCall(`${sidecar.url}/v1/proxy/openai/v1/chat/completions`, {
        headers: { authorization: "Bearer sk", ...w.serviceHeaders(agentId) },
        body: { model, stream: true, messages: [{ role: "user", content: "hello old server" }] },
      });

    // A 400 about something else is the provider's answer, passed through unchanged, with no second try.
    const other = await call("no-such-model");
    t.is(other.status, 400);
    t.regex(other.text, /does not exist/);
    t.is(seen.length, 1);

    const first = await call(MODELS.openai);
    t.is(first.status, 200);
    t.is(first.text, chunk("Old ") + chunk("server.") + "data: [DONE]\n\n");
    t.deepEqual(seen.slice(1).map((b) => "stream_options" in b), [true, false], "refused with the option, then sent as the client sent it");
    const trace = await w.trace(String(first.headers["x-service-trace-id"]));
    t.is(trace.status, "success");
    t.true(trace.tokensEstimated);
    t.is(trace.outputTokens, estimateTokens("Old server."));

    const second = await call(MODELS.openai);
    t.is(second.status, 200);
    t.is(seen.length, 4, "not asked again: one request");
    t.false("stream_options" in seen[3]!);
  } finally {
    server.close();
  }
});
