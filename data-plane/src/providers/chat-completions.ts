// Shared logic for the OpenAI-style chat-completions wire format (OpenAI and Mistral):
// messages → prompt slots, choices → completion groups, usage, tool calls, and the SSE observer.
import { argumentsText, asArray, asCount, asString, fieldsJson, hasNumber, isObject, tryParseJson } from "./json.js";
import type { JsonObject } from "./json.js";
import { restoreSignedBlocks } from "./signed-reasoning.js";
import { normalizeSearch, normalizeSubPath, SPEC_PATH } from "./paths.js";
import { moveQuote, placeQuote, quoteText, redactStrings, type QuoteFields } from "./quotes.js";
import { rangeMapper, type RangeMapper } from "./shift-range.js";
import { SseParser } from "./sse-parser.js";
import type { OffsetUnit } from "./text-offsets.js";
import { nameSlot, pushGroup, schemaSlots, type InputExtraGroup } from "./input-extras.js";
import { argumentSlots, fileDataTextSlot, joinGroups, pushAll, slot } from "./text-slots.js";
import type { TextSlot } from "./text-slots.js";
import type { ResponseFacts, StreamObserver, ToolCallFact, UpstreamTarget, Usage } from "./types.js";

const SYSTEM_ROLES = new Set(["system", "developer"]);

/** Text slots of one message's content: a string, or the `text` of each {type:"text"} part. */
function contentSlots(holder: JsonObject, key: string): TextSlot[] {
  const content = holder[key];
  if (typeof content === "string") return [slot(holder, key)];
  const slots: TextSlot[] = [];
  for (const part of asArray(content)) {
    if (isObject(part) && part.type === "text" && typeof part.text === "string") slots.push(slot(part, "text"));
  }
  return slots;
}

/**
 * Input text slots of one message's content: a string, or its parts in order: the `text` of each
 * {type:"text"} part, the text of each {type:"thinking"} part (a Mistral reasoning model's thinking
 * sent back in the history: the model reads it, and nothing signs it, unlike Anthropic's) and the text
 * file of each {type:"file"} part whose `file.file_data` holds a text file (fileDataTextSlot: a base64
 * data URL of a text MIME type, or plain base64 of UTF-8 text; its decoded UTF-8; a PDF or a `file_id`
 * is not read).
 */
function inputContentSlots(message: JsonObject): TextSlot[] {
  const content = message.content;
  if (typeof content === "string") return [slot(message, "content")];
  const slots: TextSlot[] = [];
  for (const part of asArray(content)) {
    if (!isObject(part)) continue;
    if (part.type === "text" && typeof part.text === "string") slots.push(slot(part, "text"));
    else if (part.type === "thinking") thinkingPartSlots(part, slots);
    else if (part.type === "file" && isObject(part.file)) {
      const file = fileDataTextSlot(part.file, "file_data", part.file.filename);
      if (file) slots.push(file);
    }
  }
  return slots;
}

/** The tool-call arguments of a JSON answer: each choice's message, as in the history (toolCallSlots). */
export function chatAnswerToolSlots(json: unknown): TextSlot[] {
  if (!isObject(json)) return [];
  return asArray(json.choices).flatMap((c) => (isObject(c) && isObject(c.message) ? toolCallSlots(c.message) : []));
}

/**
 * Slots of the tool calls an assistant message of the history carries: each call's `function.arguments`
 * (JSON text, or an object as Mistral accepts), a custom tool's `input`, and the legacy `function_call`.
 */
function toolCallSlots(message: JsonObject): TextSlot[] {
  const slots: TextSlot[] = [];
  for (const call of asArray(message.tool_calls)) {
    if (!isObject(call)) continue;
    if (isObject(call.function) && call.function.arguments !== undefined) pushAll(slots, argumentSlots(call.function, "arguments"));
    if (isObject(call.custom) && typeof call.custom.input === "string") slots.push(slot(call.custom, "input"));
  }
  if (isObject(message.function_call) && message.function_call.arguments !== undefined) {
    pushAll(slots, argumentSlots(message.function_call, "arguments"));
  }
  return slots;
}

/**
 * The input slots of one message: its content, its `refusal` (an assistant turn's refusal sent back in
 * the history: text the model reads, as the Responses API's refusal parts), then the arguments of the
 * tool calls it carries (the model's earlier calls sent back to it).
 */
