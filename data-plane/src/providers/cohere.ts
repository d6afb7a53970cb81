// Cohere adapter (API v2): POST /v2/chat, Bearer auth, SSE events message-start, content-start/delta/end,
// tool-plan-delta, tool-call-start/delta/end, message-end (usage, finish_reason, error). POST /v2/embed
// resolves to the embeddings adapter (embeddings/cohere.ts).
import { cohereEmbeddingsAdapter as embeddingsAdapterOf } from "./embeddings/cohere.js";
import { argumentsText, asArray, asCount, asString, fieldsJson, hasNumber, isObject, tryParseJson } from "./json.js";
import type { JsonObject } from "./json.js";
import { normalizeSearch, normalizeSubPath, SPEC_PATH } from "./paths.js";
import { moveQuote, placeByText, placeQuote, quoteText, type QuoteFields } from "./quotes.js";
import { rangeMapper, type RangeMapper } from "./shift-range.js";
import type { OffsetUnit } from "./text-offsets.js";
import { SseParser } from "./sse-parser.js";
import { pushGroup, schemaSlots, type InputExtraGroup } from "./input-extras.js";
import { argumentSlots, joinGroups, leafSlots, mapGroups, mapSlots, pushAll, readGroups, readSlots, slot } from "./text-slots.js";
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

function contentSlots(holder: JsonObject, key: string): TextSlot[] {
  const content = holder[key];
  if (typeof content === "string") return [slot(holder, key)];
  return asArray(content)
    .filter(isObject)
    .filter((part) => part.type === "text" && typeof part.text === "string")
    .map((part) => slot(part, "text"));
}

/**
 * Text of one Cohere document: a string document is one slot; an object's `data` (a string, or an
 * object whose string leaves are walked in key order) is its text; `id` is not.
 */
function documentSlots(container: JsonObject | unknown[], key: string | number): TextSlot[] {
  const doc = (container as Record<string | number, unknown>)[key];
  if (typeof doc === "string") return [slot(container, key)];
  return isObject(doc) ? leafSlots(doc, "data") : [];
}

/**
 * Input message content: a string, or items in order: {type:"text"} text and {type:"document"} data (tool
 * results); then, for an assistant message of the history, its `tool_plan` and its tool calls' arguments.
 */
function messageSlots(message: JsonObject): TextSlot[] {
  const content = message.content;
  const slots: TextSlot[] =
    typeof content === "string"
      ? [slot(message, "content")]
      : asArray(content)
          .filter(isObject)
          .flatMap((part) => {
            if (part.type === "text" && typeof part.text === "string") return [slot(part, "text")];
            if (part.type === "document") return documentSlots(part, "document");
            return [];
          });
  if (typeof message.tool_plan === "string") slots.push(slot(message, "tool_plan"));
  for (const call of asArray(message.tool_calls)) {
    if (isObject(call) && isObject(call.function) && call.function.arguments !== undefined) pushAll(slots, argumentSlots(call.function, "arguments"));
  }
  return slots;
}

/**
 * System messages first, then the top-level `documents` in order (Cohere renders them with the system
 * part), then the other messages in order (string content, text items, tool-result document data).
 */
function promptSlots(body: unknown): TextSlot[] {
  if (!isObject(body)) return [];
  const messages = asArray(body.messages).filter(isObject);
  const system = messages.filter((m) => m.role === "system");
  const rest = messages.filter((m) => m.role !== "system");
  const documents = Array.isArray(body.documents) ? body.documents : [];
  return [...system.flatMap(messageSlots), ...documents.flatMap((_, i) => documentSlots(documents, i)), ...rest.flatMap(messageSlots)];
}

/**
 * Input outside the prompt (input-extras.ts): each tool definition (`tools[].function`: `description`,
 * then its `parameters` schema's texts), then the response format's schema (`response_format.json_schema`).
 */
function inputExtraSlots(body: unknown): InputExtraGroup[] {
  const groups: InputExtraGroup[] = [];
  if (!isObject(body)) return groups;
  for (const tool of asArray(body.tools)) {
    if (!isObject(tool) || !isObject(tool.function)) continue;
    const fn = tool.function;
    const slots: TextSlot[] = typeof fn.description === "string" ? [slot(fn, "description")] : [];
    if (fn.parameters !== undefined && fn.parameters !== null) pushAll(slots, schemaSlots(fn, "parameters"));
    pushGroup(groups, "tool_definition", slots);
  }
  const format = body.response_format;
  if (isObject(format) && format.json_schema !== undefined && format.json_schema !== null) pushGroup(groups, "response_schema", schemaSlots(format, "json_schema"));
  return groups;
}

/** One group per text item of message.content (tool_plan is not counted as output text). */
function completionGroups(json: unknown): TextSlot[][] {
  if (!isObject(json) || !isObject(json.message)) return [];
  return contentSlots(json.message, "content").map((s) => [s]);
}

