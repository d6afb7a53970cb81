// The price of a service tier (OpenAI `service_tier`): a model's own tier rates (priority) replace its base
// rates; a provider's tier factor (flex: 0.5) scales every rate, long-context ones included; any other tier
// (default, auto, scale, one the table does not know) is priced at the base rates.
import { PRICE_TABLE } from "./price-table.js";
import type { LongContextRates, Price, PriceRates } from "./types.js";

/** Tier prices made so far, per base price (base prices are memoised by the proxy, so this stays small). */
const made = new WeakMap<Price, Map<string, Price>>();

export function tierPrice(price: Price | undefined, tier: string | undefined): Price | undefined {
  if (price === undefined || tier === undefined || price.tier !== undefined) return price; // a tier's price is final
  const own = price.tiers?.[tier];
  const factor = own === undefined ? PRICE_TABLE.serviceTierFactors?.[price.provider]?.[tier] : undefined;
  if (own === undefined && factor === undefined) return price;
  let byTier = made.get(price);
  if (!byTier) made.set(price, (byTier = new Map()));
  let p = byTier.get(tier);
  if (!p) {
    p = own !== undefined ? withRates(price, own, price.longContext) : withRates(price, scaled(price, factor!), price.longContext && { aboveInputTokens: price.longContext.aboveInputTokens, ...scaled(price.longContext, factor!) });
    p.tier = tier;
    byTier.set(tier, p);
  }
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