function messageSlots(m: JsonObject): TextSlot[] {
  const slots = inputContentSlots(m);
  if (typeof m.refusal === "string") slots.push(slot(m, "refusal"));
  pushAll(slots, toolCallSlots(m));
  return slots;
}

/** Input slots: system/developer messages first, then the others, each in request order (messageSlots). */
export function chatSystemSlots(body: unknown): TextSlot[] {
  if (!isObject(body)) return [];
  return asArray(body.messages)
    .filter(isObject)
    .filter((m) => SYSTEM_ROLES.has(String(m.role)))
    .flatMap(messageSlots);
}

export function chatPromptSlots(body: unknown): TextSlot[] {
  if (!isObject(body)) return [];
  const messages = asArray(body.messages).filter(isObject);
  const system = messages.filter((m) => SYSTEM_ROLES.has(String(m.role)));
  const rest = messages.filter((m) => !SYSTEM_ROLES.has(String(m.role)));
  return [...system, ...rest].flatMap(messageSlots);
}

/** A function definition's texts (`{name, description, parameters}`): its description, then its parameter schema's (schemaSlots). */
function functionDefinitionSlots(fn: JsonObject): TextSlot[] {
  const slots: TextSlot[] = typeof fn.description === "string" ? [slot(fn, "description")] : [];
  if (fn.parameters !== undefined && fn.parameters !== null) pushAll(slots, schemaSlots(fn, "parameters"));
  return slots;
}

/**
 * Input outside the prompt (input-extras.ts), in this order: each tool definition (`tools[].function`:
 * description and parameter schema; a custom tool's description; the legacy `functions[]`); the response
 * format's JSON schema (`response_format.json_schema`: description, then `schema`); the predicted output
 * (`prediction.content`, a string or text parts); the messages' participant `name`s, in request order.
 * Tool names and the schema's `name` are identifiers (a redaction would break the call), not text.
 */
export function chatInputExtraSlots(body: unknown): InputExtraGroup[] {
  const groups: InputExtraGroup[] = [];
  if (!isObject(body)) return groups;
  for (const tool of asArray(body.tools)) {
    if (!isObject(tool)) continue;
    if (isObject(tool.function)) pushGroup(groups, "tool_definition", functionDefinitionSlots(tool.function));
    else if (isObject(tool.custom) && typeof tool.custom.description === "string") pushGroup(groups, "tool_definition", [slot(tool.custom, "description")]);
  }
  for (const fn of asArray(body.functions)) if (isObject(fn)) pushGroup(groups, "tool_definition", functionDefinitionSlots(fn));
  const format = body.response_format;
  if (isObject(format) && isObject(format.json_schema)) {
    const schema = format.json_schema;
    const slots: TextSlot[] = typeof schema.description === "string" ? [slot(schema, "description")] : [];
    if (schema.schema !== undefined && schema.schema !== null) pushAll(slots, schemaSlots(schema, "schema"));
    pushGroup(groups, "response_schema", slots);
  }
  if (isObject(body.prediction)) pushGroup(groups, "prediction", contentSlots(body.prediction, "content"));
  const names: TextSlot[] = [];
  for (const m of asArray(body.messages)) if (isObject(m) && typeof m.name === "string") names.push(nameSlot(m, "name"));
  pushGroup(groups, "name", names);
  return groups;
}

/**
 * A choice that finished with `finish_reason: "error"` (Mistral's own failed generation, in a 200 answer as
 * in a stream; see the stream observer's failedFinish): its `error` message when it carries one, else a
 * generic one. Any failed choice makes the answer a failed one, as in streams.
 */
function failedChoice(json: unknown): string | undefined {
  for (const choice of sortedChoices(json)) {
    if (choice.finish_reason !== "error") continue;
    return (isObject(choice.error) ? asString(choice.error.message) : undefined) ?? 'the answer ended with finish_reason "error"';
  }
  return undefined;
}

function sortedChoices(json: unknown): JsonObject[] {
  if (!isObject(json)) return [];
  return asArray(json.choices)
    .filter(isObject)
    .map((c, i) => ({ c, i: hasNumber(c.index) ? c.index : i }))
    .sort((a, b) => a.i - b.i)
    .map((x) => x.c);
}

