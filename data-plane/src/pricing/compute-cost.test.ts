// computeCost(): documented arithmetic, cached and cache-write billing, long context, rounding, missing prices.
import test from "ava";
import type { Usage } from "../providers/types.js";
import { budgetCharge, ceilingMicroRates, ceilingPrice, computeCost, PRICE_TABLE, priceFor, regionPrice, tierPrice } from "./index.js";
import type { Price } from "./index.js";

const usage = (inputTokens: number, outputTokens: number, cachedInputTokens = 0, cacheWriteTokens = 0, cacheWriteLongTokens?: number): Usage => {
  const u: Usage = { inputTokens, outputTokens, cachedInputTokens, cacheWriteTokens };
  if (cacheWriteLongTokens !== undefined) u.cacheWriteLongTokens = cacheWriteLongTokens;
  return u;
};

test("an unknown model costs 0 and is flagged priceMissing, with the table version", (t) => {
  t.deepEqual(computeCost(priceFor("openai", "gpt-unknown"), usage(1000, 1000)), {
    inputCost: 0,
    outputCost: 0,
    totalCost: 0,
    cachedInputCost: 0,
    cacheWriteCost: 0,
    pricePerMillionInput: 0,
    pricePerMillionOutput: 0,
    priceMissing: true,
    longContext: false,
    priceVersion: PRICE_TABLE.version,
  });
});

test("plain input and output: tokens × rate / 1e6", (t) => {
  const cost = computeCost(priceFor("openai", "gpt-4o"), usage(1_000_000, 500_000));
  t.like(cost, { inputCost: 2.5, outputCost: 5, totalCost: 7.5, pricePerMillionInput: 2.5, pricePerMillionOutput: 10, priceMissing: false });
});

test("cached tokens are billed at the cached rate only, never also at the full rate", (t) => {
  // gpt-4o: 800 uncached × 2.5 + 200 cached × 1.25 = 2250 µ$ → 0.00225
  const cost = computeCost(priceFor("openai", "gpt-4o"), usage(1000, 0, 200));
  t.is(cost.inputCost, 0.00225);
  t.is(cost.cachedInputCost, 0.00025);
  // a model without a cached rate bills cached tokens as plain input
  t.is(computeCost(priceFor("cohere", "command-a-03-2025"), usage(1000, 0, 200)).inputCost, 0.0025);
});

test("Anthropic cache writes: 5-minute and 1-hour writes at their own rates", (t) => {
  // claude-sonnet-4-6: 3 input, 0.3 read, 3.75 5m write, 6 1h write
  // 10000 total = 4000 uncached + 3000 read + 2000 5m writes + 1000 1h writes
  // = 12000 + 900 + 7500 + 6000 = 26400 µ$ → 0.0264
  const cost = computeCost(priceFor("anthropic", "claude-sonnet-4-6"), usage(10_000, 1_000, 3_000, 3_000, 1_000));
  t.is(cost.inputCost, 0.0264);
  t.is(cost.cacheWriteCost, 0.0135);
  t.is(cost.cachedInputCost, 0.0009);
  t.is(cost.outputCost, 0.015);
  t.is(cost.totalCost, 0.0414);
});

test("OpenAI cache writes are billed at the model's cacheWrite rate when it has one, else at input", (t) => {
  // gpt-5.6: input 5, cached 0.5, write 6.25 → 700·5 + 100·0.5 + 200·6.25 = 3500 + 50 + 1250 = 4800 µ$
  t.is(computeCost(priceFor("openai", "gpt-5.6"), usage(1000, 0, 100, 200)).inputCost, 0.0048);
  // gpt-4.1: no write rate → 700·2 + 100·0.5 + 200·2 = 1850 µ$
  t.is(computeCost(priceFor("openai", "gpt-4.1"), usage(1000, 0, 100, 200)).inputCost, 0.00185);
});

test("long-context rates apply to the whole request strictly above the threshold", (t) => {
  const price = priceFor("google", "gemini-2.5-pro");
  const at = computeCost(price, usage(200_000, 1_000));
  t.like(at, { longContext: false, pricePerMillionInput: 1.25, inputCost: 0.25, outputCost: 0.01 });
  const above = computeCost(price, usage(200_001, 1_000));
  t.like(above, { longContext: true, pricePerMillionInput: 2.5, pricePerMillionOutput: 15, inputCost: 0.5000025, outputCost: 0.015 });
  const sonnet = computeCost(priceFor("anthropic", "claude-sonnet-4-5-20250929"), usage(300_000, 0, 100_000));
  // 200000 × 6 + 100000 × 0.6 = 1,260,000 µ$
  t.like(sonnet, { longContext: true, inputCost: 1.26 });
});

test("results are exact decimals, free of float noise, rounded half-up to 1e-10", (t) => {
  const price: Price = { provider: "openai", model: "x", input: 0.1, output: 0.2, version: "v" };
  // 3 × 0.1 in floats is 0.30000000000000004; the exact 3e-7 comes out
  t.is(computeCost(price, usage(3, 3)).inputCost, 3e-7);
  t.is(computeCost(price, usage(3, 3)).totalCost, 9e-7);
  // 1 token at 0.00005/M = 5e-11 USD → rounds half-up to 1e-10; 4e-11 → 0
  const tiny: Price = { provider: "openai", model: "y", input: 0.00005, output: 0.00004, version: "v" };
  t.is(computeCost(tiny, usage(1, 1)).inputCost, 1e-10);
  t.is(computeCost(tiny, usage(1, 1)).outputCost, 0);
  t.is(computeCost(tiny, usage(1, 1)).totalCost, 1e-10);
  // large counts stay exact: 10M tokens at 0.01875/M (Gemini 2.0 Flash-Lite cached rate)
  const lite = priceFor("google", "gemini-2.0-flash-lite");
  t.is(computeCost(lite, usage(10_000_000, 0, 10_000_000)).inputCost, 0.1875);
});

