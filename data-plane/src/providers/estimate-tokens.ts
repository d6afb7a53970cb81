// Fallback token counter (o200k_base via gpt-tokenizer) for streams that end without provider usage.
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";

/**
 * Number of o200k_base tokens in text. Exact for current OpenAI models; an estimate for the other
 * providers (their tokenizers are not public or not available offline), so callers mark such counts
 * as estimated.
 */
export function estimateTokens(text: string): number {
  if (text.length === 0) return 0;
  return countTokens(text);
}