/**
 * Output groups: for each choice (by index) its content (string or text chunks, concatenated), then its
 * refusal, then the transcript of its spoken answer (`message.audio.transcript`, audio output). Thinking
 * chunks (Mistral reasoning models) are not output text.
 */
export function chatCompletionGroups(json: unknown): TextSlot[][] {
  const groups: TextSlot[][] = [];
  for (const choice of sortedChoices(json)) {
    const message = choice.message;
    if (!isObject(message)) continue;
    groups.push(contentSlots(message, "content"));
    if (typeof message.refusal === "string") groups.push([slot(message, "refusal")]);
    if (isObject(message.audio) && typeof message.audio.transcript === "string") groups.push([slot(message.audio, "transcript")]);
  }
  return groups;
}

/** The transcripts of a JSON answer's spoken answers (audio output), in choice order: what its audio says. */
export function chatSpokenText(json: unknown): string {
  const parts: string[] = [];
  for (const choice of sortedChoices(json)) {
    const audio = isObject(choice.message) ? choice.message.audio : undefined;
    if (isObject(audio) && typeof audio.transcript === "string") parts.push(audio.transcript);
  }
  return parts.join("\n\n");
}

/** The request asks for a spoken answer (audio output: `modalities` with "audio", or an `audio` object). */
export function chatAsksForSpeech(body: unknown): boolean {
  return isObject(body) && ((Array.isArray(body.modalities) && body.modalities.includes("audio")) || isObject(body.audio));
}

/** Slots of a content array's thinking chunks (Mistral reasoning models): a string `thinking`, or its text parts. */
function thinkingSlots(content: unknown): TextSlot[] {
  const slots: TextSlot[] = [];
  for (const part of asArray(content)) if (isObject(part) && part.type === "thinking") thinkingPartSlots(part, slots);
  return slots;
}

/** Pushes the slots of one thinking chunk: its `thinking` string, or the `text` of its text parts. */
function thinkingPartSlots(part: JsonObject, slots: TextSlot[]): void {
  if (typeof part.thinking === "string") slots.push(slot(part, "thinking"));
  else for (const t of asArray(part.thinking)) if (isObject(t) && typeof t.text === "string") slots.push(slot(t, "text"));
}

/**
 * Reasoning text fields of OpenAI-compatible servers behind PROVIDER_OPENAI_URL / PROVIDER_MISTRAL_URL
 * (DeepSeek and vLLM `reasoning_content`, OpenRouter and others `reasoning`), on a message or a delta.
 */
export const REASONING_FIELDS = ["reasoning_content", "reasoning"] as const;

/**
 * Text fields of OpenRouter's `reasoning_details` items (`reasoning.text` → `text`, `reasoning.summary` →
 * `summary`; `reasoning.encrypted` carries opaque `data`), which repeat the reasoning in structured form.
 */
export const REASONING_DETAIL_FIELDS = ["text", "summary"] as const;

/** Slots of a message's or delta's `reasoning_details` items, in order. */
export function reasoningDetailSlots(holder: JsonObject): TextSlot[] {
  const slots: TextSlot[] = [];
  for (const item of asArray(holder.reasoning_details)) {
    if (!isObject(item)) continue;
    for (const field of REASONING_DETAIL_FIELDS) if (typeof item[field] === "string") slots.push(slot(item, field));
  }
  return slots;
}

/**
 * Reasoning groups: for each choice (by index) its reasoning fields, then the text of its thinking
 * chunks (Mistral reasoning models), concatenated.
 */
export function chatReasoningGroups(json: unknown): TextSlot[][] {
  return sortedChoices(json).map((choice) => {
    const message = choice.message;
    if (!isObject(message)) return [];
    const slots: TextSlot[] = [];
    for (const field of REASONING_FIELDS) if (typeof message[field] === "string") slots.push(slot(message, field));
    pushAll(slots, reasoningDetailSlots(message));
    pushAll(slots, thinkingSlots(message.content));
    return slots;
  });
}

/** The signed `reasoning.text` items of a message's `reasoning_details` (OpenRouter, Anthropic models), in order. */
function signedDetails(message: unknown): JsonObject[] {
  if (!isObject(message)) return [];
  return asArray(message.reasoning_details).filter(
    (item): item is JsonObject => isObject(item) && item.type === "reasoning.text" && typeof item.signature === "string" && item.signature !== "" && typeof item.text === "string",
  );
}

