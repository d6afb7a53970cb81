// Loads and validates prices.json once; indexes entries by provider and name (model and aliases).
import type { ProviderName } from "../providers/types.js";
import rawTable from "./prices.json" with { type: "json" };
import type { PriceEntry, PriceRates, PriceTable } from "./types.js";

export class PriceTableError extends Error {
  readonly code = "invalid_price_table";
  constructor(message: string) {
    super(message);
    this.name = "PriceTableError";
  }
}

const PROVIDER_NAMES: readonly ProviderName[] = ["openai", "anthropic", "google", "mistral", "cohere"];

/** Rates must be finite, non-negative, with at most 6 decimals (so rate × 1e6 is an integer picodollar/token). */
function checkRate(where: string, value: unknown, optional: boolean): void {
  if (value === undefined && optional) return;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new PriceTableError(`${where}: rate must be a non-negative number`);
  }
  const scaled = value * 1e6;
  if (Math.abs(scaled - Math.round(scaled)) > 1e-6) throw new PriceTableError(`${where}: rate has more than 6 decimals`);
}

function checkRates(where: string, rates: PriceRates): void {
  checkRate(`${where}.input`, rates.input, false);
  checkRate(`${where}.output`, rates.output, false);
  checkRate(`${where}.cachedInput`, rates.cachedInput, true);
  checkRate(`${where}.cacheWrite`, rates.cacheWrite, true);
  checkRate(`${where}.cacheWriteLong`, rates.cacheWriteLong, true);
}

/** Each rate times `factor`, unrounded: checkRates then refuses a product with more than 6 decimals. */
function scaledExactly(rates: PriceRates, factor: number): PriceRates {
  const f = (r: number | undefined) => (r === undefined ? undefined : r * factor);
  return { input: rates.input * factor, output: rates.output * factor, cachedInput: f(rates.cachedInput), cacheWrite: f(rates.cacheWrite), cacheWriteLong: f(rates.cacheWriteLong) };
}

export function validatePriceTable(table: unknown): PriceTable {
  const t = table as PriceTable;
  if (typeof t !== "object" || t === null) throw new PriceTableError("price table must be an object");
  if (typeof t.version !== "string" || t.version === "") throw new PriceTableError("version missing");
  if (typeof t.date !== "string" || !/^\d{4}-\d{2}/.test(t.date)) throw new PriceTableError("date missing");
  for (const p of PROVIDER_NAMES) {
    if (typeof t.source?.[p] !== "string") throw new PriceTableError(`source for ${p} missing`);
  }
  if (!Array.isArray(t.models)) throw new PriceTableError("models must be an array");
  for (const [provider, tiers] of Object.entries(t.serviceTierFactors ?? {})) {
    if (!PROVIDER_NAMES.includes(provider as ProviderName)) throw new PriceTableError(`serviceTierFactors: unknown provider ${provider}`);
    for (const [tier, factor] of Object.entries(tiers ?? {})) {
      if (typeof factor !== "number" || !Number.isFinite(factor) || factor <= 0) throw new PriceTableError(`serviceTierFactors.${provider}.${tier}: factor must be a positive number`);
    }
  }
  const seen = new Set<string>();
  t.models.forEach((entry, i) => {
    const where = `models[${i}] ${entry?.model ?? "?"}`;
    if (!PROVIDER_NAMES.includes(entry.provider)) throw new PriceTableError(`${where}: unknown provider`);
    checkRates(where, entry);
    if (entry.longContext) {
      checkRates(`${where}.longContext`, entry.longContext);
      if (!Number.isInteger(entry.longContext.aboveInputTokens) || entry.longContext.aboveInputTokens <= 0) {
        throw new PriceTableError(`${where}: longContext.aboveInputTokens must be a positive integer`);
      }
    }
    for (const [tier, rates] of Object.entries(entry.tiers ?? {})) {
      if (rates === undefined || typeof rates !== "object") throw new PriceTableError(`${where}.tiers.${tier}: rates missing`);
      checkRates(`${where}.tiers.${tier}`, rates);
    }
    for (const [tier, factor] of Object.entries(t.serviceTierFactors?.[entry.provider] ?? {})) {
      // The tier's rates must stay exact (6 decimals), as every table rate.
      const all = [entry, ...(entry.longContext ? [entry.longContext] : [])];
      for (const r of all) checkRates(`${where} × ${entry.provider} ${tier} factor ${factor}`, scaledExactly(r, factor));
    }
    for (const name of [entry.model, ...(entry.aliases ?? [])]) {
      const key = `${entry.provider}:${name.toLowerCase()}`;
      if (seen.has(key)) throw new PriceTableError(`${where}: duplicate name ${name}`);
      seen.add(key);
    }
  });
  return t;
}

export const PRICE_TABLE: PriceTable = validatePriceTable(rawTable);

/** provider → lower-case name (model or alias) → entry. */
const INDEX: ReadonlyMap<ProviderName, ReadonlyMap<string, PriceEntry>> = (() => {
  const index = new Map<ProviderName, Map<string, PriceEntry>>();
  for (const p of PROVIDER_NAMES) index.set(p, new Map());
  for (const entry of PRICE_TABLE.models) {
    const names = index.get(entry.provider) as Map<string, PriceEntry>;
    for (const name of [entry.model, ...(entry.aliases ?? [])]) names.set(name.toLowerCase(), entry);
  }
  return index;
})();

export function lookupEntry(provider: ProviderName, name: string): PriceEntry | undefined {
  return INDEX.get(provider)?.get(name);
}
