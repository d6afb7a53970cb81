// Google Gemini adapter: POST /v1beta/models/{model}:generateContent and :streamGenerateContent?alt=sse,
// x-goog-api-key auth; the spec path takes `model`/`stream` from the body and removes them before forwarding.
// :embedContent and :batchEmbedContents resolve to the embeddings adapter (embeddings/google.ts).
import { googleEmbeddingsAdapter as embeddingsAdapterOf } from "./embeddings/google.js";
import { ProviderRequestError } from "./errors.js";
import { argumentsText, asArray, asCount, asString, fieldsJson, hasNumber, isObject, tryParseJson } from "./json.js";
import type { JsonObject } from "./json.js";
import { JsonArrayStream } from "./json-array-stream.js";
import { isModelName, nativeModel, normalizeSearch, normalizeSubPath, SPEC_PATH } from "./paths.js";
import { moveQuote, placeByText, placeQuote, quoteText, redactStrings, type QuoteFields } from "./quotes.js";
import { rangeMapper, type RangeMapper } from "./shift-range.js";
import type { OffsetUnit } from "./text-offsets.js";
import { SseParser } from "./sse-parser.js";
import { pushGroup, schemaSlots, type InputExtraGroup } from "./input-extras.js";
import { argumentSlots, base64TextSlot, isTextMime, joinGroups, leafSlots, mapGroups, mapSlots, pushAll, readGroups, readSlots, slot } from "./text-slots.js";
import type { TextSlot } from "./text-slots.js";
import type {
  ErrorEventOptions,
  ProviderAdapter,
  ResponseFacts,
  StreamObserver,
  ToolCallFact,
  UpstreamTarget,
  Usage,
} from "./types.js";

const NATIVE_PATH = /^\/(v1|v1beta|v1alpha)\/(models|tunedModels)\/([^/:]+):(generateContent|streamGenerateContent)$/;

const STATUS_NAMES: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  409: "ABORTED",
  429: "RESOURCE_EXHAUSTED",
  499: "CANCELLED",
  500: "INTERNAL",
  501: "NOT_IMPLEMENTED",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

/** "models/gemini-2.5-flash" → "gemini-2.5-flash". */
export function stripModelsPrefix(model: string): string {
  return model.startsWith("models/") ? model.slice("models/".length) : model;
}

function resolve(subPath: string, search: string, body: unknown): UpstreamTarget | null {
  const p = normalizeSubPath(subPath);
  if (p === SPEC_PATH) {
    const model = isObject(body) ? asString(body.model) : undefined;
    if (model === undefined || stripModelsPrefix(model) === "") {
      throw new ProviderRequestError("missing_model", "google: the request body must name a model in `model`");
    }
    const name = stripModelsPrefix(model);
    if (!isModelName(name)) throw new ProviderRequestError("invalid_body", "google: `model` must name a model (no `/`, `\\` or dot segment)");
    const stream = isObject(body) && body.stream === true;
    const forwarded: JsonObject = { ...(body as JsonObject) };
    delete forwarded.model;
    delete forwarded.stream;
    const params = new URLSearchParams(normalizeSearch(search));
    if (stream) params.set("alt", "sse");
    const query = params.toString();
    const action = stream ? "streamGenerateContent" : "generateContent";
    return {
      path: `/v1beta/models/${encodeURIComponent(name)}:${action}${query ? `?${query}` : ""}`,
      model: name,
      stream,
      body: forwarded,
    };
  }
  const match = NATIVE_PATH.exec(p);
  if (!match) return googleEmbeddingsAdapter.resolve(subPath, search, body);
  const model = nativeModel(match[3] ?? "");
  if (model === undefined) return null;
  // Rebuilt from the decoded name: the provider gets the model the policies judged.
  return {
    path: `/${match[1]}/${match[2]}/${encodeURIComponent(model)}:${match[4]}${normalizeSearch(search)}`,
    model,
    stream: match[4] === "streamGenerateContent",
  };
}

/** Calls fn with part[camel] and part[snake] that are objects: Google's JSON parser takes a field under either name. */
function eachSpelling(part: JsonObject, camel: string, snake: string, fn: (value: JsonObject) => void): void {
  const a = part[camel];
  if (isObject(a)) fn(a);
  const b = part[snake];
  if (isObject(b)) fn(b);
}

