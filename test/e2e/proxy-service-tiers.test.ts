// Service tiers (the official SDKs through the sidecar): an answer is priced at the tier the provider says
// served it (OpenAI `service_tier` in chat completions, chunks and Responses objects; Anthropic
// `usage.speed`): OpenAI priority at the model's own priority rates, flex at half of every rate, default
// (or `auto`) at the base rates; Anthropic fast mode at the model's fast rates; Gemini flex and priority
// (the tier served named in a response header) at the model's tier rates; and a daily budget reserves and
// charges a priority call at its priority rates, so the budget holds.
import test from "ava";
import { computeCost, priceFor, regionPrice, tierPrice, type Price } from "../../data-plane/src/pricing/index.js";
import { estimateTokens } from "../../data-plane/src/providers/index.js";
import { nativeRequest } from "../fakes/providers/index.js";
import { rawCall, recordedOpenAI, recordingFetch, sdkClients, startProxyWorld, type ProxyWorld } from "./proxy-helpers.js";

let w: ProxyWorld;

test.before(async () => {
  w = await startProxyWorld({ SSE_KEEPALIVE_MS: "0" });
});
test.after.always(async () => {
  await w?.stop();
});

const USAGE = { inputTokens: 2000, outputTokens: 300, cachedInputTokens: 1024, cacheWriteTokens: 0 };

function base(model: string): Price;
function base(provider: "openai" | "anthropic", model: string): Price;
function base(a: string, b?: string): Price {
  const [provider, model] = b === undefined ? ["openai", a] : [a, b];
  const p = priceFor(provider, model);
  if (!p) throw new Error(`${model} is not in the price table`);
  return p;
}

type Tier = "priority" | "flex" | "auto" | undefined;
const CASES: { model: string; tier: Tier; served: string; rates: (p: Price) => Price }[] = [
  // gpt-4o's priority rates are 1.7× its standard ones (openai.com/api-priority-processing).
  { model: "gpt-4o", tier: "priority", served: "priority", rates: (p) => ({ ...p, input: 4.25, cachedInput: 2.125, output: 17 }) },
  { model: "o3", tier: "flex", served: "flex", rates: (p) => ({ ...p, input: p.input / 2, cachedInput: (p.cachedInput ?? p.input) / 2, output: p.output / 2 }) },
  { model: "gpt-4o", tier: "auto", served: "default", rates: (p) => p },
  { model: "gpt-4o", tier: undefined, served: "default", rates: (p) => p },
];

for (const c of CASES) {
  test.serial(`chat completions and Responses, JSON and stream: service_tier ${c.tier ?? "(none)"} on ${c.model} is served as ${c.served} and priced at its rates`, async (t) => {
    const agent = await w.agent(`tier-${c.model}-${c.tier ?? "none"}`);
    const { rec, openai } = recordedOpenAI(w, agent);
    const expected = computeCost(c.rates(base(c.model)), USAGE);
    if (c.served === "default") t.is(expected.totalCost, computeCost(base(c.model), USAGE).totalCost);
    else t.not(expected.totalCost, computeCost(base(c.model), USAGE).totalCost, "the tier changes the price");
    const tier = c.tier === undefined ? {} : { service_tier: c.tier };

    const calls: [string, () => Promise<string | null | undefined>][] = [
      ["chat JSON", async () => (await openai.chat.completions.create({ model: c.model, messages: [{ role: "user", content: "Hi" }], ...tier })).service_tier],
      ["chat stream", async () => {
        const stream = await openai.chat.completions.create({ model: c.model, messages: [{ role: "user", content: "Hi" }], stream: true, stream_options: { include_usage: true }, ...tier });
        let served: string | null | undefined;
        for await (const chunk of stream) served = chunk.service_tier;
        return served;
      }],
      ["Responses JSON", async () => (await openai.responses.create({ model: c.model, input: "Hi", ...tier })).service_tier],
      ["Responses stream", async () => {
        const stream = openai.responses.stream({ model: c.model, input: "Hi", ...tier });
        for await (const _e of stream) {
          // drain
        }
        return (await stream.finalResponse()).service_tier;
      }],
    ];
    for (const [label, call] of calls) {
      w.fakes.script({ text: "Tiered.", usage: USAGE });
      const served = await call();
      t.is(served, c.served, `${label}: the SDK sees the tier that served the call`);
      const trace = await w.trace(rec.last().headers.get("x-service-trace-id") ?? "");
      t.is(trace.costUsd, expected.totalCost, `${label}: cost at the served tier's rates`);
      t.is(trace.pricePerMillionInput, expected.pricePerMillionInput, label);
      t.is(trace.pricePerMillionOutput, expected.pricePerMillionOutput, label);
      t.false(trace.priceMissing, label);
    }
  });
}

