// priceFor(): the table price of a provider's model (exact, alias or documented pattern), or undefined.
import { isProviderName } from "../providers/registry.js";
import { matchEntry } from "./match-model.js";
import { PRICE_TABLE, utcDay } from "./price-table.js";
import type { Price } from "./types.js";

/** The price of a model on the UTC day of `at` (default: now). */
export function priceFor(provider: string, model: string, at: number = Date.now()): Price | undefined {
  if (!isProviderName(provider)) return undefined;
  const entry = matchEntry(provider, model, utcDay(at));
  if (!entry) return undefined;
  const price: Price = { provider, model: entry.model, input: entry.input, output: entry.output, version: PRICE_TABLE.version };
  if (entry.cachedInput !== undefined) price.cachedInput = entry.cachedInput;
  if (entry.cacheWrite !== undefined) price.cacheWrite = entry.cacheWrite;
  if (entry.cacheWriteLong !== undefined) price.cacheWriteLong = entry.cacheWriteLong;
  if (entry.longContext) price.longContext = { ...entry.longContext };
  if (entry.tiers) price.tiers = structuredClone(entry.tiers);
  if (entry.validUntil !== undefined) price.validUntil = entry.validUntil;
  return price;
}
