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
 * 6 decimals), summed exactly (in doubles below 2^53, else BigInt), then rounded half-up once to
 * 1e-10 USD; totalCost is the rounded exact sum (so it carries no float noise).
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
  const input = whole(usage.inputTokens);
  const long = price.longContext !== undefined && input > price.longContext.aboveInputTokens;
  const rates: PriceRates = long && price.longContext ? price.longContext : price;
  const cached = Math.min(whole(usage.cachedInputTokens), input);
  const writes = Math.min(whole(usage.cacheWriteTokens), input - cached);
  const longWrites = Math.min(whole(usage.cacheWriteLongTokens ?? 0), writes);
  const shortWrites = writes - longWrites;
  const uncached = input - cached - writes;
  const output = whole(usage.outputTokens);
  const rate = {
    input: pico(rates.input),
    cached: pico(rates.cachedInput ?? rates.input),
    write: pico(rates.cacheWrite ?? rates.input),
    writeLong: pico(rates.cacheWriteLong ?? rates.cacheWrite ?? rates.input),
    output: pico(rates.output),
  };

  // Integer picodollars in doubles while every product and sum stays below 2^53 (exact there: a
  // request would need ~10^8 tokens at $90/M to leave it); BigInt otherwise. BigInt arithmetic cost
  // a few µs and ~1.5 KB of garbage per call, and the proxy prices every request two or three times.
  const cachedPico = cached * rate.cached;
  const writePico = shortWrites * rate.write + longWrites * rate.writeLong;
  const inputPico = uncached * rate.input + cachedPico + writePico;
  const outputPico = output * rate.output;
  const totalPico = inputPico + outputPico;
  const b = Number.isSafeInteger(totalPico) && Number.isSafeInteger(totalPico + 50)
    ? { inputCost: usd(inputPico), outputCost: usd(outputPico), totalCost: usd(totalPico), cachedInputCost: usd(cachedPico), cacheWriteCost: usd(writePico) }
    : exactInBigInt({ uncached, cached, shortWrites, longWrites, output }, rate);
  // Fields copied one by one: `{ ...b, more }` of a freshly built object takes a slow path in V8
  // (~4 µs per call against ~0.04 µs here).
  return {
    inputCost: b.inputCost,
    outputCost: b.outputCost,
    totalCost: b.totalCost,
    cachedInputCost: b.cachedInputCost,
    cacheWriteCost: b.cacheWriteCost,
    pricePerMillionInput: rates.input,
    pricePerMillionOutput: rates.output,
    priceMissing: false,
    longContext: long,
    priceVersion: price.version,
  };
}

/** Token counts as whole numbers (non-finite or negative → 0, fractions truncated). */
function whole(n: number): number {
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

/** USD per million tokens → picodollars per token (exact for rates with ≤ 6 decimals). */
function pico(ratePerMillion: number): number {
  return Math.round(ratePerMillion * 1e6);
}

/** Picodollars (a safe integer) → USD rounded half-up to 1e-10 (100 picodollars), exactly. */
function usd(picodollars: number): number {
  const shifted = picodollars + 50;
  return (shifted - (shifted % 100)) / 100 / 1e10;
}

/** The same arithmetic in BigInt, for products beyond 2^53 picodollars. */
function exactInBigInt(
  n: { uncached: number; cached: number; shortWrites: number; longWrites: number; output: number },
  rate: { input: number; cached: number; write: number; writeLong: number; output: number },
) {
  const b = BigInt;
  const cachedPico = b(n.cached) * b(rate.cached);
  const writePico = b(n.shortWrites) * b(rate.write) + b(n.longWrites) * b(rate.writeLong);
  const inputPico = b(n.uncached) * b(rate.input) + cachedPico + writePico;
  const outputPico = b(n.output) * b(rate.output);
  const usdOf = (p: bigint) => Number((p + 50n) / 100n) / 1e10;
  return { inputCost: usdOf(inputPico), outputCost: usdOf(outputPico), totalCost: usdOf(inputPico + outputPico), cachedInputCost: usdOf(cachedPico), cacheWriteCost: usdOf(writePico) };
}