/**
 * Signed reasoning blocks (OpenRouter `reasoning_details` items of type `reasoning.text` with a
 * `signature`: the model's provider signed their text) whose text differs between an answer and its
 * redacted copy, so the proxy can restore them when the client sends them back.
 */
export function changedSignedDetails(original: unknown, redacted: unknown): { signature: string; original: string; redacted: string }[] {
  const before = sortedChoices(original);
  const after = sortedChoices(redacted);
  const out: { signature: string; original: string; redacted: string }[] = [];
  before.forEach((choice, c) => {
    const was = signedDetails(choice.message);
    const now = signedDetails(after[c]?.message);
    was.forEach((b, i) => {
      const a = now[i];
      if (a && a.signature === b.signature && a.text !== b.text) out.push({ signature: b.signature as string, original: b.text as string, redacted: a.text as string });
    });
  });
  return out;
}

/**
 * A copy of a request body whose assistant messages' signed `reasoning_details` items get back the text
 * their signature covers, where `original(signature, text)` knows it; undefined when none changed.
 */
export function restoreSignedDetails(body: unknown, original: (signature: string, text: string) => string | undefined): unknown {
  return restoreSignedBlocks(body, { list: "reasoning_details", type: "reasoning.text", text: "text" }, original);
}

/**
 * An OpenAI `url_citation` annotation (web search models): `start_index`/`end_index` into its choice's
 * content, no text; its range usually covers the markdown link to `url`, which picks the unit when the
 * range fits the text in both.
 */
export const URL_CITATION: QuoteFields = { start: "start_index", end: "end_index", text: "text", verify: "url" };
/** OpenAI does not document the unit: code points (its API is Python), UTF-16 when the range only fits in those. */
export const URL_CITATION_UNITS: readonly OffsetUnit[] = ["codepoints", "utf16"];

/** A message's content text as its offsets count it: the string, or its text parts concatenated. */
function contentText(message: JsonObject): string {
  return contentSlots(message, "content")
    .map((s) => s.get())
    .join("");
}

/** The model-written strings of a url_citation besides its offsets: redacted on their own. */
export const URL_CITATION_STRINGS = ["url", "title"] as const;

/**
 * After an outbound redaction, each `message.annotations[].url_citation` is moved onto the redacted
 * content of its choice (offsets in the unit it was placed in), so the client renders it where the
 * cited text now is. One that cannot be placed (offsets that are not integers, end before start,
 * outside the content in every unit) is left as it was: it carries no text, nothing leaks. A
 * `url_citation.text`, should one come, is a quote like any other (moved, or redacted on its own).
 * Its `url` and `title` are model output too (a URL can carry a value the content's copy of it had
 * redacted): each is redacted on its own, after placing (the url picks the unit), and rewritten only
 * when that changes it. A choice's `logprobs` are dropped (null).
 */
export function chatAfterRedaction(original: unknown, redacted: unknown, redactText: (text: string) => string): void {
  if (!isObject(original) || !isObject(redacted)) return;
  // Log probabilities spell the answer token by token: they would show what redaction took out.
  for (const choice of asArray(redacted.choices)) if (isObject(choice) && choice.logprobs !== undefined && choice.logprobs !== null) choice.logprobs = null;
  const before = asArray(original.choices);
  asArray(redacted.choices).forEach((choice, i) => {
    if (!isObject(choice) || !isObject(choice.message) || !Array.isArray(choice.message.annotations)) return;
    const prior = before[i];
    const from = isObject(prior) && isObject(prior.message) ? contentText(prior.message) : undefined;
    const to = contentText(choice.message);
    const citations = choice.message.annotations.flatMap((a) => (isObject(a) && isObject(a.url_citation) ? [a.url_citation] : []));
    moveUrlCitations(citations, from, to, redactText);
  });
}

/**
 * Moves url_citation objects (offsets into `from`, the original text) onto `to`, its redacted copy; one
 * that cannot be placed keeps its offsets (a `text` of its own is redacted alone); its `url` and `title`
 * are redacted on their own. Shared by chat completions and the Responses API (flat annotations there).
 */