/** The text file a Blob (`inlineData`) carries: its base64 `data`, read as text, when its MIME type is text (else none). */
function inlineTextSlot(blob: JsonObject, out: TextSlot[]): void {
  if (typeof blob.data === "string" && blob.data !== "" && isTextMime(blob.mimeType ?? blob.mime_type)) out.push(base64TextSlot(blob, "data"));
}

/**
 * The texts of a part that the model's tools or files carry, in this order: the code the model ran with
 * code execution (`executableCode.code`), its output (`codeExecutionResult.output`), a text file
 * (`inlineData` with a text MIME type, base64: read as its UTF-8 text, base64TextSlot). Each field under
 * its camelCase or snake_case name. In a request they are text the model reads; in an answer, output the
 * client gets (answerToolSlots; in a stream, judged and redacted on their own: policy/stream/formats.ts).
 */
export function hostedPartSlots(part: JsonObject, out: TextSlot[]): void {
  eachSpelling(part, "executableCode", "executable_code", (code) => {
    if (typeof code.code === "string") out.push(slot(code, "code"));
  });
  eachSpelling(part, "codeExecutionResult", "code_execution_result", (result) => {
    if (typeof result.output === "string") out.push(slot(result, "output"));
  });
  eachSpelling(part, "inlineData", "inline_data", (blob) => inlineTextSlot(blob, out));
}

/** Whether a part has a field hostedPartSlots reads (most parts are text: they skip the walk). */
export function mayHostText(part: JsonObject): boolean {
  return (
    part.executableCode !== undefined ||
    part.codeExecutionResult !== undefined ||
    part.inlineData !== undefined ||
    part.executable_code !== undefined ||
    part.code_execution_result !== undefined ||
    part.inline_data !== undefined
  );
}

/** A part's `functionCall` (or `function_call`) objects: the model's calls. */
export function functionCallsOf(part: JsonObject, fn: (call: JsonObject) => void): void {
  eachSpelling(part, "functionCall", "function_call", fn);
}

/**
 * Input text of a Content ({parts:[…]}), part by part: `text`, the string leaves of a `functionCall.args`
 * (the model's earlier call sent back to it), of a `functionResponse.response` (walked in key order,
 * depth first) and the text files of its `parts`, then the part's code, code output and text file
 * (hostedPartSlots); each field under its camelCase or snake_case name. A bare string is accepted as well.
 */
function contentSlots(holder: JsonObject, key: string): TextSlot[] {
  const content = holder[key];
  if (typeof content === "string") return [slot(holder, key)];
  if (!isObject(content)) return [];
  const slots: TextSlot[] = [];
  for (const part of asArray(content.parts)) {
    if (!isObject(part)) continue;
    if (typeof part.text === "string") slots.push(slot(part, "text"));
    functionCallsOf(part, (call) => pushAll(slots, argumentSlots(call, "args")));
    eachSpelling(part, "functionResponse", "function_response", (response) => {
      pushAll(slots, leafSlots(response, "response"));
      for (const p of asArray(response.parts)) if (isObject(p)) eachSpelling(p, "inlineData", "inline_data", (blob) => inlineTextSlot(blob, slots));
    });
    hostedPartSlots(part, slots);
  }
  return slots;
}

function promptSlots(body: unknown): TextSlot[] {
  if (!isObject(body)) return [];
  const systemKey = body.systemInstruction !== undefined ? "systemInstruction" : "system_instruction";
  const slots = contentSlots(body, systemKey);
  const contents = Array.isArray(body.contents) ? body.contents : isObject(body.contents) ? [body.contents] : [];
  contents.forEach((_, i) => {
    pushAll(slots, contentSlots(contents as unknown as JsonObject, String(i)));
  });
  return slots;
}

/** A function declaration's schema fields, each under its camelCase and snake_case name. */
const DECLARATION_SCHEMAS: readonly (readonly [string, string])[] = [
  ["parameters", "parameters"],
  ["parametersJsonSchema", "parameters_json_schema"],
  ["response", "response"],
  ["responseJsonSchema", "response_json_schema"],
];

/** Pushes the texts of the schemas holder names (each spelling present; the same name once). */
function schemaFields(holder: JsonObject, fields: readonly (readonly [string, string])[], out: TextSlot[]): void {
  for (const [camel, snake] of fields) {
    for (const key of camel === snake ? [camel] : [camel, snake]) {
      if (holder[key] !== undefined && holder[key] !== null) pushAll(out, schemaSlots(holder, key));
    }
  }
}