/** Reasoning groups: each thinking item of message.content (reasoning models), then the tool_plan. */
function reasoningGroups(json: unknown): TextSlot[][] {
  if (!isObject(json) || !isObject(json.message)) return [];
  const message = json.message;
  const groups = asArray(message.content)
    .filter(isObject)
    .filter((item) => item.type === "thinking" && typeof item.thinking === "string")
    .map((item) => [slot(item, "thinking")]);
  if (typeof message.tool_plan === "string") groups.push([slot(message, "tool_plan")]);
  return groups;
}

const CITATION: QuoteFields = { start: "start", end: "end", text: "text" };

/** Cohere's API counts in code points (Python); UTF-16 is tried first, as the two agree on most text. */
const CITATION_UNITS: readonly OffsetUnit[] = ["utf16", "codepoints"];

/**
 * The text a citation points into, in an answer message: its `type` says which (TEXT_CONTENT, the
 * default: the text of content item `content_index`, else the first text item; THINKING_CONTENT: that
 * item's thinking, else the first thinking item's; PLAN: the tool plan).
 */
function citedText(message: JsonObject, citation: JsonObject): string | undefined {
  if (citation.type === "PLAN") return asString(message.tool_plan);
  const thinking = citation.type === "THINKING_CONTENT";
  const items = asArray(message.content);
  const item = hasNumber(citation.content_index) ? items[citation.content_index] : items.find((i) => isObject(i) && i.type === (thinking ? "thinking" : "text"));
  if (!isObject(item)) return undefined;
  return asString(thinking ? item.thinking : item.text);
}

/**
 * Citations quote the answer (`text`) and point into it (`start`/`end`): after a redaction each one is
 * moved onto the text the client got and quotes it, so a redacted value cannot come back through a
 * citation. A citation that cannot be placed (no offsets, offsets that do not point at its text, an
 * unknown item) has its text redacted on its own. `sources` echo the documents and tool results the
 * client itself sent (inbound policies govern those). The answer's `logprobs` are removed.
 */
function citationsAfterRedaction(original: unknown, redacted: unknown, redactText: (text: string) => string): void {
  // Log probabilities (`logprobs: true`) spell the answer token by token: they would show what redaction
  // took out, so they are left out, as OpenAI's are dropped.
  if (isObject(redacted) && redacted.logprobs !== undefined) delete redacted.logprobs;
  if (!isObject(original) || !isObject(redacted) || !isObject(original.message) || !isObject(redacted.message)) return;
  const before = original.message;
  const after = redacted.message;
  const mappers = new Map<string, RangeMapper | undefined>();
  for (const citation of asArray(after.citations)) {
    if (!isObject(citation)) continue;
    const from = citedText(before, citation);
    const to = citedText(after, citation);
    const placed = from === undefined ? undefined : (placeQuote(citation, CITATION, from, CITATION_UNITS) ?? placeByText(citation, CITATION, from, "codepoints"));
    const key = `${String(citation.type)}:${String(citation.content_index)}`;
    if (placed && from !== undefined && to !== undefined) {
      if (!mappers.has(key)) mappers.set(key, rangeMapper(from, to));
      const map = mappers.get(key);
      if (map) {
        moveQuote(citation, CITATION, placed, to, map);
        continue;
      }
    }
    const own = quoteText(citation, CITATION);
    if (own !== undefined) citation.text = redactText(own);
  }
}

/**
 * Cohere reports billed_units (what is charged) and tokens (raw, including Cohere's own system
 * preamble). Usage uses billed_units, falling back to tokens; cached_tokens is the prompt-cache hit count.
 */
function cohereUsage(raw: JsonObject): Usage {
  const billed = isObject(raw.billed_units) ? raw.billed_units : undefined;
  const tokens = isObject(raw.tokens) ? raw.tokens : {};
  const pick = (key: string) => (billed && billed[key] !== undefined ? asCount(billed[key]) : asCount(tokens[key]));
  return {
    inputTokens: pick("input_tokens"),
    outputTokens: pick("output_tokens"),
    cachedInputTokens: asCount(raw.cached_tokens),
    cacheWriteTokens: 0,
  };
}

function toolFact(call: unknown): ToolCallFact | undefined {
  if (!isObject(call) || !isObject(call.function)) return undefined;
  const name = asString(call.function.name);
  if (name === undefined || name === "") return undefined;
  const id = asString(call.id);
  return id === undefined ? { name } : { name, id };
}

/** Pushes a tool call's (or a streamed fragment's) `function.arguments` text. */
function pushArguments(call: unknown, out: string[]): void {
  if (!isObject(call) || !isObject(call.function)) return;
  const args = argumentsText(call.function.arguments);
  if (args) out.push(args);
}

