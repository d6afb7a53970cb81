// The price of a service tier (OpenAI `service_tier`, Anthropic fast mode): a model's own tier rates
// (priority, fast) replace its base rates, long-context ones included; a provider's tier factor (flex: 0.5)
// scales every rate, long-context ones included; any other tier (default, auto, scale, standard, one the
// table does not know) is priced at the base rates.
import { PRICE_TABLE } from "./price-table.js";
import type { LongContextRates, Price, PriceRates } from "./types.js";

/** Tier prices made so far, per base price (base prices are memoised by the proxy, so this stays small). */
const made = new WeakMap<Price, Map<string, Price>>();

export function tierPrice(price: Price | undefined, tier: string | undefined): Price | undefined {
  if (price === undefined || tier === undefined || price.tier !== undefined) return price; // a tier's price is final
  const name = PRICE_TABLE.serviceTierAliases?.[price.provider]?.[tier] ?? tier;
  const own = price.tiers?.[name];
  const factor = own === undefined ? PRICE_TABLE.serviceTierFactors?.[price.provider]?.[name] : undefined;
  if (own === undefined && factor === undefined) return price;
  let byTier = made.get(price);
  if (!byTier) made.set(price, (byTier = new Map()));
  let p = byTier.get(name);
  if (!p) {
    // A model's own tier rates have long-context rates of their own when the tier has them (Gemini, OpenAI
    // gpt-5.6 fast); without them they hold across the whole context (OpenAI does not serve prompts over
    // 128K tokens at priority on older models; Anthropic prices fast mode flat over the full context).
    p = own !== undefined ? withRates(price, own, own.longContext) : scaledPrice(price, factor!);
    p.tier = name;
    byTier.set(name, p);
  }
  return p;
}

/** Every rate of a price times `factor`, long-context ones included (its tier kept). */
export function scaledPrice(price: Price, factor: number): Price {
  const p = withRates(price, scaled(price, factor), price.longContext && { aboveInputTokens: price.longContext.aboveInputTokens, ...scaled(price.longContext, factor) });
  if (price.tier !== undefined) p.tier = price.tier;
  return p;
}

function withRates(base: Price, rates: PriceRates, longContext: LongContextRates | undefined): Price {
  const p: Price = { provider: base.provider, model: base.model, input: rates.input, output: rates.output, version: base.version };
  if (rates.cachedInput !== undefined) p.cachedInput = rates.cachedInput;
  if (rates.cacheWrite !== undefined) p.cacheWrite = rates.cacheWrite;
  if (rates.cacheWriteLong !== undefined) p.cacheWriteLong = rates.cacheWriteLong;
  if (longContext) p.longContext = longContext;
  return p;
}

/** Every rate times `factor`, kept to 6 decimals (the table's validation checks that nothing is lost). */
function scaled(rates: PriceRates, factor: number): PriceRates {
  const f = (r: number) => Math.round(r * factor * 1e6) / 1e6;
  const out: PriceRates = { input: f(rates.input), output: f(rates.output) };
  if (rates.cachedInput !== undefined) out.cachedInput = f(rates.cachedInput);
  if (rates.cacheWrite !== undefined) out.cacheWrite = f(rates.cacheWrite);
  if (rates.cacheWriteLong !== undefined) out.cacheWriteLong = f(rates.cacheWriteLong);
  return out;
}