/**
 * Input outside the prompt (input-extras.ts): each function declaration of `tools[].functionDeclarations`
 * (`description`, then the texts of `parameters`, `parametersJsonSchema`, `response`,
 * `responseJsonSchema`), then the response schema of `generationConfig` (`responseSchema`,
 * `responseJsonSchema`); every field under its camelCase and snake_case name, as Google's parser takes both.
 */
function inputExtraSlots(body: unknown): InputExtraGroup[] {
  const groups: InputExtraGroup[] = [];
  if (!isObject(body)) return groups;
  for (const tool of asArray(body.tools)) {
    if (!isObject(tool)) continue;
    for (const list of [tool.functionDeclarations, tool.function_declarations]) {
      for (const declaration of asArray(list)) {
        if (!isObject(declaration)) continue;
        const slots: TextSlot[] = typeof declaration.description === "string" ? [slot(declaration, "description")] : [];
        schemaFields(declaration, DECLARATION_SCHEMAS, slots);
        pushGroup(groups, "tool_definition", slots);
      }
    }
  }
  for (const config of [body.generationConfig, body.generation_config]) {
    if (!isObject(config)) continue;
    const slots: TextSlot[] = [];
    schemaFields(config, [["responseSchema", "response_schema"], ["responseJsonSchema", "response_json_schema"]], slots);
    pushGroup(groups, "response_schema", slots);
  }
  return groups;
}

function sortedCandidates(json: unknown): JsonObject[] {
  if (!isObject(json)) return [];
  return asArray(json.candidates)
    .filter(isObject)
    .map((c, i) => ({ c, i: hasNumber(c.index) ? c.index : i }))
    .sort((a, b) => a.i - b.i)
    .map((x) => x.c);
}

/** One group per candidate: its non-thought text parts, concatenated. */
function completionGroups(json: unknown): TextSlot[][] {
  return sortedCandidates(json).map((candidate) => {
    const content = isObject(candidate.content) ? candidate.content : {};
    return asArray(content.parts)
      .filter(isObject)
      .filter((part) => typeof part.text === "string" && part.thought !== true)
      .map((part) => slot(part, "text"));
  });
}

/** One group per candidate: its thought parts' text (the reasoning summary), concatenated. */
function reasoningGroups(json: unknown): TextSlot[][] {
  return sortedCandidates(json).map((candidate) => {
    const content = isObject(candidate.content) ? candidate.content : {};
    return asArray(content.parts)
      .filter(isObject)
      .filter((part) => typeof part.text === "string" && part.thought === true)
      .map((part) => slot(part, "text"));
  });
}

const SEGMENT: QuoteFields = { start: "startIndex", end: "endIndex", text: "text" };
/** Grounding segments count UTF-8 bytes of their part; the other units are tried when those do not fit. */
const SEGMENT_UNITS: readonly OffsetUnit[] = ["utf8", "utf16", "codepoints"];

/**
 * A recitation citation (`citationMetadata.citationSources[]`; Vertex AI's `citationMetadata.citations[]`):
 * offsets into the candidate's answer text, no text.
 */
export const CITATION_SOURCE: QuoteFields = { start: "startIndex", end: "endIndex", text: "text" };
/** Citation sources count UTF-8 bytes (a range that does not fit them fits no other unit). */
export const CITATION_SOURCE_UNITS: readonly OffsetUnit[] = ["utf8"];

/** A candidate's answer text: its non-thought text parts, concatenated (what a stream's candidate channel holds). */
function answerText(candidate: unknown): string {
  const content = isObject(candidate) && isObject(candidate.content) ? candidate.content : {};
  let out = "";
  for (const part of asArray(content.parts)) if (isObject(part) && typeof part.text === "string" && part.thought !== true) out += part.text;
  return out;
}

/** The model-written strings of a citation source besides its offsets: redacted on their own. */
export const CITATION_SOURCE_STRINGS = ["uri", "title"] as const;

/**
 * The citation sources of a candidate's `citationMetadata`. The Gemini API lists them in
 * `citationSources`; Vertex AI (the same API on aiplatform.googleapis.com, `@google/genai` with
 * `vertexai: true`) in `citations`, with the same fields: both are read, so either shape is moved and
 * redacted.
 */
export function citationSourcesOf(metadata: JsonObject): JsonObject[] {
  return [...asArray(metadata.citationSources), ...asArray(metadata.citations)].filter(isObject);
}

