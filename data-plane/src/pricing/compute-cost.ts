// Cost of one request from a price and normalised usage, in exact integer arithmetic.
import type { Usage } from "../providers/types.js";
import { PRICE_TABLE } from "./price-table.js";
import type { CostBreakdown, Price, PriceRates } from "./types.js";

/**
 * Arithmetic (documented contract):
 *   uncached   = inputTokens − cachedInputTokens − cacheWriteTokens   (never below 0)
 *   longWrites = min(cacheWriteLongTokens, cacheWriteTokens); shortWrites = cacheWriteTokens − longWrites
 *   inputCost  = (uncached·input + cached·cachedInput + shortWrites·cacheWrite + longWrites·cacheWriteLong) / 1e6
 *   outputCost = outputTokens·output / 1e6
 * Cached and written tokens are billed only at their own rate, never also at the full input rate; an
 * absent rate falls back to `input`. When the price has longContext and inputTokens > aboveInputTokens,
 * the long-context rates replace all base rates for the whole request.
 * Every product is computed in integer picodollars (rate·1e6 per token, exact because rates have at most
 * 6 decimals) with BigInt, summed exactly, then rounded half-up once to 1e-10 USD; totalCost is the
 * rounded exact sum (so it carries no float noise).
 */
export function computeCost(price: Price | undefined, usage: Usage): CostBreakdown {
  if (!price) {
    return {
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
    };
  }
  const input = count(usage.inputTokens);
  const long = price.longContext !== undefined && input > BigInt(price.longContext.aboveInputTokens);
  const rates: PriceRates = long && price.longContext ? price.longContext : price;
  const cached = min(count(usage.cachedInputTokens), input);
  const writes = min(count(usage.cacheWriteTokens), input - cached);
  const longWrites = min(count(usage.cacheWriteLongTokens ?? 0), writes);
  const shortWrites = writes - longWrites;
  const uncached = input - cached - writes;

  const cachedPico = cached * pico(rates.cachedInput ?? rates.input);
  const writePico = shortWrites * pico(rates.cacheWrite ?? rates.input) + longWrites * pico(rates.cacheWriteLong ?? rates.cacheWrite ?? rates.input);
  const inputPico = uncached * pico(rates.input) + cachedPico + writePico;
  const outputPico = count(usage.outputTokens) * pico(rates.output);

  return {
    inputCost: usd(inputPico),
    outputCost: usd(outputPico),
    totalCost: usd(inputPico + outputPico),
    cachedInputCost: usd(cachedPico),
    cacheWriteCost: usd(writePico),
    pricePerMillionInput: rates.input,
    pricePerMillionOutput: rates.output,
    priceMissing: false,
    longContext: long,
    priceVersion: price.version,
  };
}

/** Token counts as BigInt (non-finite or negative → 0, fractions truncated). */
function count(n: number): bigint {
  return Number.isFinite(n) && n > 0 ? BigInt(Math.floor(n)) : 0n;
}

function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

/** USD per million tokens → picodollars per token (exact for rates with ≤ 6 decimals). */
function pico(ratePerMillion: number): bigint {
  return BigInt(Math.round(ratePerMillion * 1e6));
}

/** Picodollars → USD rounded half-up to 1e-10 (100 picodollars). */
function usd(picodollars: bigint): number {
  return Number((picodollars + 50n) / 100n) / 1e10;
}
