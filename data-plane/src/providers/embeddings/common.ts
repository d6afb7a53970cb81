// What the embeddings adapters share: an embeddings answer is a JSON body of vectors (never an SSE
// stream), with no text for outbound policies to read or rewrite and no tool calls; its input texts are
// the prompt (PII, keywords, regex and injection score judge them; an inbound redaction rewrites exactly
// those strings before they leave). Each adapter is its provider's (name, base URL, credential, prices).
import { cloneJson } from "../json.js";
import { mapSlots, readSlots, type SlotCollector } from "../text-slots.js";
import type { ProviderAdapter, ResponseFacts, UpstreamTarget, Usage } from "../types.js";

/** What an embeddings wire shape defines; the rest of its adapter comes from its provider's chat adapter. */
export interface EmbeddingsShape {
  /** The target of a governed embeddings path (its `adapter` set to `self`), else null; throws ProviderRequestError for a body it cannot govern. */
  resolve(subPath: string, search: string, body: unknown, self: ProviderAdapter): UpstreamTarget | null;
  /** The input texts, in request order (empty ones are left out by readSlots/mapSlots). */
  inputSlots: SlotCollector;
  /** Usage, model and provider error of a JSON answer; completionText is "" and there are no tool calls. */
  parseResponse(json: unknown): ResponseFacts;
}

/** The answer as it came (a copy): it carries no text parts, so outbound redaction has nothing to rewrite. */
const unchanged = (json: unknown): unknown => cloneJson(json);

/** Input-only usage: embeddings bill their input tokens, nothing else. */
export function inputUsage(inputTokens: number): Usage {
  return { inputTokens, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0 };
}

/**
 * The embeddings adapter of `chat`'s provider. `wire` is the chat API's: a wire format only chooses how a
 * stream is governed (policy/stream), and an embeddings answer is never a stream; `streamObserver` and
 * `errorEvent` are the provider's too (the contract needs them; a JSON answer never uses them).
 * `answersWithText: false`: no quality scores, no output tokens reserved (handler.ts).
 */
export function embeddingsAdapter(chat: ProviderAdapter, shape: EmbeddingsShape): ProviderAdapter {
  const adapter: ProviderAdapter = {
    name: chat.name,
    wire: chat.wire,
    defaultBaseUrl: chat.defaultBaseUrl,
    authHeaders: chat.authHeaders,
    answersWithText: false,
    resolve: (subPath, search, body) => shape.resolve(subPath, search, body, adapter),
    promptParts: (body) => readSlots(body, shape.inputSlots),
    promptText: (body) => readSlots(body, shape.inputSlots).join("\n\n"),
    // No system part: every input text is a document or a query.
    systemText: () => "",
    mapPromptText: (body, fn) => mapSlots(body, shape.inputSlots, fn),
    parseResponse: shape.parseResponse,
    mapCompletionText: unchanged,
    mapReasoningText: unchanged,
    streamObserver: () => chat.streamObserver(),
    errorEvent: (message, code, options) => chat.errorEvent(message, code, options),
  };
  return adapter;
}