/**
 * Moves each citation source of `metadata` from `from` (the candidate's answer text) onto `to` (its
 * redacted copy). A source that cannot be placed (offsets not integers, end before start, outside the
 * text) is left as it was: it carries no text. Its `uri` and `title` are model output too (a URI can
 * carry a value the answer's copy of it had redacted): each is redacted on its own, and rewritten only
 * when that changes it.
 */
function sourcesAfterRedaction(metadata: JsonObject, from: string, to: string, redactText: (text: string) => string): void {
  let map: RangeMapper | undefined | null = null;
  for (const source of citationSourcesOf(metadata)) {
    const placed = placeQuote(source, CITATION_SOURCE, from, CITATION_SOURCE_UNITS);
    if (placed && map === null) map = rangeMapper(from, to);
    if (placed && map) moveQuote(source, CITATION_SOURCE, placed, to, map);
    else {
      const own = quoteText(source, CITATION_SOURCE);
      if (own !== undefined) source.text = redactText(own);
    }
    redactStrings(source, CITATION_SOURCE_STRINGS, redactText);
  }
}

/**
 * Google Search grounding quotes the answer: `groundingMetadata.groundingSupports[].segment` holds the
 * text of a range of part `partIndex` (or of the candidate's answer text: a thinking model's part 0 is
 * its thought; in a JSON array of chunks, the answer so far, as a stream counts). After a redaction each
 * segment is moved onto the text the client got and quotes it; a segment that cannot be placed has its
 * text redacted on its own (fail closed).
 * The search queries the model wrote (`webSearchQueries`, and the `searchEntryPoint.renderedContent`
 * widget that shows them) are its output too: redacted on their own. `citationMetadata.citationSources`
 * (Vertex AI: `citations`) hold offsets (UTF-8 bytes into the candidate's answer text; in a JSON array
 * of chunks, its text up to and including that chunk, as in a stream) and URIs only: moved the same
 * way, or left as they were. Log probabilities are dropped (dropLogprobs).
 */
function groundingAfterRedaction(original: unknown, redacted: unknown, redactText: (text: string) => string): void {
  dropLogprobs(redacted);
  const chunked = Array.isArray(original);
  const before = Array.isArray(original) ? original : [original];
  const after = Array.isArray(redacted) ? redacted : [redacted];
  const quotes = after.some((response) => isObject(response) && asArray(response.candidates).some((c) => isObject(c) && (isObject(c.citationMetadata) || isObject(c.groundingMetadata))));
  if (!quotes) return;
  /** Per candidate index, its answer text so far: original and redacted. */
  const sofar = new Map<number, [string, string]>();
  after.forEach((response, r) => {
    if (!isObject(response)) return;
    asArray(response.candidates).forEach((candidate, c) => {
      if (!isObject(candidate)) return;
      const originalCandidate = isObject(before[r]) ? asArray((before[r] as JsonObject).candidates)[c] : undefined;
      const index = hasNumber(candidate.index) ? candidate.index : c;
      const [from, to] = sofar.get(index) ?? ["", ""];
      const whole: TextPair & [string, string] = [from + answerText(originalCandidate), to + answerText(candidate)];
      sofar.set(index, whole);
      if (isObject(candidate.citationMetadata)) sourcesAfterRedaction(candidate.citationMetadata, whole[0], whole[1], redactText);
      if (!isObject(candidate.groundingMetadata)) return;
      const grounding = candidate.groundingMetadata;
      if (Array.isArray(grounding.webSearchQueries)) grounding.webSearchQueries = grounding.webSearchQueries.map((q: unknown) => (typeof q === "string" ? redactText(q) : q));
      if (isObject(grounding.searchEntryPoint) && typeof grounding.searchEntryPoint.renderedContent === "string") {
        grounding.searchEntryPoint.renderedContent = redactText(grounding.searchEntryPoint.renderedContent);
      }
      const partText = (cand: unknown, i: number): string | undefined => {
        const content = isObject(cand) && isObject(cand.content) ? cand.content : {};
        const part = asArray(content.parts)[i];
        return isObject(part) ? asString(part.text) : undefined;
      };
      const parts = new Map<number, TextPair>();
      const maps = new WeakMap<TextPair, RangeMapper | undefined>();
      for (const support of asArray(grounding.groundingSupports)) {
        if (!isObject(support) || !isObject(support.segment)) continue;
        const segment = support.segment;
        const p = hasNumber(segment.partIndex) ? segment.partIndex : 0;
        let part = parts.get(p);
        if (!part) parts.set(p, (part = [partText(originalCandidate, p), partText(candidate, p)]));
        // Where the segment may point: part `partIndex` (as documented), or the candidate's answer text
        // (its text parts joined, thought parts left out; in a JSON array of chunks, all of it so far, as
        // a stream counts). A chunk of a stream tries the latter first.
        const texts = chunked ? [whole, part] : [part, whole];
        if (!moveSegment(segment, texts, maps)) {
          const own = quoteText(segment, SEGMENT);
          if (own !== undefined) segment.text = redactText(own);
        }
      }
    });
  });
}