export function moveUrlCitations(citations: readonly JsonObject[], from: string | undefined, to: string, redactText: (text: string) => string): void {
  let map: RangeMapper | undefined | null = null;
  for (const citation of citations) {
    const placed = from === undefined ? undefined : placeQuote(citation, URL_CITATION, from, URL_CITATION_UNITS);
    if (placed && map === null) map = from === undefined ? undefined : rangeMapper(from, to);
    if (placed && map) moveQuote(citation, URL_CITATION, placed, to, map);
    else {
      const own = quoteText(citation, URL_CITATION);
      if (own !== undefined) citation.text = redactText(own);
    }
    redactStrings(citation, URL_CITATION_STRINGS, redactText);
  }
}

/**
 * What a JSON answer's `url_citation` annotations carry besides offsets: the `url` and `title` the model
 * wrote (and a `text`, should one come), joined by "\n\n", so an outbound block sees a value only they
 * carry, as it does in a stream. "" for an answer without annotations.
 */
export function chatQuotedText(json: unknown): string {
  if (!isObject(json)) return "";
  const out: string[] = [];
  for (const choice of asArray(json.choices)) {
    if (!isObject(choice) || !isObject(choice.message) || !Array.isArray(choice.message.annotations)) continue;
    for (const annotation of choice.message.annotations) {
      if (!isObject(annotation) || !isObject(annotation.url_citation)) continue;
      const citation = annotation.url_citation;
      const own = quoteText(citation, URL_CITATION);
      if (own) out.push(own);
      for (const field of URL_CITATION_STRINGS) if (typeof citation[field] === "string" && citation[field] !== "") out.push(citation[field]);
    }
  }
  return out.join("\n\n");
}

/** Whether any choice's message can carry reasoning (thinking chunks or a reasoning field): plain answers skip the walk. */
function mayReason(json: unknown): boolean {
  if (!isObject(json)) return false;
  return asArray(json.choices).some((c) => {
    if (!isObject(c) || !isObject(c.message)) return false;
    const m = c.message;
    return Array.isArray(m.content) || typeof m.reasoning_content === "string" || typeof m.reasoning === "string" || Array.isArray(m.reasoning_details);
  });
}

export function chatUsage(raw: unknown): Usage | undefined {
  if (!isObject(raw)) return undefined;
  const details = isObject(raw.prompt_tokens_details) ? raw.prompt_tokens_details : {};
  return {
    inputTokens: asCount(raw.prompt_tokens),
    outputTokens: asCount(raw.completion_tokens),
    cachedInputTokens: asCount(details.cached_tokens),
    cacheWriteTokens: asCount(details.cache_write_tokens),
  };
}

function toolName(call: JsonObject): string | undefined {
  if (isObject(call.function)) return asString(call.function.name);
  if (isObject(call.custom)) return asString(call.custom.name);
  return undefined;
}

export function chatToolCalls(json: unknown): ToolCallFact[] {
  const calls: ToolCallFact[] = [];
  for (const choice of sortedChoices(json)) {
    const message = choice.message;
    if (!isObject(message)) continue;
    for (const call of asArray(message.tool_calls).filter(isObject)) {
      const name = toolName(call);
      if (name === undefined) continue;
      const id = asString(call.id);
      calls.push(id === undefined ? { name } : { name, id });
    }
    if (isObject(message.function_call)) {
      const name = asString(message.function_call.name);
      if (name !== undefined) calls.push({ name });
    }
  }
  return calls;
}

/** Error message of an OpenAI-style ({error:{message}}) or Mistral-style ({object:"error",message} / {message} / {detail}) body. */
export function chatErrorMessage(json: unknown): string | undefined {
  if (!isObject(json)) return undefined;
  if (isObject(json.error)) return asString(json.error.message) ?? JSON.stringify(json.error);
  if (typeof json.error === "string") return json.error;
  if (json.choices !== undefined) return undefined;
  if (json.object === "error" || json.message !== undefined) {
    const m = json.message;
    return typeof m === "string" ? m : JSON.stringify(m);
  }
  if (json.detail !== undefined) return typeof json.detail === "string" ? json.detail : JSON.stringify(json.detail);
  return undefined;
}

