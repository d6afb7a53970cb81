// Gemini embeddings: POST /{v1,v1beta,v1alpha}/models/{model}:embedContent and :batchEmbedContents
// (the @google/genai SDK's `ai.models.embedContent` calls :batchEmbedContents on the Gemini API, one
// request per content).
//
// Request: embedContent `{content: {parts: [{text}]}, taskType?, title?, outputDimensionality?, model?}`;
// batchEmbedContents `{requests: [{model: "models/{model}", content, taskType?, title?, …}]}`. The text
// parts and `title` (embedded with a RETRIEVAL_DOCUMENT text) are the prompt; other parts (inline data,
// file URIs) are not text. Answer: `{embedding: {values}}` / `{embeddings: [{values}]}`; the Gemini API
// reports no usage, so the tokens are counted locally and the trace is marked estimated (as for a chat
// answer without usage), unless a `usageMetadata` (Vertex AI's shape) is present. Errors are
// google.rpc.Status bodies as on the chat path.
import { ProviderRequestError } from "../errors.js";
import { asArray, asCount, asString, isObject } from "../json.js";
import type { JsonObject } from "../json.js";
import { nativeModel, normalizeSearch, normalizeSubPath } from "../paths.js";
import { slot, type TextSlot } from "../text-slots.js";
import type { ProviderAdapter, ResponseFacts, UpstreamTarget } from "../types.js";
import { embeddingsAdapter, inputUsage } from "./common.js";

const EMBED_PATH = /^\/(v1|v1beta|v1alpha)\/models\/([^/:]+):(embedContent|batchEmbedContents)$/;

/** One embed request's text: its `title`, then its content's text parts. */
function requestSlots(request: JsonObject, out: TextSlot[]): void {
  if (typeof request.title === "string") out.push(slot(request, "title"));
  const content = request.content;
  if (!isObject(content)) return;
  for (const part of asArray(content.parts)) if (isObject(part) && typeof part.text === "string") out.push(slot(part, "text"));
}

/** embedContent: the request's text; batchEmbedContents: each request's, in order. */
export function googleEmbedInputSlots(body: unknown): TextSlot[] {
  if (!isObject(body)) return [];
  const slots: TextSlot[] = [];
  if (Array.isArray(body.requests)) {
    for (const request of body.requests) if (isObject(request)) requestSlots(request, slots);
  } else requestSlots(body, slots);
  return slots;
}

const withoutModelsPrefix = (model: string) => (model.startsWith("models/") ? model.slice("models/".length) : model);

/**
 * A governed embeddings path. The model segment is decoded and checked as on the chat paths (paths.ts
 * nativeModel: one that decodes to a path or does not decode is not governed, 404) and sent re-encoded. A
 * batch request naming another model than the path's is refused (400): the policies, the price and the
 * trace go by the path's model.
 */
function resolve(subPath: string, search: string, body: unknown, self: ProviderAdapter): UpstreamTarget | null {
  const match = EMBED_PATH.exec(normalizeSubPath(subPath));
  if (!match) return null;
  const model = nativeModel(match[2] ?? "");
  if (model === undefined) return null;
  const action = match[3];
  if (action === "batchEmbedContents" && isObject(body)) {
    for (const request of asArray(body.requests)) {
      const named = isObject(request) ? asString(request.model) : undefined;
      if (named !== undefined && withoutModelsPrefix(named) !== model) {
        throw new ProviderRequestError("invalid_body", `google: every request of a batch must name the path's model (models/${model}), not ${named}`);
      }
    }
  }
  return { path: `/${match[1]}/models/${encodeURIComponent(model)}:${action}${normalizeSearch(search)}`, model, stream: false, adapter: self };
}

/** Usage only when the answer carries a `usageMetadata` (promptTokenCount, else totalTokenCount). */
export function parseGoogleEmbed(json: unknown): ResponseFacts {
  const facts: ResponseFacts = { completionText: "", toolCalls: [] };
  if (!isObject(json)) return facts;
  const meta = json.usageMetadata;
  if (isObject(meta)) facts.usage = inputUsage(asCount(meta.promptTokenCount !== undefined ? meta.promptTokenCount : meta.totalTokenCount));
  if (json.error !== undefined) facts.errorMessage = isObject(json.error) ? (asString(json.error.message) ?? JSON.stringify(json.error)) : String(json.error);
  return facts;
}

/** The embedContent / batchEmbedContents adapter of Gemini, from its chat adapter. */
export function googleEmbeddingsAdapter(chat: ProviderAdapter): ProviderAdapter {
  return embeddingsAdapter(chat, { resolve, inputSlots: googleEmbedInputSlots, parseResponse: parseGoogleEmbed });
}