/**
 * Log probabilities (`candidates[].logprobsResult`: the chosen tokens and the top candidates) spell the
 * answer token by token: after a redaction they would show what it took out, so they are removed from
 * every candidate, as OpenAI's `logprobs` are (`avgLogprobs`, a number, stays).
 */
function dropLogprobs(redacted: unknown): void {
  for (const response of Array.isArray(redacted) ? redacted : [redacted]) {
    if (!isObject(response)) continue;
    for (const candidate of asArray(response.candidates)) if (isObject(candidate) && candidate.logprobsResult !== undefined) delete candidate.logprobsResult;
  }
}

/** A text a segment may point into: original, and the redacted copy the client got. */
type TextPair = readonly [string | undefined, string | undefined];

/**
 * Moves a grounding segment onto the first of `texts` where it can be placed: by its offsets, else by
 * its text (`maps` keeps each pair's range mapper). False when it fits none.
 */
function moveSegment(segment: JsonObject, texts: readonly TextPair[], maps: WeakMap<TextPair, RangeMapper | undefined>): boolean {
  for (const byText of [false, true]) {
    for (const pair of texts) {
      const [from, to] = pair;
      if (from === undefined || to === undefined) continue;
      const placed = byText ? placeByText(segment, SEGMENT, from, "utf8") : placeQuote(segment, SEGMENT, from, SEGMENT_UNITS);
      if (!placed) continue;
      if (!maps.has(pair)) maps.set(pair, rangeMapper(from, to));
      const map = maps.get(pair);
      if (!map) continue;
      moveQuote(segment, SEGMENT, placed, to, map);
      return true;
    }
  }
  return false;
}

/**
 * Grounding segment texts, the model's search queries and the uri/title of its citation sources, of an
 * answer (JSON or JSON array), joined.
 */
function groundingText(json: unknown): string {
  const out: string[] = [];
  for (const response of Array.isArray(json) ? json : [json]) {
    if (!isObject(response)) continue;
    for (const candidate of asArray(response.candidates)) {
      if (!isObject(candidate)) continue;
      if (isObject(candidate.citationMetadata)) {
        for (const source of citationSourcesOf(candidate.citationMetadata)) {
          for (const field of CITATION_SOURCE_STRINGS) if (typeof source[field] === "string" && source[field] !== "") out.push(source[field]);
        }
      }
      if (!isObject(candidate.groundingMetadata)) continue;
      for (const support of asArray(candidate.groundingMetadata.groundingSupports)) {
        const text = isObject(support) && isObject(support.segment) ? quoteText(support.segment, SEGMENT) : undefined;
        if (text) out.push(text);
      }
      for (const q of asArray(candidate.groundingMetadata.webSearchQueries)) if (typeof q === "string" && q) out.push(q);
    }
  }
  return out.join("\n\n");
}

/**
 * promptTokenCount INCLUDES cachedContentTokenCount; toolUsePromptTokenCount (tool results fed back
 * by the API) is billed as input; thoughtsTokenCount is billed as output next to candidatesTokenCount.
 */
function googleUsage(raw: JsonObject): Usage {
  return {
    inputTokens: asCount(raw.promptTokenCount) + asCount(raw.toolUsePromptTokenCount),
    outputTokens: asCount(raw.candidatesTokenCount) + asCount(raw.thoughtsTokenCount),
    cachedInputTokens: asCount(raw.cachedContentTokenCount),
    cacheWriteTokens: 0,
  };
}

function errorMessageOf(json: unknown): string | undefined {
  if (!isObject(json) || json.error === undefined) return undefined;
  return isObject(json.error) ? (asString(json.error.message) ?? JSON.stringify(json.error)) : String(json.error);
}

