// What a call costs its agent's daily budget. A priced call: its trace's cost. A call to a model the
// price table does not know: its trace says cost 0 with `price_missing` (DESIGN.md §7), but charging
// the budget 0 let every such call pass any budget (audit, session 17: ten gpt-4-0613 calls spent a $1
// budget's $7.20 without one refusal). It is charged at the provider's ceiling instead: the highest
// input-side and output rates of that provider's models in the table (cache writes and long-context
// rates included), applied to every input and output token the provider reported. The sidecar settles
// and restores budgets with `budgetCharge`; the control plane's spend figure sums the same amounts in
// SQL from `ceilingMicroRates` (stores/clickhouse/trace-stats.ts), in the same integer units, so the
// two agree to the 1e-10 USD.
import type { Usage } from "../providers/types.js";
import { computeCost } from "./compute-cost.js";
import { PRICE_TABLE } from "./price-table.js";
import type { Price, PriceRates } from "./types.js";

const ceilings = new Map<string, Price | null>();

/**
 * The provider's ceiling as a Price: `input` the highest of every input-side rate (input, cached input,
 * cache writes, long-context and service-tier ones) of its models, `output` the highest output rate; no separate cached
 * or cache-write rates, so every input token is billed at `input`. Undefined for a provider without
 * table entries.
 */
export function ceilingPrice(provider: string): Price | undefined {
  let p = ceilings.get(provider);
  if (p === undefined) {
    p = null;
    for (const e of PRICE_TABLE.models) {
      if (e.provider !== provider) continue;
      // Every rate the model can be billed at: base, long-context and its tiers' (a provider's tier and
      // region factors scale them: only a factor above 1 can raise the ceiling).
      const tiers = Object.values(e.tiers ?? {}).filter((r) => r !== undefined);
      const all: PriceRates[] = [e, ...(e.longContext ? [e.longContext] : []), ...tiers, ...tiers.flatMap((r) => (r.longContext ? [r.longContext] : []))];
      const up = Math.max(1, ...Object.values(PRICE_TABLE.serviceTierFactors?.[e.provider] ?? {})) * Math.max(1, ...Object.values(PRICE_TABLE.regionFactors?.[e.provider] ?? {}));
      const input = up * Math.max(...all.map((r) => Math.max(r.input, r.cachedInput ?? 0, r.cacheWrite ?? 0, r.cacheWriteLong ?? 0)));
      const output = up * Math.max(...all.map((r) => r.output));
      p ??= { provider: e.provider, model: "(highest rates in the table)", input, output, version: PRICE_TABLE.version };
      p.input = Math.max(p.input, input);
      p.output = Math.max(p.output, output);
    }
    ceilings.set(provider, p);
  }
  return p ?? undefined;
}

/** A trace's fields that decide its budget charge (the Trace message and the sidecar's draft both have them). */
export interface ChargedCall {
  provider: string;
  costUsd: number;
  priceMissing: boolean;
  inputTokens: number;
  outputTokens: number;
}

/** USD the call takes from its agent's daily budget (see the file comment). */
export function budgetCharge(call: ChargedCall): number {
  if (!call.priceMissing) return call.costUsd;
  if (call.inputTokens <= 0 && call.outputTokens <= 0) return 0;
  const usage: Usage = { inputTokens: call.inputTokens, outputTokens: call.outputTokens, cachedInputTokens: 0, cacheWriteTokens: 0 };
  return computeCost(ceilingPrice(call.provider), usage).totalCost;
}

/**
 * Every provider's ceiling in micro-USD per million tokens (integers: table rates have at most 6
 * decimals), for the control plane's spend SQL: a call's charge in 1e-10 USD units is
 * round_half_up((input_tokens·input + output_tokens·output) / 100), as computeCost rounds picodollars.
 */
export function ceilingMicroRates(): { provider: string; input: number; output: number }[] {
  const providers = [...new Set(PRICE_TABLE.models.map((e) => e.provider))].sort();
  return providers.map((provider) => {
    const p = ceilingPrice(provider)!;
    return { provider, input: Math.round(p.input * 1e6), output: Math.round(p.output * 1e6) };
  });
}
