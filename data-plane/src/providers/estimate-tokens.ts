// Fallback token counter (o200k_base via gpt-tokenizer) for streams that end without provider usage.
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";

/**
 * Text that spells a special token ("<|endoftext|>", "<|im_start|>") is counted as ordinary text, as the
 * provider's tokenizer counts user text: gpt-tokenizer's default throws on it, and prompts and answers
 * are untrusted text (a throw here once lost the request's trace).
 */
const ORDINARY_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * Number of o200k_base tokens in text. Exact for current OpenAI models; an estimate for the other
 * providers (their tokenizers are not public or not available offline), so callers mark such counts
 * as estimated.
 */
export function estimateTokens(text: string): number {
  if (text.length === 0) return 0;
  return countTokens(text, ORDINARY_TEXT);
}
