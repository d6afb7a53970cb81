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
  const out: QualityScore[] = [
    { scorer: "completion_finished", score: finished },
    { scorer: "non_empty", score: completion.trim().length > 0 ? 1 : 0 },
    { scorer: "refusal", score: refusalScore(completion) },
    { scorer: "relevance", score: relevanceScore(prompt, completion, completionWords) },
    { scorer: "non_repetition", score: nonRepetitionScore(completion, completionWords) },
  ];
  if (asksForJson(prompt)) out.push({ scorer: "format_validity", score: jsonValidityScore(completion) });
  return out;
}