/** Billed output of an answer message that is not answer text: thinking items, tool_plan, tool-call arguments. */
function uncountedText(message: JsonObject): string {
  const out: string[] = [];
  for (const item of asArray(message.content)) {
    if (isObject(item) && item.type === "thinking" && typeof item.thinking === "string" && item.thinking) out.push(item.thinking);
  }
  if (typeof message.tool_plan === "string" && message.tool_plan) out.push(message.tool_plan);
  for (const call of asArray(message.tool_calls)) pushArguments(call, out);
  return out.join("");
}

function parseResponse(json: unknown): ResponseFacts {
  const facts: ResponseFacts = { completionText: readGroups(json, completionGroups), toolCalls: [] };
  if (!isObject(json)) return facts;
  const reasoning = readGroups(json, reasoningGroups);
  if (reasoning) facts.reasoningText = reasoning;
  if (isObject(json.message)) {
    for (const call of asArray(json.message.tool_calls)) {
      const fact = toolFact(call);
      if (fact) facts.toolCalls.push(fact);
    }
  } else if (typeof json.message === "string") {
    facts.errorMessage = json.message; // error bodies are {id, message}
  }
  if (isObject(json.usage)) facts.usage = cohereUsage(json.usage);
  if (facts.usage === undefined && isObject(json.message)) {
    const uncounted = uncountedText(json.message); // only counted when the provider reported no usage
    if (uncounted) facts.uncountedOutputText = uncounted;
  }
  const finish = asString(json.finish_reason);
  if (finish !== undefined) facts.finishReason = finish;
  // Cohere's own failed generation in a 200 answer (its streams end so too: the observer's ERROR case).
  if (finish === "ERROR" && facts.errorMessage === undefined) facts.errorMessage = "the answer ended with finish_reason ERROR";
  return facts;
}

function resolve(subPath: string, search: string, body: unknown): UpstreamTarget | null {
  const p = normalizeSubPath(subPath);
  if (p !== SPEC_PATH && p !== "/v2/chat") return cohereEmbeddingsAdapter.resolve(subPath, search, body);
  const model = isObject(body) ? (asString(body.model) ?? "") : "";
  const stream = isObject(body) && body.stream === true;
  return { path: `/v2/chat${normalizeSearch(search)}`, model, stream };
}

function deltaMessage(payload: JsonObject): JsonObject {
  const delta = isObject(payload.delta) ? payload.delta : {};
  return isObject(delta.message) ? delta.message : {};
}

/**
 * Observer for v2 chat streams. `message-end` is the end marker (it carries the usage, and a failed
 * stream's finish_reason ERROR and error): a stream that carried an event but ended cleanly without it is
 * ResponseFacts.endedEarly.
 */
class CohereObserver implements StreamObserver {
  private readonly parser = new SseParser({ onEvent: (e) => this.onEvent(e.event, e.data) });
  private readonly texts = new Map<number, string>();
  /** Thinking text by content index, then the tool plan (reasoningText). */
  private readonly thinking = new Map<number, string>();
  private plan = "";
  private readonly tools = new Map<number, ToolCallFact>();
  /** Tool-call arguments JSON text by tool-call index (start and delta fragments joined). */
  private readonly toolArgs = new Map<number, string>();
  /** Thinking text, tool-plan and tool-call argument fragments, in arrival order (joined once at end()). */
  private readonly uncounted: string[] = [];
  private usage: Usage | undefined;
  private finishReason: string | undefined;
  private errorMessage: string | undefined;
  /** An event came (a body with none is not a stream: nothing to call unfinished). */
  private started = false;
  /** message-end came. */
  private ended = false;

  push(chunk: Uint8Array): void {
    this.parser.push(chunk);
  }

  end(): ResponseFacts {
    this.parser.end();
    const order = (m: Map<number, unknown>) => [...m.keys()].sort((a, b) => a - b);
    const facts: ResponseFacts = {
      completionText: joinGroups(order(this.texts).map((i) => [this.texts.get(i) ?? ""])),
      toolCalls: order(this.tools).map((i) => this.tools.get(i) as ToolCallFact),
    };
    const reasoning = joinGroups([...order(this.thinking).map((i) => [this.thinking.get(i) ?? ""]), [this.plan]]);
    if (reasoning) facts.reasoningText = reasoning;
    if (this.uncounted.length > 0) facts.uncountedOutputText = this.uncounted.join("");
    if (this.toolArgs.size > 0) facts.toolArguments = order(this.toolArgs).map((i) => this.toolArgs.get(i));
    if (this.usage) facts.usage = this.usage;
    if (this.finishReason !== undefined) facts.finishReason = this.finishReason;
    if (this.errorMessage !== undefined) facts.errorMessage = this.errorMessage;
    else if (this.started && !this.ended) {
      facts.endedEarly = true;
      facts.errorMessage = "the stream ended before its end marker (message-end)";
    }
    return facts;
  }