/** Pushes the text of a content array's thinking chunks (Mistral reasoning models: {type:"thinking", thinking:[{type:"text",text}]}). */
function pushThinking(content: unknown, out: string[]): void {
  for (const part of asArray(content)) {
    if (!isObject(part) || part.type !== "thinking") continue;
    if (typeof part.thinking === "string") {
      if (part.thinking) out.push(part.thinking);
      continue;
    }
    for (const t of asArray(part.thinking)) if (isObject(t) && typeof t.text === "string" && t.text) out.push(t.text);
  }
}

/** Pushes a tool call's (or a streamed fragment's) argument text: function.arguments, or a custom tool's input. */
function pushToolArguments(call: JsonObject, out: string[]): void {
  const text = isObject(call.function) ? argumentsText(call.function.arguments) : isObject(call.custom) ? argumentsText(call.custom.input) : "";
  if (text) out.push(text);
}

/** Billed output that is not answer text (ResponseFacts.uncountedOutputText): thinking chunks and tool-call arguments, by choice. */
export function chatUncountedText(json: unknown): string {
  const out: string[] = [];
  for (const choice of sortedChoices(json)) {
    const message = choice.message;
    if (!isObject(message)) continue;
    for (const field of REASONING_FIELDS) {
      const value = message[field];
      if (typeof value === "string" && value) out.push(value);
    }
    for (const s of reasoningDetailSlots(message)) if (s.get()) out.push(s.get());
    pushThinking(message.content, out);
    for (const call of asArray(message.tool_calls)) if (isObject(call)) pushToolArguments(call, out);
    if (isObject(message.function_call)) pushToolArguments({ function: message.function_call }, out);
  }
  return out.join("");
}

/** Billed input that is not prompt text: the request's tool definitions (`tools`, legacy `functions`) as JSON. */
export function chatInputExtrasText(body: unknown): string {
  return fieldsJson(body, ["tools", "functions"]);
}

export function parseChatResponse(json: unknown): ResponseFacts {
  const errorMessage = chatErrorMessage(json);
  const facts: ResponseFacts = {
    completionText: joinGroups(chatCompletionGroups(json).map((g) => g.map((s) => s.get()))),
    toolCalls: chatToolCalls(json),
  };
  const reasoning = mayReason(json) ? joinGroups(chatReasoningGroups(json).map((g) => g.map((s) => s.get()))) : "";
  if (reasoning) facts.reasoningText = reasoning;
  if (isObject(json)) {
    const usage = chatUsage(json.usage);
    if (usage) facts.usage = usage;
    const model = asString(json.model);
    if (model !== undefined) facts.model = model;
    const tier = asString(json.service_tier);
    if (tier !== undefined) facts.serviceTier = tier;
    const finish = sortedChoices(json)
      .map((c) => asString(c.finish_reason))
      .find((f) => f !== undefined);
    if (finish !== undefined) facts.finishReason = finish;
  }
  if (facts.usage === undefined) {
    const uncounted = chatUncountedText(json); // only counted when the provider reported no usage
    if (uncounted) facts.uncountedOutputText = uncounted;
  }
  const failed = errorMessage ?? failedChoice(json);
  if (failed !== undefined) facts.errorMessage = failed;
  return facts;
}

/** resolve() for providers whose chat endpoint is /v1/chat/completions with model/stream in the body. */
export function resolveChatCompletions(subPath: string, search: string, body: unknown): UpstreamTarget | null {
  const p = normalizeSubPath(subPath);
  if (p !== SPEC_PATH && p !== "/v1/chat/completions") return null;
  const model = isObject(body) ? (asString(body.model) ?? "") : "";
  const stream = isObject(body) && body.stream === true;
  return { path: `/v1/chat/completions${normalizeSearch(search)}`, model, stream };
}

/**
 * A copy of a chat stream request that asks for usage in its stream (`stream_options.include_usage`),
 * other stream options kept; undefined when it is no stream, asks already, or its `stream_options` is
 * neither absent, null nor an object (the provider refuses that body as it came).
 */
export function chatAskStreamUsage(body: unknown): Record<string, unknown> | undefined {
  if (!isObject(body) || body.stream !== true) return undefined;
  const options = body.stream_options;
  if (options !== undefined && options !== null && !isObject(options)) return undefined;
  if (isObject(options) && options.include_usage === true) return undefined;
  return { ...body, stream_options: { ...(isObject(options) ? options : {}), include_usage: true } };
}

