// The fakes' embeddings endpoints: OpenAI and Mistral POST /v1/embeddings, Cohere POST /v2/embed, Gemini
// :embedContent / :batchEmbedContents. Vectors are deterministic (fakeVector: the same text gives the same
// vector, so a test can check what the SDK got); usage is the scripted inputTokens, else one token per 4
// characters of each text (at least 1), reported as each provider does (Gemini: none).
import type { FakeContext, FakeReply } from "./reply.js";
import { isRecord, json } from "./reply.js";

type Json = Record<string, unknown>;
const DEFAULT_DIMENSIONS = 8;

/** A deterministic unit-free vector for `text`: values in [-1, 1), 4 decimals, from an FNV-1a hash chain. */
export function fakeVector(text: string, dimensions = DEFAULT_DIMENSIONS): number[] {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  const out: number[] = [];
  for (let d = 0; d < dimensions; d++) {
    h = Math.imul(h ^ (d + 1), 0x01000193) >>> 0;
    out.push(Math.round(((h % 20000) / 10000 - 1) * 10000) / 10000);
  }
  return out;
}

/** A vector as the OpenAI API's `encoding_format: "base64"` sends it: little-endian float32 bytes. */
export function base64Vector(values: readonly number[]): string {
  const bytes = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => bytes.writeFloatLE(v, i * 4));
  return bytes.toString("base64");
}

/** The scripted input tokens, else the texts' length in tokens of 4 characters (at least 1 each). */
function inputTokens(ctx: FakeContext, texts: readonly string[]): number {
  return ctx.script.usage?.inputTokens ?? texts.reduce((n, t) => n + Math.max(1, Math.ceil(t.length / 4)), 0);
}

const dimensionsOf = (v: unknown) => (typeof v === "number" && Number.isInteger(v) && v > 0 ? Math.min(v, 4096) : DEFAULT_DIMENSIONS);

/**
 * OpenAI / Mistral POST /v1/embeddings. `input`: a string, strings, or (OpenAI) token arrays, embedded as
 * their JSON text; `dimensions` (Mistral `output_dimension`); `encoding_format: "base64"`. `refuse(status,
 * message, param)` shapes the provider's native error body.
 */
