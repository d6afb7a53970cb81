// Embeddings of the OpenAI wire shape, shared by OpenAI and Mistral: POST /v1/embeddings (the openai
// SDK's `client.embeddings.create`, the Mistral SDK's `client.embeddings.create`).
//
// Request: `{model, input: string | string[], encoding_format?, dimensions?}` (Mistral: `output_dimension`,
// `output_dtype`); the input strings are the prompt. OpenAI also accepts token arrays (`input` as
// integers, or arrays of them): refused (400), since no text policy can judge tokens and the sidecar
// cannot turn them back into text for every model's tokenizer; the agent sends the text instead.
// Answer: `{object: "list", data: [{object: "embedding", index, embedding}], model, usage: {prompt_tokens,
// total_tokens}}` (`embedding` a float array, or base64 with `encoding_format: "base64"`, which the openai
// SDK asks for by default); error bodies as on the chat path.
import { chatErrorMessage } from "../chat-completions.js";
import { ProviderRequestError } from "../errors.js";
import { asString, hasNumber, isObject } from "../json.js";
import { normalizeSearch, normalizeSubPath } from "../paths.js";
import { slot, type TextSlot } from "../text-slots.js";
import type { ProviderAdapter, ResponseFacts, UpstreamTarget } from "../types.js";
import { embeddingsAdapter, inputUsage } from "./common.js";

export const EMBEDDINGS_PATH = "/v1/embeddings";

/** `input` as a string, or each string of an array of them, in order. */
export function openAiStyleInputSlots(body: unknown): TextSlot[] {
  if (!isObject(body)) return [];
  const input = body.input;
  if (typeof input === "string") return [slot(body, "input")];
  const slots: TextSlot[] = [];
  if (Array.isArray(input)) for (let i = 0; i < input.length; i++) if (typeof input[i] === "string") slots.push(slot(input, i));
  return slots;
}

/**
 * POST /v1/embeddings. An `input` that is neither a string nor an array of strings (token arrays) is
 * refused: the policies judge text, and tokens would pass them unread.
 */
function resolve(subPath: string, search: string, body: unknown, self: ProviderAdapter): UpstreamTarget | null {
  if (normalizeSubPath(subPath) !== EMBEDDINGS_PATH) return null;
  const input = isObject(body) ? body.input : undefined;
  if (input !== undefined && typeof input !== "string" && !(Array.isArray(input) && input.every((x) => typeof x === "string"))) {
    throw new ProviderRequestError(
      "invalid_body",
      `${self.name}: embeddings \`input\` must be a string or an array of strings; token arrays cannot be judged by the sidecar's text policies (PII, keywords, regex, injection): send the text`,
    );
  }
  const model = isObject(body) ? (asString(body.model) ?? "") : "";
  return { path: `${EMBEDDINGS_PATH}${normalizeSearch(search)}`, model, stream: false, adapter: self };
}

/** usage.prompt_tokens (total_tokens when absent) is the input billed; the answer's `model` is the model that answered. */
export function parseOpenAiStyleEmbeddings(json: unknown): ResponseFacts {
  const facts: ResponseFacts = { completionText: "", toolCalls: [] };
  if (!isObject(json)) return facts;
  if (isObject(json.usage)) {
    const u = json.usage;
    const input = hasNumber(u.prompt_tokens) ? u.prompt_tokens : u.total_tokens;
    facts.usage = inputUsage(hasNumber(input) && input > 0 ? input : 0);
  }
  const model = asString(json.model);
  if (model !== undefined) facts.model = model;
  const error = chatErrorMessage(json);
  if (error !== undefined) facts.errorMessage = error;
  return facts;
}

/** The /v1/embeddings adapter of an OpenAI-style provider (OpenAI, Mistral), from its chat adapter. */
export function openAiStyleEmbeddingsAdapter(chat: ProviderAdapter): ProviderAdapter {
  return embeddingsAdapter(chat, { resolve, inputSlots: openAiStyleInputSlots, parseResponse: parseOpenAiStyleEmbeddings });
}