interface ToolSlot {
  choice: number;
  index: number;
  order: number;
  name?: string;
  id?: string;
  /** The arguments' JSON text so far (or the object a server sent whole); a custom tool's input text. */
  args?: unknown;
  /** `args` is a custom tool's free-text input (judged as one text, never as JSON). */
  custom?: boolean;
}

/** Text accumulated from a delta's content (string or text chunks). */
function deltaText(content: unknown): string {
  if (typeof content === "string") return content;
  let out = "";
  for (const part of asArray(content)) {
    if (isObject(part) && part.type === "text" && typeof part.text === "string") out += part.text;
  }
  return out;
}

/**
 * Observer for chat-completion chunks (`data: {…}` events, `data: [DONE]`). `data: [DONE]` is the end
 * marker (OpenAI and Mistral send it last, after the finish chunk and, with include_usage, the usage
 * chunk): a stream that carried a chunk but ended cleanly without it is ResponseFacts.endedEarly.
 */
export class ChatCompletionsObserver implements StreamObserver {
  private readonly parser: SseParser;
  private readonly contents = new Map<number, string>();
  private readonly refusals = new Map<number, string>();
  /** Transcripts of spoken answers (`delta.audio.transcript`) by choice index. */
  private readonly transcripts = new Map<number, string>();
  /** Thinking-chunk text by choice index (reasoningText). */
  private readonly thinking = new Map<number, string>();
  private readonly tools: ToolSlot[] = [];
  /** Tool-call argument fragments and thinking text, in arrival order (joined once at end()). */
  private readonly uncounted: string[] = [];
  private usage: Usage | undefined;
  private model: string | undefined;
  /** The service tier the chunks name (OpenAI sends it on every chunk). */
  private serviceTier: string | undefined;
  /** The finish reason of the lowest choice index that sent one (as parseChatResponse picks it from JSON). */
  private finishReason: string | undefined;
  private finishIndex = Infinity;
  private errorMessage: string | undefined;
  /**
   * A choice finished with `finish_reason: "error"` (Mistral's own failure in the middle of a stream):
   * the chunk's `error` message when it carries one, else a generic one.
   */
  private failedFinish: string | undefined;
  /** A chunk came (a body with none, e.g. a JSON answer to a stream request, is not a stream: nothing to call unfinished). */
  private started = false;
  /** `data: [DONE]` came. */
  private done = false;

  constructor() {
    this.parser = new SseParser({ onEvent: (e) => this.onData(e.data) });
  }

  push(chunk: Uint8Array): void {
    this.parser.push(chunk);
  }

  end(): ResponseFacts {
    this.parser.end();
    const indices = [...new Set([...this.contents.keys(), ...this.refusals.keys(), ...this.transcripts.keys()])].sort((a, b) => a - b);
    const groups: string[][] = [];
    for (const i of indices) {
      groups.push([this.contents.get(i) ?? ""]);
      groups.push([this.refusals.get(i) ?? ""]);
      groups.push([this.transcripts.get(i) ?? ""]);
    }
    const toolCalls = [...this.tools]
      .filter((t) => t.name !== undefined)
      .sort((a, b) => a.choice - b.choice || a.order - b.order)
      .map((t) => (t.id === undefined ? { name: t.name as string } : { name: t.name as string, id: t.id }));
    const facts: ResponseFacts = { completionText: joinGroups(groups), toolCalls };
    const args = this.tools.filter((t) => t.args !== undefined).sort((a, b) => a.choice - b.choice || a.order - b.order);
    // A custom tool's input is free text: wrapped, so that toolArgumentsText judges it whole, as JSON answers do.
    if (args.length > 0) facts.toolArguments = args.map((t) => (t.custom ? { input: t.args } : t.args));
    const reasoning = joinGroups([...this.thinking.keys()].sort((a, b) => a - b).map((i) => [this.thinking.get(i) ?? ""]));
    if (reasoning) facts.reasoningText = reasoning;
    if (this.uncounted.length > 0) facts.uncountedOutputText = this.uncounted.join("");
    if (this.usage) facts.usage = this.usage;
    if (this.model !== undefined) facts.model = this.model;
    if (this.serviceTier !== undefined) facts.serviceTier = this.serviceTier;
    if (this.finishReason !== undefined) facts.finishReason = this.finishReason;
    if (this.errorMessage !== undefined) facts.errorMessage = this.errorMessage;
    else if (this.failedFinish !== undefined) facts.errorMessage = this.failedFinish; // the client has the provider's signal
    else if (this.started && !this.done) {
      // A finish_reason is no end: the usage chunk (include_usage) and [DONE] still follow it.
      facts.endedEarly = true;
      facts.errorMessage = "the stream ended before its end marker (data: [DONE])";
    }
    return facts;
  }

