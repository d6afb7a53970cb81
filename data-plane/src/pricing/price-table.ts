// Loads and validates prices.json once; indexes entries by provider and name (model and aliases).
import type { ProviderName } from "../providers/types.js";
import rawTable from "./prices.json" with { type: "json" };
import type { LongContextRates, PriceEntry, PriceRates, PriceTable } from "./types.js";

export class PriceTableError extends Error {
  readonly code = "invalid_price_table";
  constructor(message: string) {
    super(message);
    this.name = "PriceTableError";
  }
}

const PROVIDER_NAMES: readonly ProviderName[] = ["openai", "anthropic", "google", "mistral", "cohere"];
const DAY = /^\d{4}-\d{2}-\d{2}$/;

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

function checkLongContext(where: string, rates: LongContextRates): void {
  checkRates(`${where}.longContext`, rates);
  if (!Number.isInteger(rates.aboveInputTokens) || rates.aboveInputTokens <= 0) {
    throw new PriceTableError(`${where}: longContext.aboveInputTokens must be a positive integer`);
  }
}

/** provider → name → factor: known providers, positive finite factors. */
function checkFactors(field: string, factors: Partial<Record<ProviderName, Record<string, number>>> | undefined): void {
  for (const [provider, byName] of Object.entries(factors ?? {})) {
    if (!PROVIDER_NAMES.includes(provider as ProviderName)) throw new PriceTableError(`${field}: unknown provider ${provider}`);
    for (const [name, factor] of Object.entries(byName ?? {})) {
      if (typeof factor !== "number" || !Number.isFinite(factor) || factor <= 0) throw new PriceTableError(`${field}.${provider}.${name}: factor must be a positive number`);
    }
  }
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
  for (const [provider, aliases] of Object.entries(t.serviceTierAliases ?? {})) {
    if (!PROVIDER_NAMES.includes(provider as ProviderName)) throw new PriceTableError(`serviceTierAliases: unknown provider ${provider}`);
    for (const [alias, tier] of Object.entries(aliases ?? {})) {
      if (typeof tier !== "string" || tier === "") throw new PriceTableError(`serviceTierAliases.${provider}.${alias}: must name a tier`);
    }
  }
  checkFactors("regionFactors", t.regionFactors);
  checkFactors("serviceTierFactors", t.serviceTierFactors);
  const seen = new Map<string, { from: string; until: string }[]>();
  t.models.forEach((entry, i) => {
    const where = `models[${i}] ${entry?.model ?? "?"}`;
    if (!PROVIDER_NAMES.includes(entry.provider)) throw new PriceTableError(`${where}: unknown provider`);
    checkRates(where, entry);
    if (entry.longContext) checkLongContext(where, entry.longContext);
    for (const [tier, rates] of Object.entries(entry.tiers ?? {})) {
      if (rates === undefined || typeof rates !== "object") throw new PriceTableError(`${where}.tiers.${tier}: rates missing`);
      checkRates(`${where}.tiers.${tier}`, rates);
      if (rates.longContext) checkLongContext(`${where}.tiers.${tier}`, rates.longContext);
    }
    // Rates scaled by a factor must stay exact (6 decimals), as every table rate: a tier factor scales the
    // base rates; a region factor scales any of them, a tier's own or factor-scaled ones too.
    const base = [entry, ...(entry.longContext ? [entry.longContext] : [])];
    const tierFactors = Object.entries(t.serviceTierFactors?.[entry.provider] ?? {});
    const tierRates = Object.values(entry.tiers ?? {}).flatMap((r) => (r === undefined ? [] : [r, ...(r.longContext ? [r.longContext] : [])]));
    for (const [tier, factor] of tierFactors) {
      for (const r of base) checkRates(`${where} × ${entry.provider} ${tier} factor ${factor}`, scaledExactly(r, factor));
    }
    for (const [region, factor] of Object.entries(t.regionFactors?.[entry.provider] ?? {})) {
      const all = [...base, ...tierRates, ...tierFactors.flatMap(([, f]) => base.map((r) => scaledExactly(r, f)))];
      for (const r of all) checkRates(`${where} × ${entry.provider} region ${region} factor ${factor}`, scaledExactly(r, factor));
    }
    for (const bound of [entry.validFrom, entry.validUntil]) {
      if (bound !== undefined && (typeof bound !== "string" || !DAY.test(bound) || Number.isNaN(Date.parse(`${bound}T00:00:00Z`)))) {
        throw new PriceTableError(`${where}: validFrom/validUntil must be a day (YYYY-MM-DD)`);
      }
    }
    if (entry.validFrom !== undefined && entry.validUntil !== undefined && entry.validFrom > entry.validUntil) throw new PriceTableError(`${where}: validFrom after validUntil`);
    for (const name of [entry.model, ...(entry.aliases ?? [])]) {
      // A name may come back only for days the entries before it do not cover.
      const key = `${entry.provider}:${name.toLowerCase()}`;
      const periods = seen.get(key) ?? [];
      const from = entry.validFrom ?? "0000-00-00";
      const until = entry.validUntil ?? "9999-99-99";
      if (periods.some((p) => from <= p.until && p.from <= until)) throw new PriceTableError(`${where}: duplicate name ${name} (periods overlap)`);
      periods.push({ from, until });
      seen.set(key, periods);
    }
  });
  return t;
}

export const PRICE_TABLE: PriceTable = validatePriceTable(rawTable);

/** provider → lower-case name (model or alias) → its entries (one per price period). */
const INDEX: ReadonlyMap<ProviderName, ReadonlyMap<string, PriceEntry[]>> = (() => {
  const index = new Map<ProviderName, Map<string, PriceEntry[]>>();
  for (const p of PROVIDER_NAMES) index.set(p, new Map());
  for (const entry of PRICE_TABLE.models) {
    const names = index.get(entry.provider) as Map<string, PriceEntry[]>;
    for (const name of [entry.model, ...(entry.aliases ?? [])]) {
      const key = name.toLowerCase();
      names.set(key, [...(names.get(key) ?? []), entry]);
    }
  }
  return index;
})();

/** The entry of `name` whose period holds `day` (YYYY-MM-DD, UTC). */
export function lookupEntry(provider: ProviderName, name: string, day: string): PriceEntry | undefined {
  const entries = INDEX.get(provider)?.get(name);
  if (!entries) return undefined;
  for (const e of entries) if ((e.validFrom === undefined || e.validFrom <= day) && (e.validUntil === undefined || day <= e.validUntil)) return e;
  return undefined;
}

/** The UTC day of a time, as the table's periods name days. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
