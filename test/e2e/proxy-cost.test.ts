// Exact cost (research/gateways.md §4: zero-cost streams, cache tokens mis-priced): for every provider ×
// JSON/SSE × with/without tools, the trace's tokens equal the provider's usage (cache reads and writes
// included) and its cost equals the price-table arithmetic (computeCost of that usage) exactly;
// X-Service-Cost is on every answer (streams: the input cost at header time, the final cost in the
// HTTP trailer); an answer's reported model prices it; an unknown model costs 0 and is flagged.
import test from "ava";
import { nativeRequest, type FakeProviderName, type FakeUsage } from "../fakes/providers/index.js";
import { computeCost, priceFor, PRICE_TABLE } from "../../data-plane/src/pricing/index.js";
import { getProvider } from "../../data-plane/src/providers/index.js";
import { MODELS, PROVIDERS, rawCall, startProxyWorld, type ProxyWorld } from "./proxy-helpers.js";

let w: ProxyWorld;
let agentId: string;

test.before(async () => {
  w = await startProxyWorld();
  agentId = await w.agent("cost-matrix");
});
test.after.always(async () => {
  await w?.stop();
});

/** Usage per provider exercising its cache fields (Anthropic: 5-minute and 1-hour writes; Gemini and OpenAI: reasoning). */
const USAGE: Record<FakeProviderName, FakeUsage> = {
  openai: { inputTokens: 1200, outputTokens: 345, cachedInputTokens: 256, cacheWriteTokens: 64, reasoningTokens: 100 },
  anthropic: { inputTokens: 2048, outputTokens: 512, cachedInputTokens: 1024, cacheWriteTokens: 512, cacheWriteLongTokens: 128 },
  google: { inputTokens: 3001, outputTokens: 707, cachedInputTokens: 1000, reasoningTokens: 203 },
  mistral: { inputTokens: 911, outputTokens: 153, cachedInputTokens: 300 },
  cohere: { inputTokens: 807, outputTokens: 91, cachedInputTokens: 100 },
};

/** The normalised usage the sidecar must record for a scripted fake usage. */
function expectedUsage(u: FakeUsage) {
  return {
    inputTokens: u.inputTokens,
    outputTokens: u.outputTokens,
    cachedInputTokens: u.cachedInputTokens ?? 0,
    cacheWriteTokens: u.cacheWriteTokens ?? 0,
    ...(u.cacheWriteLongTokens ? { cacheWriteLongTokens: u.cacheWriteLongTokens } : {}),
  };
}

const TOOLS = [
  { name: "get_weather", arguments: { city: "Oslo" } },
  { name: "get_time", arguments: { tz: "Europe/Oslo" } },
];

for (const p of PROVIDERS) {
  for (const stream of [false, true]) {
    for (const tools of [false, true]) {
      test.serial(`${p} · ${stream ? "SSE" : "JSON"} · ${tools ? "with tools" : "no tools"}: tokens equal the provider's usage, cost equals the price-table arithmetic`, async (t) => {
        const usage = USAGE[p];
        w.fakes.script({ text: tools ? "" : "Priced to the last token.", usage, ...(tools ? { toolCalls: TOOLS } : {}) });
        const req = nativeRequest(p, { stream, tools });
        const res = await rawCall(w.proxyUrl(p, req.path), { headers: { ...req.headers, ...w.serviceHeaders(agentId) }, body: req.body });
        t.is(res.status, 200, res.text);

        const price = priceFor(p, MODELS[p]);
        t.truthy(price, `${MODELS[p]} is in the price table`);
        const expected = computeCost(price, expectedUsage(usage));
        const trace = await w.trace(String(res.headers["x-service-trace-id"]));
        t.is(trace.inputTokens, usage.inputTokens);
        t.is(trace.outputTokens, usage.outputTokens);
        t.is(trace.cachedInputTokens, usage.cachedInputTokens ?? 0);
        t.is(trace.cacheWriteTokens, usage.cacheWriteTokens ?? 0);
        t.false(trace.tokensEstimated);
        t.is(trace.costUsd, expected.totalCost);
        t.is(trace.inputCost, expected.inputCost);
        t.is(trace.outputCost, expected.outputCost);
        t.is(trace.pricePerMillionInput, expected.pricePerMillionInput);
        t.is(trace.pricePerMillionOutput, expected.pricePerMillionOutput);
        t.is(trace.priceVersion, PRICE_TABLE.version);
        t.false(trace.priceMissing);
        t.true(expected.totalCost > 0);
        t.deepEqual(trace.toolCalls.map((c) => c.name), tools ? ["get_weather", "get_time"] : []);
        t.is(trace.streamed, stream);

        if (stream) {
          // Headers leave before the answer exists: the input cost estimated then (4 characters per token); the trailer has the final cost.
          const adapter = getProvider(p)!;
          const promptTokens = Math.ceil(adapter.promptText(req.body).length / 4);
          const atHeaders = computeCost(price, { inputTokens: promptTokens, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0 }).totalCost;
          t.is(Number(res.headers["x-service-cost"]), atHeaders);
          t.is(res.headers.trailer, "X-Service-Cost");
          t.is(Number(res.trailers["x-service-cost"]), expected.totalCost);
        } else {
          t.is(Number(res.headers["x-service-cost"]), expected.totalCost);
        }
      });
    }
  }
}

test.serial("the model the provider reports (a dated snapshot of another model) prices the answer", async (t) => {
  const usage = { inputTokens: 1000, outputTokens: 1000 };
  w.fakes.script({ usage, model: "gpt-4o-mini-2024-07-18" });
  const req = nativeRequest("openai", { model: "gpt-4o" });
  const res = await rawCall(w.proxyUrl("openai", req.path), { headers: { ...req.headers, ...w.serviceHeaders(agentId) }, body: req.body });
  const expected = computeCost(priceFor("openai", "gpt-4o-mini"), { ...usage, cachedInputTokens: 0, cacheWriteTokens: 0 });
  t.not(expected.totalCost, computeCost(priceFor("openai", "gpt-4o"), { ...usage, cachedInputTokens: 0, cacheWriteTokens: 0 }).totalCost);
  const trace = await w.trace(String(res.headers["x-service-trace-id"]));
  t.is(trace.costUsd, expected.totalCost);
  t.is(trace.pricePerMillionInput, expected.pricePerMillionInput);
  t.is(Number(res.headers["x-service-cost"]), expected.totalCost);
  t.is(trace.model, "gpt-4o", "the trace keeps the model the agent asked for");
});

test.serial("an unknown model costs 0, the trace is flagged price_missing and still records the price-table version", async (t) => {
  for (const stream of [false, true]) {
    w.fakes.script({ usage: { inputTokens: 50, outputTokens: 20 } });
    const req = nativeRequest("mistral", { model: "acme-llm-9000", stream });
    const res = await rawCall(w.proxyUrl("mistral", req.path), { headers: { ...req.headers, ...w.serviceHeaders(agentId) }, body: req.body });
    t.is(res.status, 200);
    t.is(res.headers["x-service-cost"], "0");
    if (stream) t.is(res.trailers["x-service-cost"], "0");
    const trace = await w.trace(String(res.headers["x-service-trace-id"]));
    t.is(trace.costUsd, 0);
    t.true(trace.priceMissing);
    t.is(trace.priceVersion, PRICE_TABLE.version);
    t.is(trace.inputTokens, 50);
    t.is(trace.outputTokens, 20);
  }
});