  private onData(data: string): void {
    if (data.trim() === "[DONE]") {
      this.done = true;
      return;
    }
    const chunk = tryParseJson(data);
    if (!isObject(chunk)) return;
    this.started = true;
    const error = chatErrorMessage(chunk);
    if (error !== undefined && chunk.choices === undefined) {
      this.errorMessage = error;
      return;
    }
    const model = asString(chunk.model);
    if (model !== undefined) this.model = model;
    const tier = chunk.service_tier;
    if (typeof tier === "string") this.serviceTier = tier;
    const usage = chatUsage(chunk.usage);
    if (usage) this.usage = usage;
    asArray(chunk.choices).forEach((raw, position) => {
      if (!isObject(raw)) return;
      const choice = hasNumber(raw.index) ? raw.index : position;
      const finish = asString(raw.finish_reason);
      if (finish === "error") this.failedFinish ??= error ?? 'the stream ended with finish_reason "error"';
      // Per choice index, the lowest index wins (n>1: choices finish in any order; JSON reports the first by index).
      if (finish !== undefined && choice <= this.finishIndex) {
        this.finishReason = finish;
        this.finishIndex = choice;
      }
      const delta = raw.delta;
      if (!isObject(delta)) return;
      const text = deltaText(delta.content);
      if (text) this.contents.set(choice, (this.contents.get(choice) ?? "") + text);
      else if (!this.contents.has(choice)) this.contents.set(choice, "");
      let thought = "";
      for (const field of REASONING_FIELDS) {
        const value = delta[field];
        if (typeof value === "string") thought += value;
      }
      if (Array.isArray(delta.content)) {
        const parts: string[] = [];
        pushThinking(delta.content, parts);
        thought += parts.join("");
      }
      if (Array.isArray(delta.reasoning_details)) for (const s of reasoningDetailSlots(delta)) thought += s.get();
      if (thought) {
        this.uncounted.push(thought);
        this.thinking.set(choice, (this.thinking.get(choice) ?? "") + thought);
      }
      if (typeof delta.refusal === "string" && delta.refusal) {
        this.refusals.set(choice, (this.refusals.get(choice) ?? "") + delta.refusal);
      }
      if (isObject(delta.audio) && typeof delta.audio.transcript === "string" && delta.audio.transcript) {
        this.transcripts.set(choice, (this.transcripts.get(choice) ?? "") + delta.audio.transcript);
      }
      asArray(delta.tool_calls).forEach((call, pos) => {
        if (isObject(call)) this.onToolDelta(choice, call, pos);
      });
      if (isObject(delta.function_call)) this.onToolDelta(choice, { function: delta.function_call, index: -1 }, 0);
    });
  }

  private onToolDelta(choice: number, call: JsonObject, position: number): void {
    const index = hasNumber(call.index) ? call.index : position;
    const id = asString(call.id);
    const name = toolName(call);
    pushToolArguments(call, this.uncounted);
    let entry = this.tools.find(
      (t) => t.choice === choice && t.index === index && (id === undefined || t.id === undefined || t.id === id),
    );
    if (entry === undefined || (id !== undefined && entry.id !== undefined && entry.id !== id)) {
      entry = { choice, index, order: this.tools.length };
      this.tools.push(entry);
    }
    if (id !== undefined && entry.id === undefined) entry.id = id;
    if (name !== undefined && name !== "" && entry.name === undefined) entry.name = name;
    const args = isObject(call.function) ? call.function.arguments : isObject(call.custom) ? call.custom.input : undefined;
    if (!isObject(call.function) && isObject(call.custom)) entry.custom = true;
    if (typeof args === "string") entry.args = typeof entry.args === "string" ? entry.args + args : args;
    else if (isObject(args)) entry.args = args;
  }
}