test("odd usage values are clamped: cached/writes never exceed input, negatives and NaN count as 0", (t) => {
  const price = priceFor("openai", "gpt-4o");
  t.is(computeCost(price, usage(100, 0, 500)).inputCost, 0.000125); // 100 cached × 1.25
  t.is(computeCost(price, usage(-5, Number.NaN)).totalCost, 0);
  t.is(computeCost(price, usage(10.9, 0)).inputCost, 0.000025); // fractions truncated: 10 × 2.5
});

/** The documented arithmetic written plainly in BigInt: the reference for the fast path. */
function referenceTotal(price: Price, inputTokens: number, outputTokens: number, cachedInputTokens: number): number {
  const pico = (r: number) => BigInt(Math.round(r * 1e6));
  const input = BigInt(inputTokens);
  const cached = BigInt(Math.min(cachedInputTokens, inputTokens));
  const sum = (input - cached) * pico(price.input) + cached * pico(price.cachedInput ?? price.input) + BigInt(outputTokens) * pico(price.output);
  return Number((sum + 50n) / 100n) / 1e10;
}

test("the double-precision path gives the exact BigInt result for 20,000 random requests, and huge counts fall back to BigInt", (t) => {
  let seed = 7;
  const rand = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  const rates = [0.00005, 0.075, 0.1, 0.15, 0.6, 1.25, 2.5, 3, 3.75, 10, 15, 75, 150];
  for (let i = 0; i < 20_000; i++) {
    const price: Price = { provider: "openai", model: "x", input: rates[Math.floor(rand() * rates.length)]!, output: rates[Math.floor(rand() * rates.length)]!, cachedInput: rates[Math.floor(rand() * rates.length)]!, version: "v" };
    const input = Math.floor(rand() ** 3 * 2_000_000);
    const output = Math.floor(rand() ** 3 * 200_000);
    const cached = Math.floor(rand() * input);
    const got = computeCost(price, usage(input, output, cached)).totalCost;
    const want = referenceTotal(price, input, output, cached);
    if (got !== want) t.fail(`${JSON.stringify(price)} ${input}/${output}/${cached}: ${got} ≠ ${want}`);
  }
  // 10^12 tokens at $150/M is 1.5·10^20 picodollars, far beyond 2^53
  const big: Price = { provider: "openai", model: "x", input: 150, output: 0.000001, version: "v" };
  t.is(computeCost(big, usage(1e12 + 1, 3)).totalCost, referenceTotal(big, 1e12 + 1, 3, 0));
  t.is(computeCost(big, usage(1e12 + 1, 3)).inputCost, 150_000_000.00015);
});

test("budgetCharge: a priced call is charged its cost; an unpriced one its tokens at the provider's ceiling (every input-side rate, long context and service tiers included)", (t) => {
  t.is(budgetCharge({ provider: "openai", costUsd: 0.0125, priceMissing: false, inputTokens: 10, outputTokens: 10 }), 0.0125);
  t.is(budgetCharge({ provider: "openai", costUsd: 0, priceMissing: true, inputTokens: 0, outputTokens: 0 }), 0);
  for (const provider of ["openai", "anthropic", "google", "mistral", "cohere"] as const) {
    const models = PRICE_TABLE.models.filter((m) => m.provider === provider);
    const rates = (m: (typeof models)[number]) => {
      const tiers = Object.values(m.tiers ?? {}).filter((r) => r !== undefined);
      return [m, ...(m.longContext ? [m.longContext] : []), ...tiers, ...tiers.flatMap((r) => (r.longContext ? [r.longContext] : []))];
    };
    const up = Math.max(1, ...Object.values(PRICE_TABLE.regionFactors?.[provider] ?? {})); // Anthropic US-only: 1.1
    const input = up * Math.max(...models.flatMap((m) => rates(m).flatMap((r) => [r.input, r.cachedInput ?? 0, r.cacheWrite ?? 0, r.cacheWriteLong ?? 0])));
    const output = up * Math.max(...models.flatMap((m) => rates(m).map((r) => r.output)));
    t.like(ceilingPrice(provider), { input, output });
    // Every priced call of this provider costs at most its tokens at the ceiling.
    for (const m of models) {
      const u = { inputTokens: 300_000, outputTokens: 5_000, cachedInputTokens: 100_000, cacheWriteTokens: 50_000, cacheWriteLongTokens: 50_000 };
      for (const tier of [undefined, ...Object.keys(m.tiers ?? {})]) {
        const priced = computeCost(regionPrice(tierPrice(priceFor(provider, m.model, Date.parse(`${m.validFrom ?? "2026-11-01"}T12:00:00Z`)), tier), "us"), u).totalCost;
        t.true(priced <= budgetCharge({ provider, costUsd: 0, priceMissing: true, inputTokens: u.inputTokens, outputTokens: u.outputTokens }) + 1e-12, `${m.model} ${tier ?? ""}`);
      }
    }
    const micro = ceilingMicroRates().find((r) => r.provider === provider)!;
    t.deepEqual(micro, { provider, input: Math.round(input * 1e6), output: Math.round(output * 1e6) });
    // The control plane's integer formula gives the same amount.
    const [i, o] = [123_457, 7_891];
    t.is(Math.floor((i * micro.input + o * micro.output + 50) / 100) / 1e10, budgetCharge({ provider, costUsd: 0, priceMissing: true, inputTokens: i, outputTokens: o }));
  }
});
