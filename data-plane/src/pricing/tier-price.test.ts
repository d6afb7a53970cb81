// Service tiers: a model's own priority rates, the provider's flex factor, everything else at base rates;
// the table's validation of tier rates and factors; the budget ceiling covers tier rates.
import test from "ava";
import { ceilingPrice, computeCost, PRICE_TABLE, PriceTableError, priceFor, tierPrice, validatePriceTable, type Price } from "./index.js";

const usage = { inputTokens: 10_000, outputTokens: 2_000, cachedInputTokens: 4_000, cacheWriteTokens: 0 };

function price(model: string): Price {
  const p = priceFor("openai", model);
  if (!p) throw new Error(model);
  return p;
}

test("priority: the model's own rates replace the base ones (OpenAI's published table), cached reads included", (t) => {
  const p = tierPrice(price("gpt-4.1"), "priority")!;
  t.deepEqual([p.input, p.cachedInput, p.output, p.tier], [3.5, 0.875, 14, "priority"]);
  // 6,000 uncached × 3.5 + 4,000 cached × 0.875 + 2,000 × 14, per million
  t.is(computeCost(p, usage).totalCost, 0.0525);
  t.is(computeCost(price("gpt-4.1"), usage).totalCost, 0.03);
  // A dated snapshot matches its model's tiers too.
  t.is(tierPrice(price("gpt-4o-2024-11-20"), "priority")!.input, 4.25);
  // The 2024-05-13 snapshot has no cached rate at priority: cached reads fall back to its input rate.
  const may = tierPrice(price("gpt-4o-2024-05-13"), "priority")!;
  t.is(may.cachedInput, undefined);
  t.is(computeCost(may, usage).inputCost, 0.0875);
});

test("flex: every rate halved, long-context ones included; exact to the 1e-10", (t) => {
  const base = price("gpt-5.4");
  const flex = tierPrice(base, "flex")!;
  t.deepEqual([flex.input, flex.cachedInput, flex.output], [base.input / 2, base.cachedInput! / 2, base.output / 2]);
  t.deepEqual(flex.longContext, { aboveInputTokens: 272000, input: base.longContext!.input / 2, output: base.longContext!.output / 2, cachedInput: base.longContext!.cachedInput! / 2 });
  t.is(computeCost(flex, usage).totalCost * 2, computeCost(base, usage).totalCost);
  const long = { ...usage, inputTokens: 300_000 };
  t.is(computeCost(flex, long).totalCost * 2, computeCost(base, long).totalCost);
  t.true(computeCost(flex, long).longContext);
  t.is(tierPrice(price("o4-mini"), "flex")!.cachedInput, 0.1375);
});

test("a tier's own long-context rates apply above its threshold; without them its rates hold over the whole context", (t) => {
  const terra = tierPrice(price("gpt-5.6-terra"), "priority")!;
  const long = { ...usage, inputTokens: 300_000 };
  t.like(computeCost(terra, long), { longContext: true, pricePerMillionInput: 8, pricePerMillionOutput: 36 });
  t.like(computeCost(terra, usage), { longContext: false, pricePerMillionInput: 4, pricePerMillionOutput: 24 });
  // gpt-5.4 has long-context base rates but none at priority (not served above 272K): flat.
  t.like(computeCost(tierPrice(price("gpt-5.4"), "priority")!, long), { longContext: false, pricePerMillionInput: 5 });
  // Gemini 3.1 Pro: flex and priority each have their >200k rates.
  const pro = priceFor("google", "gemini-3.1-pro-preview")!;
  t.like(computeCost(tierPrice(pro, "priority")!, long), { pricePerMillionInput: 7.2, pricePerMillionOutput: 32.4 });
  t.like(computeCost(tierPrice(pro, "flex")!, long), { pricePerMillionInput: 2, pricePerMillionOutput: 9 });
});

test("another name of a tier (OpenAI renamed priority to fast) prices as the tier; Anthropic's fast mode is its own tier", (t) => {
  const base = price("gpt-4.1");
  t.is(tierPrice(base, "fast"), tierPrice(base, "priority"));
  t.is(tierPrice(base, "fast")!.tier, "priority");
  const opus = priceFor("anthropic", "claude-opus-5")!;
  const fast = tierPrice(opus, "fast")!;
  t.deepEqual([fast.input, fast.output, fast.cachedInput, fast.cacheWrite, fast.cacheWriteLong], [10, 50, 1, 12.5, 20], "2× every Opus 5 rate");
  t.is(tierPrice(opus, "priority"), opus, "Anthropic's priority tier has no public per-token price: base rates");
  t.is(tierPrice(priceFor("anthropic", "claude-opus-4-6")!, "fast")!.input, 5, "Opus 4.6 fast mode was removed: standard rates");
});

test("default, auto, scale, an unknown tier, no tier: the base price itself; a tier's price is made once and final", (t) => {
  const base = price("gpt-4o");
  for (const tier of ["default", "auto", "scale", "turbo", "", undefined]) t.is(tierPrice(base, tier), base, String(tier));
  t.is(tierPrice(undefined, "priority"), undefined);
  const p = tierPrice(base, "priority")!;
  t.is(tierPrice(base, "priority"), p, "memoised");
  t.is(tierPrice(p, "flex"), p, "a tier's price is not tiered again");
  // Other providers have no tiers in the table: Anthropic's priority tier is priced at its base rates.
  const claude = priceFor("anthropic", "claude-sonnet-4-6")!;
  t.is(tierPrice(claude, "priority"), claude);
  t.is(tierPrice(claude, "flex"), claude);
});

test("every priority rate is above the model's base rate; the provider's ceiling covers them", (t) => {
  const ceiling = ceilingPrice("openai")!;
  for (const m of PRICE_TABLE.models) {
    const p = m.tiers?.priority;
    if (!p) continue;
    t.true(p.input > m.input && p.output > m.output, m.model);
    if (p.cachedInput !== undefined) t.true(p.cachedInput >= (m.cachedInput ?? 0) && p.cachedInput <= p.input, m.model);
    t.true(ceiling.input >= p.input && ceiling.output >= p.output, m.model);
  }
  t.true(PRICE_TABLE.models.filter((m) => m.tiers?.priority).length >= 15);
});

test("validation rejects bad tier rates and factors, and a factor that would lose a rate's exactness", (t) => {
  const bad = (mutate: (x: typeof PRICE_TABLE) => void, message: RegExp) => {
    const copy = structuredClone(PRICE_TABLE);
    mutate(copy);
    const err = t.throws(() => validatePriceTable(copy), { instanceOf: PriceTableError });
    t.regex(err.message, message);
  };
  bad((x) => {
    x.models.find((m) => m.model === "gpt-4o")!.tiers!.priority!.output = -2;
  }, /gpt-4o\.tiers\.priority\.output/);
  bad((x) => {
    x.serviceTierFactors = { openai: { flex: 0 } };
  }, /factor must be a positive number/);
  bad((x) => {
    x.serviceTierFactors = { ...x.serviceTierFactors, acme: { flex: 0.5 } } as typeof x.serviceTierFactors;
  }, /unknown provider acme/);
  bad((x) => {
    x.serviceTierFactors = { openai: { flex: 0.3333 } };
  }, /more than 6 decimals/);
  t.notThrows(() => validatePriceTable(structuredClone(PRICE_TABLE)));
});