test.serial("a tier the table has no rates for (scale; priority on a model without priority rates) is priced at the base rates", async (t) => {
  const agent = await w.agent("tier-unpriced");
  const { rec, openai } = recordedOpenAI(w, agent);
  for (const [model, tier] of [["gpt-4o", "scale"], ["gpt-4.1-nano", "flex"], ["gpt-5.4-nano", "priority"]] as const) {
    w.fakes.script({ text: "Tiered.", usage: USAGE });
    const r = await openai.chat.completions.create({ model, messages: [{ role: "user", content: "Hi" }], service_tier: tier as "priority" });
    t.is(r.service_tier, tier);
    const trace = await w.trace(rec.last().headers.get("x-service-trace-id") ?? "");
    const priced = computeCost(tierPrice(base(model), tier), USAGE).totalCost;
    t.is(trace.costUsd, priced, `${model} ${tier}`);
    if (tier !== "flex") t.is(priced, computeCost(base(model), USAGE).totalCost, `${model} ${tier}: the base rates`);
  }
});

test.serial("a daily budget reserves and charges priority calls at their priority rates: parallel calls stay within it", async (t) => {
  const prompt = "budget at priority";
  const out = 100;
  const inputTokens = estimateTokens(prompt);
  const usage = { inputTokens, outputTokens: out, cachedInputTokens: 0, cacheWriteTokens: 0 };
  const priority = computeCost(tierPrice(base("gpt-4o"), "priority"), usage).totalCost;
  const standard = computeCost(base("gpt-4o"), usage).totalCost;
  t.true(standard * 1.5 < priority, "at standard rates, half again as many calls would fit");
  const agent = await w.agent("tier-budget", `budget_limit_daily: ${10.5 * priority}\n`);
  const { openai } = recordedOpenAI(w, agent);
  w.fakes.script({ text: "ok", usage: { inputTokens, outputTokens: out }, delayMs: 50 });
  const results = await Promise.allSettled(
    Array.from({ length: 40 }, () => openai.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: prompt }], max_tokens: out, service_tier: "priority" })),
  );
  const passed = results.filter((r) => r.status === "fulfilled").length;
  t.true(passed >= 10 && passed <= 11, `passed ${passed}: 10 fit the budget at priority rates, at most 1 more as the in-flight allowance`);
  for (const r of results) if (r.status === "rejected") t.is((r.reason as { status?: number }).status, 429);
});

test.serial("Anthropic fast mode (speed: \"fast\", usage.speed in the answer) is priced at the model's fast rates, JSON and stream, cache reads and writes included", async (t) => {
  const agent = await w.agent("tier-anthropic-fast", undefined, "anthropic");
  const rec = recordingFetch();
  const { anthropic } = sdkClients(w.sidecar.url, w.serviceHeaders(agent), rec.fetch);
  const model = "claude-opus-5";
  const usage = { inputTokens: 3000, outputTokens: 400, cachedInputTokens: 1000, cacheWriteTokens: 500 };
  const standard = base("anthropic", model);
  const fast = tierPrice(standard, "fast")!;
  // Anthropic: fast mode on Opus 5 is 2× every standard rate, cache rates stacking on it.
  t.deepEqual([fast.input, fast.output, fast.cachedInput, fast.cacheWrite], [2 * standard.input, 2 * standard.output, 2 * standard.cachedInput!, 2 * standard.cacheWrite!]);
  for (const speed of ["fast", "standard"] as const) {
    const expected = computeCost(speed === "fast" ? fast : standard, usage).totalCost;
    w.fakes.script({ text: "Quick.", usage });
    const json = await anthropic.messages.create({ model, max_tokens: 256, speed, messages: [{ role: "user", content: "Hi" }] });
    t.is(json.usage.speed, speed);
    t.is((await w.trace(rec.last().headers.get("x-service-trace-id") ?? "")).costUsd, expected, `JSON ${speed}`);
    w.fakes.script({ text: "Quick.", usage });
    const stream = anthropic.messages.stream({ model, max_tokens: 256, speed, messages: [{ role: "user", content: "Hi" }] });
    await stream.finalMessage();
    t.is((await w.trace(rec.last().headers.get("x-service-trace-id") ?? "")).costUsd, expected, `stream ${speed}`);
  }
});

