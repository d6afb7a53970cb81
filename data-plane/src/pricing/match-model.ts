// Model-name matching rules for the price table: exact name or alias, then documented suffix rules.
import type { ProviderName } from "../providers/types.js";
import { lookupEntry } from "./price-table.js";
import type { PriceEntry } from "./types.js";

/** Suffixes removed (one at a time, in this order) when the exact name is not in the table. */
const SUFFIX_RULES: readonly { re: RegExp; providers?: readonly ProviderName[] }[] = [
  { re: /-\d{4}-\d{2}-\d{2}$/ }, // OpenAI dated snapshot: gpt-4o-2024-11-20
  { re: /-\d{8}$/ }, // Anthropic dated snapshot: claude-sonnet-4-5-20250929
  { re: /-\d{3}$/, providers: ["google"] }, // Gemini stable revision: gemini-2.0-flash-001
  { re: /-latest$/ }, // moving alias: claude-3-5-haiku-latest
];

/** Lower-case, trimmed, without Gemini's "models/" prefix. */
export function normalizeModelName(provider: ProviderName, model: string): string {
  let name = model.trim().toLowerCase();
  if (provider === "google" && name.startsWith("models/")) name = name.slice("models/".length);
  return name;
}

/** The entry a model name matches on `day` (YYYY-MM-DD, UTC: prices with a period apply on their days). */
export function matchEntry(provider: ProviderName, model: string, day: string): PriceEntry | undefined {
  const name = normalizeModelName(provider, model);
  if (name === "") return undefined;
  const exact = lookupEntry(provider, name, day);
  if (exact) return exact;
  for (const rule of SUFFIX_RULES) {
    if (rule.providers && !rule.providers.includes(provider)) continue;
    if (!rule.re.test(name)) continue;
    const found = lookupEntry(provider, name.replace(rule.re, ""), day);
    if (found) return found;
  }
  return undefined;
}
