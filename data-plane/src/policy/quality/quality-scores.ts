// qualityScores: cheap, deterministic answer-quality signals in [0,1], computed after the response.

import { completionFinished } from "./completion-finished.js";
import { asksForJson, jsonValidityScore } from "./format-validity.js";
import { nonRepetitionScore } from "./non-repetition.js";
import { refusalScore } from "./refusal.js";
import { relevanceScore } from "./relevance.js";
import { words } from "./tokenize.js";

export interface QualityInput {
  prompt: string;
  completion: string;
  /** The provider's finish/stop reason as sent (stop, length, end_turn, MAX_TOKENS, content_filter…). */
  finishReason?: string;
  status: "success" | "error" | "blocked";
  /** The answer's tool/function calls (ResponseFacts.toolCalls); a tool-only answer has no text but is an answer. */
  toolCalls?: readonly { name: string }[];
}

export interface QualityScore {
  scorer: string;
  score: number;
}

export const QUALITY_SCORERS = ["completion_finished", "non_empty", "refusal", "relevance", "non_repetition", "format_validity"] as const;

/**
 * Scores one exchange. Failed or blocked requests get only completion_finished (0): there is no
 * answer to judge. format_validity is present only when the prompt asks for JSON.
 */
export function qualityScores(input: QualityInput): QualityScore[] {
  const finished = completionFinished(input);
  if (input.status !== "success") return [{ scorer: "completion_finished", score: finished }];
  const { prompt, completion } = input;
  const completionWords = words(completion); // tokenised once for relevance and non_repetition
  const hasText = completion.trim().length > 0;
  // A tool-only answer (tool calls, no text: the usual turn of an agent loop) is an answer: non_empty 1,
  // and relevance neutral at 1, as for a prompt with no content word (nothing lexical to compare). Tool
  // names are not scored against the prompt: a correct call (`lookup_customer` for "what does Jane owe?")
  // shares few or no words with it, and a low score would punish the agent for calling a tool.
  const toolOnly = !hasText && input.toolCalls !== undefined && input.toolCalls.length > 0;
  const out: QualityScore[] = [
    { scorer: "completion_finished", score: finished },
    { scorer: "non_empty", score: hasText || toolOnly ? 1 : 0 },
    { scorer: "refusal", score: refusalScore(completion) },
    { scorer: "relevance", score: toolOnly ? 1 : relevanceScore(prompt, completion, completionWords) },
    { scorer: "non_repetition", score: nonRepetitionScore(completion, completionWords) },
  ];
  if (asksForJson(prompt)) out.push({ scorer: "format_validity", score: jsonValidityScore(completion) });
  return out;
}