test.serial("Gemini flex and priority (service_tier in the body, the tier served in x-gemini-service-tier) are priced at the model's tier rates, JSON and stream", async (t) => {
  const agent = await w.agent("tier-gemini", undefined, "google");
  const model = "gemini-3-flash-preview";
  const standard = priceFor("google", model)!;
  const usage = { inputTokens: 5000, outputTokens: 700, cachedInputTokens: 2000, cacheWriteTokens: 0 };
  for (const tier of ["flex", "priority", undefined] as const) {
    const expected = computeCost(tierPrice(standard, tier), usage).totalCost;
    if (tier !== undefined) t.not(expected, computeCost(standard, usage).totalCost, `${tier} has rates of its own`);
    for (const stream of [false, true]) {
      const req = nativeRequest("google", { model, stream });
      const body = tier === undefined ? req.body : { ...(req.body as object), service_tier: tier };
      w.fakes.script({ text: "Tiered.", usage });
      const res = await rawCall(w.proxyUrl("google", req.path), { headers: { ...req.headers, ...w.serviceHeaders(agent) }, body });
      t.is(res.status, 200, res.text);
      t.is(res.headers["x-gemini-service-tier"], tier ?? "standard", "the provider's header reaches the client");
      const trace = await w.trace(String(res.headers["x-service-trace-id"]));
      t.is(trace.costUsd, expected, `${tier ?? "standard"} ${stream ? "stream" : "JSON"}`);
    }
  }
});

test.serial("Anthropic US-only inference (inference_geo: \"us\", usage.inference_geo in the answer) costs 1.1× every rate, with fast mode too", async (t) => {
  const agent = await w.agent("region-anthropic-us", undefined, "anthropic");
  const rec = recordingFetch();
  const { anthropic } = sdkClients(w.sidecar.url, w.serviceHeaders(agent), rec.fetch);
  const model = "claude-opus-5";
  const usage = { inputTokens: 3000, outputTokens: 400, cachedInputTokens: 1000, cacheWriteTokens: 500 };
  for (const speed of ["standard", "fast"] as const) {
    const expected = computeCost(regionPrice(tierPrice(base("anthropic", model), speed), "us"), usage).totalCost;
    t.true(expected > computeCost(tierPrice(base("anthropic", model), speed), usage).totalCost, "US-only costs more");
    w.fakes.script({ text: "Here.", usage });
    const json = await anthropic.messages.create({ model, max_tokens: 256, speed, inference_geo: "us", messages: [{ role: "user", content: "Hi" }] });
    t.is(json.usage.inference_geo, "us");
    const trace = await w.trace(rec.last().headers.get("x-service-trace-id") ?? "");
    t.is(trace.costUsd, expected, `JSON ${speed}`);
    t.is(trace.pricePerMillionInput, (speed === "fast" ? 2 : 1) * 5 * 1.1);
    w.fakes.script({ text: "Here.", usage });
    await anthropic.messages.stream({ model, max_tokens: 256, speed, inference_geo: "us", messages: [{ role: "user", content: "Hi" }] }).finalMessage();
    t.is((await w.trace(rec.last().headers.get("x-service-trace-id") ?? "")).costUsd, expected, `stream ${speed}`);
  }
});
