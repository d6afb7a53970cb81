// Mistral adapter: POST /v1/chat/completions (OpenAI-like), Bearer auth; streams always end with a chunk carrying usage, then `data: [DONE]`.
// POST /v1/embeddings resolves to the embeddings adapter (embeddings/openai-style.ts).
import {
  ChatCompletionsObserver,
  chatAfterRedaction,
  chatQuotedText,
  chatAnswerToolSlots,
  chatCompletionGroups,
  chatInputExtrasText,
  chatInputExtraSlots,
  chatPromptSlots,
  chatSystemSlots,
  changedSignedDetails,
  chatReasoningGroups,
  parseChatResponse,
  resolveChatCompletions,
  restoreSignedDetails,
} from "./chat-completions.js";
import { openAiStyleEmbeddingsAdapter } from "./embeddings/openai-style.js";
import { mapGroups, mapSlots, readSlots } from "./text-slots.js";
import type { ErrorEventOptions, ProviderAdapter } from "./types.js";

/**
 * Usage: prompt_tokens (total input), completion_tokens; prompt_tokens_details.cached_tokens when
 * present. Message content may be a string or an array of chunks; only {type:"text"} chunks are answer
 * text (thinking chunks of reasoning models are reasoning; sent back in the history, input the model
 * reads). Tool calls arrive whole in one delta.
 */
export const mistralAdapter: ProviderAdapter = {
  name: "mistral",
  wire: "mistral",
  defaultBaseUrl: "https://api.mistral.ai",
  authHeaders: ["authorization"],
  resolve: (subPath, search, body) => resolveChatCompletions(subPath, search, body) ?? mistralEmbeddingsAdapter.resolve(subPath, search, body),
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
  streamObserver: () => new ChatCompletionsObserver(),
  errorEvent(message: string, code: string, options?: ErrorEventOptions): string {
    // Mistral's own failure in a stream is a chunk finishing with `finish_reason: "error"`, and so is
    // this event (no [DONE] after it: the sidecar makes up no end marker for a stream it ends). Its SDK
    // yields it (finishReason "error"), where an error object would fail the SDK's chunk schema with a
    // validation error that names neither the message nor the cause. No chunk field carries a message,
    // so it rides beside the choices in Mistral's error object (the SDK drops it; raw clients and the
    // stream observer read it). The chunk's id is the trace id: the stream's own is not known here.
    const details = options?.details ?? {};
    const chunk = {
      id: typeof details.trace_id === "string" ? details.trace_id : "error",
      object: "chat.completion.chunk",
      model: "",
      choices: [{ index: 0, delta: { content: "" }, finish_reason: "error" }],
      error: { object: "error", message, type: code, param: null, code, ...details },
    };
    return `data: ${JSON.stringify(chunk)}\n\n`;
  },
};

/** POST /v1/embeddings (embeddings/openai-style.ts). */
export const mistralEmbeddingsAdapter: ProviderAdapter = openAiStyleEmbeddingsAdapter(mistralAdapter);