export function openAiStyleEmbeddingsFake(ctx: FakeContext, headers: Record<string, string>, provider: "openai" | "mistral", refuse: (status: number, message: string, param: string) => FakeReply): FakeReply {
  const body = ctx.body as Json;
  if (typeof body.model !== "string" || body.model === "") return refuse(provider === "openai" ? 400 : 422, provider === "openai" ? "you must provide a model parameter" : "Field required", "model");
  const input = body.input;
  if (input === undefined || (Array.isArray(input) && input.length === 0)) return refuse(provider === "openai" ? 400 : 422, provider === "openai" ? "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference." : "Field required", "input");
  const texts = (Array.isArray(input) && (provider === "mistral" || input.every((x) => typeof x === "string" || Array.isArray(x))) ? input : [input]).map((x) => (typeof x === "string" ? x : JSON.stringify(x)));
  const dimensions = dimensionsOf(provider === "openai" ? body.dimensions : body.output_dimension);
  const base64 = body.encoding_format === "base64";
  const data = texts.map((text, index) => {
    const vector = fakeVector(text, dimensions);
    return { object: "embedding", index, embedding: base64 ? base64Vector(vector) : vector };
  });
  const tokens = inputTokens(ctx, texts);
  const model = ctx.script.model ?? body.model;
  if (provider === "openai") return json(200, headers, { object: "list", data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
  return json(200, headers, { id: ctx.ids.next("", 32), object: "list", data, model, usage: { prompt_tokens: tokens, total_tokens: tokens, completion_tokens: 0 } });
}

/** One Cohere embedding of each requested type (`embedding_types`, default float). */
function cohereEmbeddings(vectors: number[][], types: readonly string[]): Json {
  const out: Json = {};
  for (const type of types) {
    if (type === "float") out.float = vectors;
    else if (type === "int8") out.int8 = vectors.map((v) => v.map((x) => Math.round(x * 127)));
    else if (type === "uint8") out.uint8 = vectors.map((v) => v.map((x) => Math.round((x + 1) * 127.5)));
    else if (type === "binary" || type === "ubinary") out[type] = vectors.map((v) => [v.reduce((bits, x, i) => (i < 8 && x > 0 ? bits | (1 << (7 - i)) : bits), 0) - (type === "binary" ? 128 : 0)]);
    else if (type === "base64") out.base64 = vectors.map((v) => base64Vector(v));
  }
  return out;
}

/**
 * Cohere POST /v2/embed: `texts`, `images` (data URIs) or `inputs[].content[]` (text and image_url parts,
 * one embedding per input); billed_units.input_tokens for the text, images counted in billed_units.images.
 */
export function cohereEmbedFake(ctx: FakeContext, headers: Record<string, string>, refuse: (status: number, message: string) => FakeReply): FakeReply {
  const body = ctx.body as Json;
  if (typeof body.model !== "string") return refuse(400, "invalid request: model must be specified");
  const texts = Array.isArray(body.texts) ? body.texts.filter((x): x is string => typeof x === "string") : [];
  const images = Array.isArray(body.images) ? body.images.filter((x): x is string => typeof x === "string") : [];
  const inputs = Array.isArray(body.inputs) ? body.inputs.filter(isRecord) : [];
  if (texts.length + images.length + inputs.length === 0) return refuse(400, "invalid request: one of texts, images or inputs must be specified");
  if (images.some((i) => !i.startsWith("data:image/"))) return refuse(400, "invalid request: images must be valid data URIs");
  const inputTexts = inputs.map((i) =>
    (Array.isArray(i.content) ? i.content : [])
      .filter(isRecord)
      .map((p) => (p.type === "text" && typeof p.text === "string" ? p.text : ""))
      .join(" "),
  );
  const keys = [...texts, ...images.map((_, i) => `image ${i}`), ...inputTexts];
  const dimensions = dimensionsOf(body.output_dimension);
  const types = Array.isArray(body.embedding_types) && body.embedding_types.length > 0 ? body.embedding_types.filter((x): x is string => typeof x === "string") : ["float"];
  const billed: Json = { input_tokens: inputTokens(ctx, [...texts, ...inputTexts].filter((t) => t !== "")) };
  const imageCount = images.length + inputs.filter((i) => Array.isArray(i.content) && i.content.some((p) => isRecord(p) && p.type === "image_url")).length;
  if (imageCount > 0) billed.images = imageCount;
  const answer: Json = {
    id: `${ctx.ids.next("", 8)}-${ctx.ids.next("", 4)}-4${ctx.ids.next("", 3)}-8${ctx.ids.next("", 3)}-${ctx.ids.next("", 12)}`,
    embeddings: cohereEmbeddings(keys.map((k) => fakeVector(k, dimensions)), types),
    texts: [...texts, ...inputTexts],
    meta: { api_version: { version: "2" }, billed_units: billed },
    response_type: "embeddings_by_type",
  };
  if (imageCount > 0) answer.images = Array.from({ length: imageCount }, () => ({ width: 512, height: 512, format: "png", bit_depth: 8 }));
  return json(200, headers, answer);
}

/** Fields of EmbedContentRequest (camelCase and snake_case, as the JSON mapping accepts both). */
const EMBED_FIELDS = new Set(["model", "content", "taskType", "task_type", "title", "outputDimensionality", "output_dimensionality"]);

/**
 * Gemini :embedContent (`{embedding: {values}}`) and :batchEmbedContents (`{embeddings: [{values}]}`; each
 * request must name the path's model as `models/{model}`). Unknown fields are refused as Gemini does; no
 * usage is reported (the Gemini API reports none for embeddings).
 */
export function googleEmbedFake(ctx: FakeContext, model: string, batch: boolean, refuse: (status: number, message: string) => FakeReply, headers: Record<string, string>): FakeReply {
  const body = ctx.body as Json;
  const one = (request: Json, where: string): number[] | FakeReply => {
    for (const field of Object.keys(request)) if (!EMBED_FIELDS.has(field)) return refuse(400, `Invalid JSON payload received. Unknown name "${field}" at '${where}': Cannot find field.`);
    const content = request.content;
    if (!isRecord(content) || !Array.isArray(content.parts) || content.parts.length === 0) return refuse(400, `* ${where}.content: content is not specified\n`);
    const text = content.parts
      .filter(isRecord)
      .map((p) => (typeof p.text === "string" ? p.text : ""))
      .join("");
    const title = typeof request.title === "string" ? `${request.title}\n` : "";
    return fakeVector(title + text, dimensionsOf(request.outputDimensionality ?? request.output_dimensionality));
  };
  if (!batch) {
    const values = one(body, "EmbedContentRequest");
    return Array.isArray(values) ? json(200, headers, { embedding: { values } }) : values;
  }
  for (const field of Object.keys(body)) if (field !== "requests") return refuse(400, `Invalid JSON payload received. Unknown name "${field}": Cannot find field.`);
  if (!Array.isArray(body.requests) || body.requests.length === 0) return refuse(400, "* BatchEmbedContentsRequest.requests: requests is not specified\n");
  const embeddings: Json[] = [];
  for (const [i, request] of body.requests.entries()) {
    if (!isRecord(request)) return refuse(400, `Invalid value at 'requests[${i}]'`);
    if (request.model !== `models/${model}`) return refuse(400, `* BatchEmbedContentsRequest.requests[${i}].model: the model of every request must be models/${model}\n`);
    const values = one(request, `requests[${i}]`);
    if (!Array.isArray(values)) return values;
    embeddings.push({ values });
  }
  return json(200, headers, { embeddings });
}