  /** Appends a start or delta event's argument fragment to its call's arguments text. */
  private onArguments(index: number, call: unknown): void {
    pushArguments(call, this.uncounted);
    if (isObject(call) && isObject(call.function) && typeof call.function.arguments === "string") {
      this.toolArgs.set(index, (this.toolArgs.get(index) ?? "") + call.function.arguments);
    }
  }

  private onEvent(name: string, data: string): void {
    const payload = tryParseJson(data);
    if (!isObject(payload)) return;
    const type = asString(payload.type) ?? name;
    const index = hasNumber(payload.index) ? payload.index : 0;
    this.started = true;
    switch (type) {
      case "content-start":
      case "content-delta": {
        const content = deltaMessage(payload).content;
        const text = isObject(content) ? asString(content.text) : undefined;
        this.texts.set(index, (this.texts.get(index) ?? "") + (text ?? ""));
        if (isObject(content) && typeof content.thinking === "string" && content.thinking) {
          this.uncounted.push(content.thinking);
          this.thinking.set(index, (this.thinking.get(index) ?? "") + content.thinking);
        }
        break;
      }
      case "tool-plan-delta": {
        const plan = deltaMessage(payload).tool_plan;
        if (typeof plan === "string" && plan) {
          this.uncounted.push(plan);
          this.plan += plan;
        }
        break;
      }
      case "tool-call-start": {
        const call = deltaMessage(payload).tool_calls;
        const fact = toolFact(call);
        if (fact) this.tools.set(index, fact);
        this.onArguments(index, call);
        break;
      }
      case "tool-call-delta": {
        this.onArguments(index, deltaMessage(payload).tool_calls);
        break;
      }
      case "message-end": {
        this.ended = true;
        const delta = isObject(payload.delta) ? payload.delta : {};
        this.finishReason = asString(delta.finish_reason) ?? this.finishReason;
        if (isObject(delta.usage)) this.usage = cohereUsage(delta.usage);
        const error = asString(delta.error);
        if (error !== undefined && error !== "") this.errorMessage = error;
        // A failed stream without a message is a failure still (the trace is an error, not a success).
        else if (this.finishReason === "ERROR") this.errorMessage = "the stream ended with finish_reason ERROR";
        break;
      }
      default:
        break; // message-start, content-end, tool-call-end, citation-*, debug
    }
  }
}

export const cohereAdapter: ProviderAdapter = {
  name: "cohere",
  wire: "cohere",
  defaultBaseUrl: "https://api.cohere.com",
  authHeaders: ["authorization"],
  resolve,
  inputExtrasText: (body) => fieldsJson(body, ["tools"]),
  inputExtraSlots,
  promptParts: (body) => readSlots(body, promptSlots),
  promptText: (body) => readSlots(body, promptSlots).join("\n\n"),
  systemText: (body) => (isObject(body) ? readSlots(body, (b) => asArray((b as JsonObject).messages).filter(isObject).filter((m) => m.role === "system").flatMap(messageSlots)).join("\n\n") : ""),
  mapPromptText: (body, fn) => mapSlots(body, promptSlots, fn),
  parseResponse,
  mapCompletionText: (json, fn) => mapGroups(json, completionGroups, fn),
  mapReasoningText: (json, fn) => mapGroups(json, reasoningGroups, fn),
  afterRedaction: citationsAfterRedaction,
  answerToolSlots: (json) =>
    isObject(json) && isObject(json.message)
      ? asArray(json.message.tool_calls).flatMap((call) => (isObject(call) && isObject(call.function) && call.function.arguments !== undefined ? argumentSlots(call.function, "arguments") : []))
      : [],
  quotedText: (json) =>
    isObject(json) && isObject(json.message)
      ? asArray(json.message.citations)
          .map((c) => (isObject(c) ? quoteText(c, CITATION) : undefined))
          .filter((t): t is string => t !== undefined && t !== "")
          .join("\n\n")
      : "",
  streamObserver: () => new CohereObserver(),
  errorEvent(message: string, code: string, options?: ErrorEventOptions): string {
    // Cohere v2 has no error event: a stream that fails ends with message-end, finish_reason ERROR and delta.error.
    const delta = { finish_reason: "ERROR", error: message, error_code: code, ...(options?.details ?? {}) };
    return `event: message-end\ndata: ${JSON.stringify({ type: "message-end", delta })}\n\n`;
  },
};

/** POST /v2/embed (embeddings/cohere.ts). */
export const cohereEmbeddingsAdapter: ProviderAdapter = embeddingsAdapterOf(cohereAdapter);
