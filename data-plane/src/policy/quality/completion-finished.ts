// completion_finished: did the model end its answer normally (stop) rather than being cut off,
// filtered or failing? Finish reasons of every provider are mapped to one scale.

export interface FinishInput {
  completion: string;
  finishReason?: string;
  status: "success" | "error" | "blocked";
}

const NORMAL = new Set(["stop", "end_turn", "stop_sequence", "complete", "completed", "eos", "end", "tool_calls", "tool_use", "function_call", "tool_call"]);
// Cut short before the answer was whole: by a token, context or time limit, or paused to be continued
// (Anthropic `pause_turn` and `model_context_window_exceeded`, Gemini `CONTINUATION`, Cohere `TIMEOUT`).
const TRUNCATED = new Set(["length", "max_tokens", "max_output_tokens", "token_limit", "model_length", "model_context_window_exceeded", "pause_turn", "continuation", "timeout"]);
const FILTERED = new Set([
  "content_filter", "safety", "recitation", "blocklist", "prohibited_content", "spii", "image_safety", "image_prohibited_content", "image_recitation", "refusal", "language",
]);
// Gemini's invalid or runaway tool calls and missing images are failures too.
const FAILED = new Set(["error", "malformed_function_call", "unexpected_tool_call", "too_many_tool_calls", "no_image", "image_other", "other", "cancelled", "canceled"]);

/**
 * 1 normal stop (or tool call); 0.25 truncated by a token limit; 0 content filter, error, blocked or
 * failed request; 0.5 an unknown finish reason. With no finish reason, a successful non-empty
 * completion counts as finished.
 */
export function completionFinished(input: FinishInput): number {
  if (input.status !== "success") return 0;
  const reason = input.finishReason?.trim().toLowerCase();
  if (reason === undefined || reason === "" || reason === "finish_reason_unspecified") return input.completion.trim().length > 0 ? 1 : 0;
  if (NORMAL.has(reason)) return 1;
  if (TRUNCATED.has(reason)) return 0.25;
  if (FILTERED.has(reason) || FAILED.has(reason)) return 0;
  return 0.5;
}
