// Fallback token counter (o200k_base via gpt-tokenizer) for streams that end without provider usage,
// budget reservations near their limit and maxInputTokens conditions.
import { createRequire } from "node:module";

type CountTokens = (text: string, options: { disallowedSpecial: Set<string> }) => number;

/**
 * Text that spells a special token ("<|endoftext|>", "<|im_start|>") is counted as ordinary text, as the
 * provider's tokenizer counts user text: gpt-tokenizer's default throws on it, and prompts and answers
 * are untrusted text (a throw here once lost the request's trace).
 */
const ORDINARY_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * Loaded on first use, not at start: its ranks are ~20 MiB of long-lived heap (223k strings), a third of
 * an idle sidecar's, which every minor GC's page walks and every full GC's marking pay for, while most
 * sidecars never need it (providers report usage; the budget check counts body bytes far from the
 * limit). The first count pays the load (~130 ms, once per process). Synchronous (the package's CommonJS
 * build) because its callers are.
 */
let countTokens: CountTokens | undefined;

/**
 * Number of o200k_base tokens in text. Exact for current OpenAI models; an estimate for the other
 * providers (their tokenizers are not public or not available offline), so callers mark such counts
 * as estimated.
 */
export function estimateTokens(text: string): number {
  if (text.length === 0) return 0;
  countTokens ??= (createRequire(import.meta.url)("gpt-tokenizer/encoding/o200k_base") as { countTokens: CountTokens }).countTokens;
  return countTokens(text, ORDINARY_TEXT);
}
