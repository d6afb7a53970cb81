// Types of the price table and of a computed cost.
import type { ProviderName } from "../providers/types.js";

/** USD per 1,000,000 tokens. An absent optional rate falls back to `input`. */
export interface PriceRates {
  input: number;
  output: number;
  /** Prompt-cache reads. */
  cachedInput?: number;
  /** Prompt-cache writes (Anthropic: 5-minute TTL). */
  cacheWrite?: number;
  /** Anthropic 1-hour cache writes. */
  cacheWriteLong?: number;
}

/** The rates that replace the base rates when a request's input tokens exceed aboveInputTokens. */
export interface LongContextRates extends PriceRates {
  aboveInputTokens: number;
}

/** A model's rates for one service tier; its longContext, when the tier has long-context rates. */
export interface TierPriceRates extends PriceRates {
  longContext?: LongContextRates;
}

/** A model's own rates per service tier (OpenAI priority, Anthropic fast, Gemini flex and priority): they replace the base rates. */
export type TierRates = Partial<Record<string, TierPriceRates>>;

/** One model's price as found by priceFor(). */
export interface Price extends PriceRates {
  provider: ProviderName;
  /** Canonical table entry the requested name matched. */
  model: string;
  longContext?: LongContextRates;
  /** The model's own tier rates (tierPrice). */
  tiers?: TierRates;
  /** The service tier these rates are for, when not the base (standard) one. */
  tier?: string;
  /** The region these rates are for, when a region factor applied (Anthropic inference_geo "us"). */
  region?: string;
  /** The last UTC day these rates apply (the table announces a change the day after). */
  validUntil?: string;
  /** Version of the price table the price comes from. */
  version: string;
}

/** One entry of prices.json. */
export interface PriceEntry extends PriceRates {
  provider: ProviderName;
  model: string;
  aliases?: string[];
  longContext?: LongContextRates;
  tiers?: TierRates;
  /**
   * The UTC days (YYYY-MM-DD, both inclusive) the entry's rates apply: a price the provider has announced
   * to change on a date is two entries of the same name, one `validUntil` the day before and one
   * `validFrom` that day. Without them, always.
   */
  validFrom?: string;
  validUntil?: string;
}

export interface PriceTable {
  version: string;
  date: string;
  currency: "USD";
  unit: string;
  source: Record<ProviderName, string>;
  crossCheckedWith?: string;
  notes?: string[];
  matching?: string[];
  /** provider → another name of a tier → the tier's name in `tiers` (OpenAI: fast → priority). */
  serviceTierAliases?: Partial<Record<ProviderName, Record<string, string>>>;
  /** provider → region the provider reports running the call in → factor on every rate (Anthropic inference_geo "us": 1.1). */
  regionFactors?: Partial<Record<ProviderName, Record<string, number>>>;
  /** provider → service tier → factor applied to every rate of a model (OpenAI flex: 0.5). */
  serviceTierFactors?: Partial<Record<ProviderName, Record<string, number>>>;
  models: PriceEntry[];
}

export interface CostBreakdown {
  /** Cost of all input tokens (uncached + cached reads + cache writes), USD, rounded to 1e-10. */
  inputCost: number;
  outputCost: number;
  /** Exact sum of input and output cost, rounded once to 1e-10. */
  totalCost: number;
  /** Part of inputCost spent on cached reads (informative). */
  cachedInputCost: number;
  /** Part of inputCost spent on cache writes (informative). */
  cacheWriteCost: number;
  /** Input/output rates applied (long-context rates when they applied); 0 when the price is missing. */
  pricePerMillionInput: number;
  pricePerMillionOutput: number;
  /** True when the model is not in the table (all costs are 0). */
  priceMissing: boolean;
  /** True when long-context rates applied. */
  longContext: boolean;
  priceVersion: string;
}
