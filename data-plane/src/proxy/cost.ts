// Cost on the hot path: table prices looked up once per (provider, model) and kept, the price of an
// answer (by the model the provider reports when the table knows it, else the requested one), the
// usage a trace records (the provider's, else counted locally and flagged), and the USD header format.
import { ceilingPrice, computeCost, priceFor, regionPrice, tierPrice, type CostBreakdown, type Price } from "../pricing/index.js";
import { estimateTokens, type ResponseFacts, type Usage } from "../providers/index.js";

export const ZERO_USAGE: Readonly<Usage> = Object.freeze({ inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0 });

const MAX_CACHED = 1024;
/** provider → model name as sent → price (null: not in the table). */
const prices = new Map<string, Map<string, Price | null>>();

/**
 * The price a budget reservation uses: the requested model's, else (a name the table does not know) the
 * provider's ceiling (pricing/budget-charge.ts: its highest input-side and output rates, long-context
 * and cache-write rates included), the rates such an answer is charged at when the provider reports no
 * priced model either. The answer is priced by the model the provider reports, which the table may know:
 * a reservation of 0 let parallel calls to an unknown name overspend 21-fold. Undefined for a provider
 * without table entries.
 */
export function reservationPrice(provider: string, price: Price | undefined): Price | undefined {
  return price ?? ceilingPrice(provider);
}

/**
 * The price of the call as requested: the requested service tier's (OpenAI `service_tier` in the body:
 * priority; Anthropic `speed: "fast"`), in the requested region (Anthropic `inference_geo`), when its
 * rates are not below the base ones, else the base price. It prices what is known
 * before an answer (the budget reservation, a stream's input cost at its headers, a prompt billed without
 * an answer); the answer itself is priced at the tier the provider says served it. A tier that would cost
 * less (flex) is not assumed: a reservation must bound the call.
 */
export function requestedPrice(price: Price | undefined, body: unknown): Price | undefined {
  const asked = typeof body === "object" && body !== null ? (body as { service_tier?: unknown; speed?: unknown; inference_geo?: unknown }) : undefined;
  if (asked === undefined || price === undefined) return price;
  const tier = asked.speed === "fast" ? "fast" : asked.service_tier;
  const region = asked.inference_geo;
  if (typeof tier !== "string" && typeof region !== "string") return price;
  const t = regionPrice(tierPrice(price, typeof tier === "string" ? tier : undefined), typeof region === "string" ? region : undefined);
  return t !== undefined && t.input >= price.input && t.output >= price.output ? t : price;
}

/** The end of the UTC day the memo's prices were looked up for (prices with a period change at midnight). */
let memoDayEndsMs = 0;
const DAY_MS = 86_400_000;

/** priceFor() memoised: the price table is immutable for the life of the process; a day's prices are kept until its end. */
export function cachedPrice(provider: string, model: string): Price | undefined {
  if (model === "") return undefined;
  const now = Date.now();
  if (now >= memoDayEndsMs) {
    prices.clear();
    memoDayEndsMs = (Math.floor(now / DAY_MS) + 1) * DAY_MS;
  }
  let byModel = prices.get(provider);
  if (!byModel) prices.set(provider, (byModel = new Map()));
  let p = byModel.get(model);
  if (p === undefined) {
    p = priceFor(provider, model, now) ?? null;
    if (byModel.size >= MAX_CACHED) byModel.clear(); // model names come from clients: keep the memo bounded
    byModel.set(model, p);
  }
  return p ?? undefined;
}

/**
 * The price of an answer: by the model the provider says answered when the table knows it (a dated
 * snapshot of an alias), else by the requested model; at the service tier the provider says served it
 * (tierPrice: priority and flex rates; no tier named, or one the table has no rates for: the base rates),
 * and where it ran the call (regionPrice: Anthropic US-only inference).
 */
export function answerPrice(provider: string, requested: Price | undefined, reportedModel: string | undefined, servedTier?: string, region?: string): Price | undefined {
  const base = reportedModel === undefined || reportedModel === "" ? requested : (cachedPrice(provider, reportedModel) ?? requested);
  return regionPrice(tierPrice(base, servedTier), region);
}

/** Cost of `inputTokens` input tokens alone (the input cost known when a stream's headers leave). */
export function inputCost(price: Price | undefined, inputTokens: number): number {
  return price ? computeCost(price, { ...ZERO_USAGE, inputTokens }).totalCost : 0;
}

export interface SettledUsage {
  usage: Usage;
  /** True when the provider reported no usage and the tokens (or, with partialUsage, the output tokens) were counted locally (o200k). */
  estimated: boolean;
}

/**
 * The usage a trace records: the provider's usage fields when it sent them; else, for an answer that is
 * not a provider error, tokens counted locally from the prompt and the completion (DESIGN.md §8); the
 * input side the provider did report (`partialUsage`) is kept rather than counted.
 */
export function settleUsage(facts: ResponseFacts, promptTokens: () => number, upstreamStatus: number): SettledUsage {
  if (facts.usage) return { usage: facts.usage, estimated: false };
  if (upstreamStatus >= 400) return { usage: ZERO_USAGE, estimated: false };
  const output = estimateTokens(facts.completionText) + (facts.uncountedOutputText ? estimateTokens(facts.uncountedOutputText) : 0);
  // Input the provider reported before the answer was cut is kept as is (cache reads and writes included).
  const input = facts.partialUsage ?? { ...ZERO_USAGE, inputTokens: promptTokens() };
  return { usage: { ...input, outputTokens: output }, estimated: true };
}

/**
 * The usage of a call the provider received but whose answer never came back complete (the client went
 * away first, or no headers came within the timeout): the prompt, counted locally. The provider bills at
 * least that, so the trace and the budget carry it rather than 0.
 */
export function unansweredUsage(promptTokens: () => number): SettledUsage {
  return { usage: { ...ZERO_USAGE, inputTokens: promptTokens() }, estimated: true };
}

export function costOf(price: Price | undefined, usage: Usage): CostBreakdown {
  return computeCost(price, usage);
}

/** USD as a plain decimal string (costs are rounded to 1e-10): "0", "0.00042", "1.5". */
export function formatUsd(usd: number): string {
  if (usd === 0) return "0";
  const s = usd.toFixed(10);
  let end = s.length;
  while (s.charCodeAt(end - 1) === 48 /* 0 */) end--;
  if (s.charCodeAt(end - 1) === 46 /* . */) end--;
  return s.slice(0, end);
}