function functionCalls(candidate: JsonObject): ToolCallFact[] {
  const content = isObject(candidate.content) ? candidate.content : {};
  const calls: ToolCallFact[] = [];
  for (const part of asArray(content.parts)) {
    if (!isObject(part)) continue;
    functionCallsOf(part, (call) => {
      const name = asString(call.name);
      if (name === undefined) return;
      const id = asString(call.id);
      calls.push(id === undefined ? { name } : { name, id });
    });
  }
  return calls;
}

/** Pushes a candidate's billed output that is not answer text: thought parts' text, functionCall args as JSON, executableCode code. */
function pushUncounted(candidate: JsonObject, out: string[]): void {
  const content = isObject(candidate.content) ? candidate.content : {};
  for (const part of asArray(content.parts)) {
    if (!isObject(part)) continue;
    if (part.thought === true && typeof part.text === "string" && part.text) out.push(part.text);
    functionCallsOf(part, (call) => {
      const args = call.args === undefined ? "" : argumentsText(call.args);
      if (args) out.push(args);
    });
    eachSpelling(part, "executableCode", "executable_code", (code) => {
      if (typeof code.code === "string" && code.code) out.push(code.code);
    });
  }
}

/**
 * The slots of an answer's part that outbound policies judge beside its text, leaf by leaf: a
 * functionCall's args, then the code the model ran, its output and a text file (hostedPartSlots).
 */
function answerPartSlots(part: JsonObject, out: TextSlot[]): void {
  functionCallsOf(part, (call) => pushAll(out, argumentSlots(call, "args")));
  hostedPartSlots(part, out);
}

/** answerPartSlots of every part of every candidate of a JSON answer or a JSON array of chunks. */
function answerToolSlots(json: unknown): TextSlot[] {
  const out: TextSlot[] = [];
  for (const response of Array.isArray(json) ? json : [json]) {
    if (!isObject(response)) continue;
    for (const candidate of asArray(response.candidates)) {
      if (!isObject(candidate) || !isObject(candidate.content)) continue;
      for (const part of asArray(candidate.content.parts)) if (isObject(part)) answerPartSlots(part, out);
    }
  }
  return out;
}

/** Facts of one GenerateContentResponse object. */
function parseOne(json: unknown): ResponseFacts {
  const candidates = sortedCandidates(json);
  const facts: ResponseFacts = {
    completionText: readGroups(json, completionGroups),
    toolCalls: candidates.flatMap(functionCalls),
  };
  // Thought parts only come from thinking models that include thoughts: other answers skip the walk.
  const thoughts = candidates.some((c) => isObject(c.content) && asArray(c.content.parts).some((p) => isObject(p) && p.thought === true));
  const reasoning = thoughts ? readGroups(json, reasoningGroups) : "";
  if (reasoning) facts.reasoningText = reasoning;
  if (isObject(json) && isObject(json.usageMetadata)) facts.usage = googleUsage(json.usageMetadata);
  if (facts.usage === undefined) {
    // only counted when the provider reported no usage: collected only then
    const uncounted: string[] = [];
    for (const candidate of candidates) pushUncounted(candidate, uncounted);
    if (uncounted.length > 0) facts.uncountedOutputText = uncounted.join("");
  }
  if (!isObject(json)) return facts;
  const model = asString(json.modelVersion);
  if (model !== undefined) facts.model = model;
  const finish = sortedCandidates(json)
    .map((c) => asString(c.finishReason))
    .find((f) => f !== undefined);
  if (finish !== undefined) facts.finishReason = finish;
  const error = errorMessageOf(json);
  if (error !== undefined) facts.errorMessage = error;
  return facts;
}

const UTF8_BOM = [0xef, 0xbb, 0xbf];

/**
 * Accumulates streamed GenerateContentResponse chunks (SSE `data:` or JSON-array elements). A stream
 * that carried a chunk but ended cleanly before its end is ResponseFacts.endedEarly: SSE (`alt=sse`) has
 * no end marker event, its answer ends with a candidate's finishReason (or a blocked prompt's
 * promptFeedback.blockReason); a JSON array ends with its closing "]".
 */
