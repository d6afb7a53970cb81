// OpenAI adapter: POST /v1/chat/completions, Bearer auth, SSE `data:` chunks ending with `data: [DONE]`;
// POST /v1/responses resolves to the Responses API's adapter (openai-responses.ts), POST /v1/embeddings to
// the embeddings adapter (embeddings/openai-style.ts).
import {
  ChatCompletionsObserver,
  chatAskStreamUsage,
  chatAfterRedaction,
  chatQuotedText,
  chatAnswerToolSlots,
  chatAsksForSpeech,
  chatCompletionGroups,
  chatInputExtrasText,
  chatInputExtraSlots,
  chatPromptSlots,
  chatSystemSlots,
  changedSignedDetails,
  chatReasoningGroups,
  chatSpokenText,
  parseChatResponse,
  resolveChatCompletions,
  restoreSignedDetails,
} from "./chat-completions.js";
import { openAiStyleEmbeddingsAdapter } from "./embeddings/openai-style.js";
import { resolveResponses } from "./openai-responses.js";
import { mapGroups, mapSlots, readSlots } from "./text-slots.js";
import { normalizeSubPath } from "./paths.js";
import type { ErrorEventOptions, ProviderAdapter } from "./types.js";

/**
 * Usage: prompt_tokens already includes prompt_tokens_details.cached_tokens (and cache_write_tokens), so
 * Usage.inputTokens = prompt_tokens; completion_tokens includes reasoning tokens. Streams carry usage
 * only when the request set stream_options.include_usage (a last chunk with `choices: []`).
 */
export const openaiAdapter: ProviderAdapter = {
  name: "openai",
  wire: "openai",
  defaultBaseUrl: "https://api.openai.com",
  authHeaders: ["authorization"],
  // The chat path, or the Responses API or embeddings (their targets carry their adapters; tried after
  // chat, so a chat call does no more work than before).
  resolve: (subPath, search, body) => resolveChatCompletions(subPath, search, body) ?? resolveResponses(withV1(subPath), search, body) ?? openaiEmbeddingsAdapter.resolve(withV1(subPath), search, body),
  inputExtrasText: chatInputExtrasText,
  inputExtraSlots: chatInputExtraSlots,
  promptParts: (body) => readSlots(body, chatPromptSlots),
  promptText: (body) => readSlots(body, chatPromptSlots).join("\n\n"),
  systemText: (body) => readSlots(body, chatSystemSlots).join("\n\n"),
  mapPromptText: (body, fn) => mapSlots(body, chatPromptSlots, fn),
  parseResponse: parseChatResponse,
  mapCompletionText: (json, fn) => mapGroups(json, chatCompletionGroups, fn),
  mapReasoningText: (json, fn) => mapGroups(json, chatReasoningGroups, fn),
  afterRedaction: chatAfterRedaction,
  quotedText: chatQuotedText,
  answerToolSlots: chatAnswerToolSlots,
  changedSignedReasoning: changedSignedDetails,
  restoreSignedReasoning: restoreSignedDetails,
  asksForSpeech: chatAsksForSpeech,
  spokenText: chatSpokenText,
  askStreamUsage: chatAskStreamUsage,
  streamObserver: () => new ChatCompletionsObserver(),
  errorEvent(message: string, code: string, options?: ErrorEventOptions): string {
    // The openai SDK throws APIError for any data chunk carrying an `error` object.
    const error = { message, type: code, param: null, code, ...(options?.details ?? {}) };
    return `data: ${JSON.stringify({ error })}\n\n`;
  },
};

/**
 * An SDK whose base URL lacks OpenAI's /v1 (…/v1/proxy/openai, where the spec's chat path lives) calls
 * /responses and /embeddings: they are the same endpoints (upstream, /v1/responses and /v1/embeddings).
 */
function withV1(subPath: string): string {
  const p = normalizeSubPath(subPath);
  return p === "/responses" || p === "/embeddings" ? `/v1${p}` : subPath;
}

/** POST /v1/embeddings (embeddings/openai-style.ts). */
export const openaiEmbeddingsAdapter: ProviderAdapter = openAiStyleEmbeddingsAdapter(openaiAdapter);
