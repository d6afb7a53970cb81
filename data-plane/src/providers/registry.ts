// The provider registry: names in a fixed order and lookup by the `{provider}` path segment.
import { anthropicAdapter } from "./anthropic.js";
import { cohereAdapter } from "./cohere.js";
import { googleAdapter } from "./google.js";
import { mistralAdapter } from "./mistral.js";
import { openaiAdapter } from "./openai.js";
import type { ProviderAdapter, ProviderName } from "./types.js";

export const PROVIDERS: readonly ProviderName[] = Object.freeze(["openai", "anthropic", "google", "mistral", "cohere"] as const);

const ADAPTERS: ReadonlyMap<string, ProviderAdapter> = new Map<string, ProviderAdapter>([
  ["openai", openaiAdapter],
  ["anthropic", anthropicAdapter],
  ["google", googleAdapter],
  ["mistral", mistralAdapter],
  ["cohere", cohereAdapter],
]);

/** The adapter for a provider name (exact, lower-case), undefined for an unknown provider. */
export function getProvider(name: string): ProviderAdapter | undefined {
  return ADAPTERS.get(name);
}

export function isProviderName(name: string): name is ProviderName {
  return ADAPTERS.has(name);
}