class GoogleObserver implements StreamObserver {
  private mode: "unknown" | "sse" | "array" = "unknown";
  /** Bytes looked at while the form was unknown, and how many of them (from the first) were a UTF-8 BOM. */
  private leading = 0;
  private bomBytes = 0;
  private readonly sse = new SseParser({ onEvent: (e) => this.onChunk(e.data) });
  private readonly array = new JsonArrayStream((text) => this.onChunk(text));
  private readonly texts = new Map<number, string>();
  /** Thought-part text by candidate index (reasoningText). */
  private readonly thoughts = new Map<number, string>();
  private readonly tools: ToolCallFact[] = [];
  /**
   * Each functionCall's args object, and each executableCode code, codeExecutionResult output and text
   * file as `{text}`, in arrival order (ResponseFacts.toolArguments: judged by outbound policies).
   */
  private readonly toolArgs: unknown[] = [];
  /** Thought text and functionCall args JSON, in arrival order (joined once at end()). */
  private readonly uncounted: string[] = [];
  private usage: Usage | undefined;
  /** A candidate finished or the prompt was blocked: the usage seen is the answer's total. */
  private answerEnded = false;
  private model: string | undefined;
  /** The finish reason of the lowest candidate index that sent one (as parseOne picks it from JSON). */
  private finishReason: string | undefined;
  private finishIndex = Infinity;
  private errorMessage: string | undefined;
  /** A chunk came (a body with none is not a stream: nothing to call unfinished). */
  private started = false;

  push(chunk: Uint8Array): void {
    if (this.mode === "unknown") {
      // The first byte other than whitespace and a leading UTF-8 BOM (EF BB BF, which both parsers skip)
      // tells the form: "[" a JSON array, else SSE.
      let first: number | undefined;
      for (const b of chunk) {
        const at = this.leading++;
        if (at === this.bomBytes && at < 3 && b === UTF8_BOM[at]) this.bomBytes++;
        else if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) {
          first = b;
          break;
        }
      }
      if (first === undefined) {
        this.sse.push(chunk);
        this.array.push(chunk);
        return;
      }
      this.mode = first === 0x5b /* [ */ ? "array" : "sse";
    }
    if (this.mode === "array") this.array.push(chunk);
    else this.sse.push(chunk);
  }

  end(): ResponseFacts {
    if (this.mode === "array") this.array.end();
    else this.sse.end();
    const indices = [...this.texts.keys()].sort((a, b) => a - b);
    const facts: ResponseFacts = {
      completionText: joinGroups(indices.map((i) => [this.texts.get(i) ?? ""])),
      toolCalls: this.tools,
    };
    const reasoning = joinGroups([...this.thoughts.keys()].sort((a, b) => a - b).map((i) => [this.thoughts.get(i) ?? ""]));
    if (reasoning) facts.reasoningText = reasoning;
    if (this.uncounted.length > 0) facts.uncountedOutputText = this.uncounted.join("");
    if (this.toolArgs.length > 0) facts.toolArguments = this.toolArgs;
    if (this.usage && this.answerEnded) facts.usage = this.usage;
    else if (this.usage) {
      // Cut before the answer ended: the running counts' input side (prompt, tool-use prompt, cached) is
      // already the total; the output is counted locally when the usage is settled.
      const { outputTokens: _running, ...input } = this.usage;
      facts.partialUsage = input;
    }
    if (this.model !== undefined) facts.model = this.model;
    if (this.finishReason !== undefined) facts.finishReason = this.finishReason;
    if (this.errorMessage !== undefined) facts.errorMessage = this.errorMessage;
    else if (this.started && (this.mode === "array" ? !this.array.closed : !this.answerEnded)) {
      facts.endedEarly = true;
      facts.errorMessage = this.mode === "array" ? "the stream ended before its end (the JSON array's closing ])" : "the stream ended before its end (no candidate's finishReason)";
    }
    return facts;
  }

  private onChunk(text: string): void {
    const json = tryParseJson(text);
    if (!isObject(json)) return;
    this.started = true;
    const error = errorMessageOf(json);
    if (error !== undefined) {
      this.errorMessage = error;
      return;
    }
    // usageMetadata is cumulative (the latest is kept), and it holds the totals only once the answer
    // ended: a finishReason (the usage may come with it or in a chunk after it) or a blocked prompt. A
    // stream cut before that has running counts only: end() reports no usage, so the trace counts the
    // tokens locally and is flagged estimated, as for the other providers.
    if (asArray(json.candidates).some((c) => isObject(c) && c.finishReason !== undefined && c.finishReason !== null)) this.answerEnded = true;
    if (isObject(json.promptFeedback) && json.promptFeedback.blockReason !== undefined) this.answerEnded = true;
    const meta = json.usageMetadata;
    if (isObject(meta)) this.usage = googleUsage(meta);
    this.model = asString(json.modelVersion) ?? this.model;
    asArray(json.candidates).forEach((raw, position) => {
      if (!isObject(raw)) return;
      const index = hasNumber(raw.index) ? raw.index : position;
      const content = isObject(raw.content) ? raw.content : {};
      let text = this.texts.get(index) ?? "";
      let thought = this.thoughts.get(index);
      for (const part of asArray(content.parts)) {
        if (!isObject(part)) continue;
        functionCallsOf(part, (call) => {
          if (call.args !== undefined) this.toolArgs.push(call.args);
        });
        // The code the model ran, its output, a text file: judged with the tool calls' arguments.
        if (mayHostText(part)) {
          const hosted: TextSlot[] = [];
          hostedPartSlots(part, hosted);
          for (const s of hosted) if (s.get() !== "") this.toolArgs.push({ text: s.get() });
        }
        if (typeof part.text !== "string") continue;
        if (part.thought === true) thought = (thought ?? "") + part.text;
        else text += part.text;
      }
      this.texts.set(index, text);
      if (thought !== undefined) this.thoughts.set(index, thought);
      this.tools.push(...functionCalls(raw));
      pushUncounted(raw, this.uncounted);
      // Per candidate index, the lowest index wins (candidates finish in any order; JSON reports the first by index).
      const finish = asString(raw.finishReason);
      if (finish !== undefined && index <= this.finishIndex) {
        this.finishReason = finish;
        this.finishIndex = index;
      }
    });
  }
}

