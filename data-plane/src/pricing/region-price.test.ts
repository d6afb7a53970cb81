// Region factors: Anthropic's US-only inference (usage.inference_geo "us") costs 1.1× every rate, on top of
// the service tier's; "global", none or an unknown region leave the price; the ceiling covers the factor.
import test from "ava";
import { ceilingPrice, computeCost, PRICE_TABLE, PriceTableError, priceFor, regionPrice, tierPrice, validatePriceTable } from "./index.js";

const usage = { inputTokens: 10_000, outputTokens: 2_000, cachedInputTokens: 4_000, cacheWriteTokens: 1_000 };

test("US-only inference: 1.1× every rate, cache reads and writes included, stacking on fast mode", (t) => {
  const opus = priceFor("anthropic", "claude-opus-5")!;
  const us = regionPrice(opus, "us")!;
  t.deepEqual([us.input, us.output, us.cachedInput, us.cacheWrite, us.cacheWriteLong, us.region], [5.5, 27.5, 0.55, 6.875, 11, "us"]);
  // 5,000 uncached × 5.5 + 4,000 × 0.55 + 1,000 × 6.875 + 2,000 × 27.5, per million
  t.is(computeCost(us, usage).totalCost, 0.091575);
  const fastUs = regionPrice(tierPrice(opus, "fast"), "us")!;
  t.deepEqual([fastUs.input, fastUs.output, fastUs.tier, fastUs.region], [11, 55, "fast", "us"]);
  // Haiku 5.5's prompt-length tier is scaled too.
  const haiku = regionPrice(priceFor("anthropic", "claude-haiku-5-5")!, "us")!;
  t.is(haiku.longContext?.input, 0.55);
  t.is(haiku.longContext?.aboveInputTokens, 100_000);
});

test("global, no region, an unknown one, another provider: the price as it is; made once", (t) => {
  const opus = priceFor("anthropic", "claude-opus-5")!;
  for (const region of ["global", "eu", undefined]) t.is(regionPrice(opus, region), opus, String(region));
  const gpt = priceFor("openai", "gpt-4o")!;
  t.is(regionPrice(gpt, "us"), gpt);
  t.is(regionPrice(opus, "us"), regionPrice(opus, "us"));
  t.is(regionPrice(regionPrice(opus, "us"), "us")!.input, 5.5, "a region's price is not scaled again");
});

test("the Anthropic ceiling covers the region factor; validation refuses a bad one", (t) => {
  const top = Math.max(...PRICE_TABLE.models.filter((m) => m.provider === "anthropic").flatMap((m) => [m.output, ...Object.values(m.tiers ?? {}).map((r) => r?.output ?? 0)]));
  t.is(ceilingPrice("anthropic")!.output, top * 1.1);
  const bad = (regionFactors: unknown, message: RegExp) => {
    const copy = structuredClone(PRICE_TABLE) as unknown as { regionFactors: unknown };
    copy.regionFactors = regionFactors;
    t.regex(t.throws(() => validatePriceTable(copy), { instanceOf: PriceTableError }).message, message);
  };
  bad({ anthropic: { us: -1 } }, /factor must be a positive number/);
  bad({ acme: { us: 1.1 } }, /unknown provider acme/);
  bad({ anthropic: { us: 1.0000001 } }, /more than 6 decimals/);
});
