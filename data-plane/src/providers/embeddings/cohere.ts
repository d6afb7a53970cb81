// Cohere embeddings (API v2): POST /v2/embed, the cohere-ai SDK's `client.v2.embed`.
//
// Request: `texts` (strings), or `inputs[].content[]` parts of type `text` (`text`) and `image_url`
// (`image_url.url`), or `images` (data URIs); `model`, `input_type`, `embedding_types`, `truncate`,
// `max_tokens` (a cap on each input's tokens, not an output maximum), `output_dimension`. The texts are
// the prompt; images are not text (no text policy reads them, as in chat requests).
// Answer: `{id, embeddings: {float | int8 | uint8 | binary | ubinary | base64: […]}, texts?, images?,
// meta: {billed_units: {input_tokens, image_tokens?, images?}, tokens?}, response_type}`; errors are
// `{id, message}` as on the chat path.
import { asArray, asCount, asString, isObject } from "../json.js";
import { normalizeSearch, normalizeSubPath } from "../paths.js";
import { slot, type TextSlot } from "../text-slots.js";
import type { ProviderAdapter, ResponseFacts, UpstreamTarget } from "../types.js";
import { embeddingsAdapter, inputUsage } from "./common.js";

export const EMBED_PATH = "/v2/embed";

/** Each string of `texts`, then each text part of `inputs[].content` (a request uses one or the other), in order. */
export function cohereEmbedInputSlots(body: unknown): TextSlot[] {
  if (!isObject(body)) return [];
  const slots: TextSlot[] = [];
  const texts = body.texts;
  if (Array.isArray(texts)) for (let i = 0; i < texts.length; i++) if (typeof texts[i] === "string") slots.push(slot(texts, i));
  for (const input of asArray(body.inputs)) {
    if (!isObject(input)) continue;
    for (const part of asArray(input.content)) if (isObject(part) && part.type === "text" && typeof part.text === "string") slots.push(slot(part, "text"));
  }
  return slots;
}

function resolve(subPath: string, search: string, body: unknown, self: ProviderAdapter): UpstreamTarget | null {
  if (normalizeSubPath(subPath) !== EMBED_PATH) return null;
  const model = isObject(body) ? (asString(body.model) ?? "") : "";
  return { path: `${EMBED_PATH}${normalizeSearch(search)}`, model, stream: false, adapter: self };
}

/**
 * Billed input: `meta.billed_units.input_tokens` plus its `image_tokens` (Embed v4 bills images in tokens;
 * they are priced at the model's text rate, the table having no image rate), falling back to
 * `meta.tokens.input_tokens` when no billed units came. Embed v3's per-image count (`billed_units.images`)
 * is no token count and is not priced. The answer names no model.
 */
export function parseCohereEmbed(json: unknown): ResponseFacts {
  const facts: ResponseFacts = { completionText: "", toolCalls: [] };
  if (!isObject(json)) return facts;
  const meta = isObject(json.meta) ? json.meta : undefined;
  if (meta) {
    const billed = isObject(meta.billed_units) ? meta.billed_units : undefined;
    const tokens = isObject(meta.tokens) ? meta.tokens : undefined;
    if (billed && (billed.input_tokens !== undefined || billed.image_tokens !== undefined)) facts.usage = inputUsage(asCount(billed.input_tokens) + asCount(billed.image_tokens));
    else if (tokens && tokens.input_tokens !== undefined) facts.usage = inputUsage(asCount(tokens.input_tokens));
  }
  if (typeof json.message === "string" && json.embeddings === undefined) facts.errorMessage = json.message; // error bodies are {id, message}
  return facts;
}

/** The /v2/embed adapter of Cohere, from its chat adapter. */
export function cohereEmbeddingsAdapter(chat: ProviderAdapter): ProviderAdapter {
  return embeddingsAdapter(chat, { resolve, inputSlots: cohereEmbedInputSlots, parseResponse: parseCohereEmbed });
}