function parseResponse(json: unknown): ResponseFacts {
  if (!Array.isArray(json)) return parseOne(json);
  // a buffered streamGenerateContent answer (JSON array of chunks)
  const observer = new GoogleObserver();
  observer.push(new TextEncoder().encode(JSON.stringify(json)));
  return observer.end();
}

export const googleAdapter: ProviderAdapter = {
  name: "google",
  wire: "google",
  defaultBaseUrl: "https://generativelanguage.googleapis.com",
  authHeaders: ["x-goog-api-key", "authorization"],
  servedTierHeader: "x-gemini-service-tier",
  resolve,
  inputExtrasText: (body) => fieldsJson(body, ["tools", "toolConfig", "tool_config"]),
  inputExtraSlots,
  promptParts: (body) => readSlots(body, promptSlots),
  promptText: (body) => readSlots(body, promptSlots).join("\n\n"),
  systemText: (body) =>
    isObject(body) ? readSlots(body, (b) => contentSlots(b as JsonObject, (b as JsonObject).systemInstruction !== undefined ? "systemInstruction" : "system_instruction")).join("\n\n") : "",
  mapPromptText: (body, fn) => mapSlots(body, promptSlots, fn),
  parseResponse,
  mapCompletionText: (json, fn) =>
    Array.isArray(json) ? mapGroups(json, (arr) => asArray(arr).flatMap(completionGroups), fn) : mapGroups(json, completionGroups, fn),
  mapReasoningText: (json, fn) =>
    Array.isArray(json) ? mapGroups(json, (arr) => asArray(arr).flatMap(reasoningGroups), fn) : mapGroups(json, reasoningGroups, fn),
  afterRedaction: groundingAfterRedaction,
  quotedText: groundingText,
  // A JSON answer or a JSON array of chunks: every candidate's functionCall.args, leaf by leaf, and its
  // code execution's code and output and its text files (answerPartSlots).
  answerToolSlots,
  streamObserver: () => new GoogleObserver(),
  errorEvent(message: string, code: string, options?: ErrorEventOptions): string {
    const status = options?.status ?? 403;
    const metadata: Record<string, string> = {};
    for (const [k, v] of Object.entries(options?.details ?? {})) metadata[k] = typeof v === "string" ? v : JSON.stringify(v);
    const error = {
      code: status,
      message,
      status: STATUS_NAMES[status] ?? "UNKNOWN",
      details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: code, domain: "agentgov", metadata }],
    };
    // The genai SDK throws ApiError for a chunk whose `error.code` is a 4xx/5xx number.
    return `data: ${JSON.stringify({ error })}\r\n\r\n`;
  },
};

/** :embedContent and :batchEmbedContents (embeddings/google.ts). */
export const googleEmbeddingsAdapter: ProviderAdapter = embeddingsAdapterOf(googleAdapter);
