// OpenAI Responses API (POST /v1/responses): the wire format of `client.responses.create` in the openai
// SDK, behind the same provider (name "openai", its auth, price table and base URL) as chat completions.
//
// Request: `instructions` (the system part) and `input`, a string or a list of items: messages (role
// system/developer/user/assistant, content a string or input_text/output_text/refusal parts), the
// model's earlier function_call / custom_tool_call items and their *_output items, reasoning items sent
// back (their summary and reasoning text). Answer: a Response whose `output` lists items: message
// (output_text parts with url_citation annotations, refusal parts), reasoning (summary_text parts,
// reasoning_text content), function_call (`arguments` JSON text), custom_tool_call (`input` free text),
// and the calls of OpenAI-hosted tools (web_search_call, file_search_call, mcp_call, …), counted as tool
// calls but carrying nothing the agent runs. Streams are typed SSE events (`event: response.…`), whose
// `*.done` events and final response repeat the text the deltas carried (policy/stream/responses-format.ts).
import { argumentsText, asArray, asCount, asString, fieldsJson, isObject, tryParseJson } from "./json.js";
import type { JsonObject } from "./json.js";
import { ProviderRequestError } from "./errors.js";
import { SseParser } from "./sse-parser.js";
import { moveUrlCitations, URL_CITATION_STRINGS } from "./chat-completions.js";
import { normalizeSearch, normalizeSubPath } from "./paths.js";
import { pushGroup, schemaSlots, type InputExtraGroup } from "./input-extras.js";
import { argumentSlots, fileDataTextSlot, joinGroups, mapGroups, mapSlots, pushAll, readSlots, slot } from "./text-slots.js";
import type { TextSlot } from "./text-slots.js";
import type { ErrorEventOptions, ProviderAdapter, ResponseFacts, StreamObserver, ToolCallFact, UpstreamTarget, Usage } from "./types.js";

export const RESPONSES_PATH = "/v1/responses";

const SYSTEM_ROLES = new Set(["system", "developer"]);
/** Content part types that carry text in `text` (input parts, an assistant turn's output parts sent back). */
const TEXT_PARTS = new Set(["input_text", "output_text", "text", "summary_text", "reasoning_text"]);

/**
 * POST /v1/responses. A `background` response is refused: its answer is fetched later with GET
 * /v1/responses/{id}, which no outbound policy would judge (the sidecar governs the answer it relays).
 */
export function resolveResponses(subPath: string, search: string, body: unknown): UpstreamTarget | null {
  if (normalizeSubPath(subPath) !== RESPONSES_PATH) return null;
  if (isObject(body) && body.background === true) {
    throw new ProviderRequestError("invalid_body", "background responses are not supported through the proxy: their answer is fetched later (GET /v1/responses/{id}), where no outbound policy could judge it; send the request without `background`");
  }
  const model = isObject(body) ? (asString(body.model) ?? "") : "";
  const stream = isObject(body) && body.stream === true;
  return { path: `${RESPONSES_PATH}${normalizeSearch(search)}`, model, stream, adapter: openaiResponsesAdapter };
}

/**
 * Text slots of a content field: a string, or the text of each text part (refusal parts by their
 * `refusal`; an `input_file` part by its `file_data` when that holds a text file, a base64 data URL of a
 * text MIME type or plain base64 of UTF-8 text, read as the UTF-8 it encodes: fileDataTextSlot).
 */
function contentSlots(holder: JsonObject, key: string): TextSlot[] {
  const content = holder[key];
  if (typeof content === "string") return [slot(holder, key)];
  const slots: TextSlot[] = [];
  for (const part of asArray(content)) {
    if (!isObject(part)) continue;
    if (typeof part.type === "string" && TEXT_PARTS.has(part.type) && typeof part.text === "string") slots.push(slot(part, "text"));
    else if (part.type === "refusal" && typeof part.refusal === "string") slots.push(slot(part, "refusal"));
    else if (part.type === "input_file") {
      const file = fileDataTextSlot(part, "file_data", part.filename);
      if (file) slots.push(file);
    }
  }
  return slots;
}

/** The string leaves of holder[key] (an object or array of any depth, a JSON text, or a string). */
function leaves(holder: JsonObject, key: string): TextSlot[] {
  return holder[key] === undefined || holder[key] === null ? [] : argumentSlots(holder, key);
}

/**
 * The actions of the calls the agent itself runs (computer_call `action`, shell_call and
 * local_shell_call `action`: commands, env…, apply_patch_call `operation`: path and diff), leaf by leaf:
 * judged like function-call arguments. Undefined for other items.
 */
export function agentActionKey(item: JsonObject): string | undefined {
  switch (item.type) {
    case "computer_call":
    case "shell_call":
    case "local_shell_call":
      return "action";
    case "apply_patch_call":
      return "operation";
    default:
      return undefined;
  }
}

/**
 * Text of OpenAI-hosted tools' items, model-written or fetched: web search queries and the URL or
 * pattern it opened, file search queries and the text of its results, code interpreter code and logs,
 * MCP calls' arguments, output and error, an MCP approval request's arguments (the agent approves a
 * third-party call on them), an image generation's revised prompt. Judged with the answer, redacted on
 * their own (quotedText / afterRedaction), and read as input when sent back. `streamed`: without the
 * code and MCP arguments, which a stream carries in deltas of their own (policy/stream/responses-format.ts).
 */
export function hostedToolSlots(item: JsonObject, streamed = false): TextSlot[] {
  const slots: TextSlot[] = [];
  const strings = (holder: unknown, keys: readonly string[]) => {
    if (!isObject(holder)) return;
    for (const k of keys) if (typeof holder[k] === "string" && holder[k] !== "") slots.push(slot(holder, k));
  };
  switch (item.type) {
    case "web_search_call":
      if (isObject(item.action)) {
        strings(item.action, ["query", "pattern", "url"]);
        for (const [i, q] of asArray(item.action.queries).entries()) if (typeof q === "string" && q !== "") slots.push(slot(item.action.queries as unknown[], i));
      }
      break;
    case "file_search_call":
      for (const [i, q] of asArray(item.queries).entries()) if (typeof q === "string" && q !== "") slots.push(slot(item.queries as unknown[], i));
      for (const r of asArray(item.results)) strings(r, ["text"]);
      break;
    case "code_interpreter_call":
      if (!streamed) strings(item, ["code"]);
      for (const o of asArray(item.outputs)) strings(o, ["logs"]);
      break;
    case "mcp_call":
      if (!streamed) pushAll(slots, leaves(item, "arguments"));
      strings(item, ["output", "error"]);
      break;
    case "mcp_approval_request":
      pushAll(slots, leaves(item, "arguments"));
      break;
    case "mcp_approval_response":
      strings(item, ["reason"]);
      break;
    case "image_generation_call":
      strings(item, ["revised_prompt"]);
      break;
    default:
      break;
  }
  return slots;
}

/** The text slots of one input item (see the file's head for which items carry text). */
function inputItemSlots(item: JsonObject): TextSlot[] {
  switch (item.type ?? "message") {
    case "message":
      return contentSlots(item, "content");
    case "function_call":
      return item.arguments === undefined ? [] : argumentSlots(item, "arguments");
    case "custom_tool_call":
      return typeof item.input === "string" ? [slot(item, "input")] : [];
    case "function_call_output":
    case "custom_tool_call_output":
    case "local_shell_call_output":
    case "apply_patch_call_output":
      return contentSlots(item, "output");
    case "shell_call_output": {
      const slots: TextSlot[] = [];
      for (const o of asArray(item.output)) {
        if (!isObject(o)) continue;
        for (const k of ["stdout", "stderr"]) if (typeof o[k] === "string") slots.push(slot(o, k));
      }
      return slots;
    }
    case "reasoning": {
      const slots: TextSlot[] = [];
      for (const s of asArray(item.summary)) if (isObject(s) && typeof s.text === "string") slots.push(slot(s, "text"));
      pushAll(slots, contentSlots(item, "content"));
      return slots;
    }
    default: {
      const action = agentActionKey(item);
      return action === undefined ? hostedToolSlots(item) : leaves(item, action);
    }
  }
}

/** The values of a stored prompt's variables (`prompt: {id, variables}`): strings, input_text parts, or text input_file parts (contentSlots). */
function promptVariableSlots(body: JsonObject): TextSlot[] {
  if (!isObject(body.prompt) || !isObject(body.prompt.variables)) return [];
  const variables = body.prompt.variables;
  const slots: TextSlot[] = [];
  for (const k of Object.keys(variables)) {
    const v = variables[k];
    if (typeof v === "string") slots.push(slot(variables, k));
    else if (isObject(v) && v.type === "input_text" && typeof v.text === "string") slots.push(slot(v, "text"));
    else if (isObject(v) && v.type === "input_file") {
      const file = fileDataTextSlot(v, "file_data", v.filename);
      if (file) slots.push(file);
    }
  }
  return slots;
}

const isSystemItem = (item: JsonObject): boolean => (item.type ?? "message") === "message" && SYSTEM_ROLES.has(String(item.role));

/** The system part: `instructions`, then system/developer messages of the input, in order. */
export function responsesSystemSlots(body: unknown): TextSlot[] {
  if (!isObject(body)) return [];
  const slots: TextSlot[] = typeof body.instructions === "string" ? [slot(body, "instructions")] : [];
  for (const item of asArray(body.input)) if (isObject(item) && isSystemItem(item)) pushAll(slots, inputItemSlots(item));
  return slots;
}

/** Input slots: the system part first, then a stored prompt's variables, then the input (a string, or its other items in order). */
export function responsesPromptSlots(body: unknown): TextSlot[] {
  if (!isObject(body)) return [];
  const slots = responsesSystemSlots(body);
  pushAll(slots, promptVariableSlots(body));
  if (typeof body.input === "string") slots.push(slot(body, "input"));
  for (const item of asArray(body.input)) if (isObject(item) && !isSystemItem(item)) pushAll(slots, inputItemSlots(item));
  return slots;
}

function outputItems(json: unknown): JsonObject[] {
  return isObject(json) ? asArray(json.output).filter(isObject) : [];
}

/** Output groups: for each message item, its output_text parts (concatenated), then its refusal parts. */
export function responsesCompletionGroups(json: unknown): TextSlot[][] {
  const groups: TextSlot[][] = [];
  for (const item of outputItems(json)) {
    if (item.type !== "message") continue;
    const text: TextSlot[] = [];
    const refusal: TextSlot[] = [];
    for (const part of asArray(item.content)) {
      if (!isObject(part)) continue;
      if (part.type === "output_text" && typeof part.text === "string") text.push(slot(part, "text"));
      else if (part.type === "refusal" && typeof part.refusal === "string") refusal.push(slot(part, "refusal"));
    }
    groups.push(text);
    if (refusal.length > 0) groups.push(refusal);
  }
  return groups;
}

/** Reasoning groups: for each reasoning item, its summary texts then its reasoning_text content. */
export function responsesReasoningGroups(json: unknown): TextSlot[][] {
  return outputItems(json)
    .filter((item) => item.type === "reasoning")
    .map((item) => inputItemSlots(item));
}

/**
 * The tool-call arguments of an answer: function_call `arguments` (leaf by leaf), custom_tool_call
 * `input`, the action of a call the agent runs (computer, shell, local shell, apply patch).
 */
export function responsesAnswerToolSlots(json: unknown): TextSlot[] {
  const slots: TextSlot[] = [];
  for (const item of outputItems(json)) {
    const action = agentActionKey(item);
    if (item.type === "function_call" && item.arguments !== undefined) pushAll(slots, argumentSlots(item, "arguments"));
    else if (item.type === "custom_tool_call" && typeof item.input === "string") slots.push(slot(item, "input"));
    else if (action !== undefined) pushAll(slots, leaves(item, action));
  }
  return slots;
}

/**
 * A tool call an output item stands for: function and custom tool calls by their name, MCP calls by the
 * tool's name, OpenAI-hosted tools (`web_search_call`, `file_search_call`, `code_interpreter_call`, …)
 * by the tool type (`web_search`).
 */
export function responsesToolCall(item: JsonObject): ToolCallFact | undefined {
  const type = asString(item.type);
  if (type === undefined) return undefined;
  const id = asString(item.call_id) ?? asString(item.id);
  let name: string | undefined;
  if (type === "function_call" || type === "custom_tool_call" || type === "mcp_call") name = asString(item.name);
  else if (type.endsWith("_call")) name = type.slice(0, -"_call".length);
  if (name === undefined || name === "") return undefined;
  return id === undefined ? { name } : { name, id };
}

function toolCalls(json: unknown): ToolCallFact[] {
  const calls: ToolCallFact[] = [];
  for (const item of outputItems(json)) {
    const call = responsesToolCall(item);
    if (call) calls.push(call);
  }
  return calls;
}

/**
 * input_tokens includes input_tokens_details.cached_tokens and .cache_write_tokens (priced apart, as in
 * chat completions' prompt_tokens_details); output_tokens includes reasoning tokens.
 */
export function responsesUsage(raw: unknown): Usage | undefined {
  if (!isObject(raw)) return undefined;
  const details = isObject(raw.input_tokens_details) ? raw.input_tokens_details : {};
  return {
    inputTokens: asCount(raw.input_tokens),
    outputTokens: asCount(raw.output_tokens),
    cachedInputTokens: asCount(details.cached_tokens),
    cacheWriteTokens: asCount(details.cache_write_tokens),
  };
}

/** The error of an HTTP error body ({error:{message}}) or of a failed response ({status:"failed", error:{code,message}}). */
function errorMessage(json: unknown): string | undefined {
  if (!isObject(json)) return undefined;
  if (isObject(json.error)) return asString(json.error.message) ?? JSON.stringify(json.error);
  if (typeof json.error === "string") return json.error;
  return undefined;
}

/** Billed output that is not answer text: reasoning and tool-call arguments, in output order. */
function uncountedText(json: unknown): string {
  const out: string[] = [];
  for (const item of outputItems(json)) {
    if (item.type === "reasoning") for (const s of inputItemSlots(item)) out.push(s.get());
    else if (item.type === "function_call") out.push(argumentsText(item.arguments));
    else if (item.type === "custom_tool_call" && typeof item.input === "string") out.push(item.input);
  }
  return out.join("");
}

/** The whole-call arguments of an answer's tool calls, in order (ResponseFacts.toolArguments for streams). */
function toolArguments(json: unknown): unknown[] {
  const args: unknown[] = [];
  for (const item of outputItems(json)) {
    const action = agentActionKey(item);
    if (item.type === "function_call" && item.arguments !== undefined) args.push(item.arguments);
    else if (item.type === "custom_tool_call" && typeof item.input === "string") args.push({ input: item.input });
    else if (action !== undefined && item[action] !== undefined && item[action] !== null) args.push(item[action]);
  }
  return args;
}

/**
 * The finish reason: why an incomplete response stopped (`max_output_tokens`, `content_filter`), else its
 * status (`completed`, `failed`, `cancelled`).
 */
function finishReason(json: JsonObject): string | undefined {
  if (isObject(json.incomplete_details)) {
    const reason = asString(json.incomplete_details.reason);
    if (reason !== undefined) return reason;
  }
  return asString(json.status);
}

export function parseResponsesAnswer(json: unknown): ResponseFacts {
  const facts: ResponseFacts = {
    completionText: joinGroups(responsesCompletionGroups(json).map((g) => g.map((s) => s.get()))),
    toolCalls: toolCalls(json),
  };
  const reasoning = joinGroups(responsesReasoningGroups(json).map((g) => g.map((s) => s.get())));
  if (reasoning) facts.reasoningText = reasoning;
  if (isObject(json)) {
    const usage = responsesUsage(json.usage);
    if (usage) facts.usage = usage;
    const model = asString(json.model);
    if (model !== undefined) facts.model = model;
    const tier = asString(json.service_tier);
    if (tier !== undefined) facts.serviceTier = tier;
    const finish = finishReason(json);
    if (finish !== undefined) facts.finishReason = finish;
  }
  if (facts.usage === undefined) {
    const uncounted = uncountedText(json);
    if (uncounted) facts.uncountedOutputText = uncounted;
  }
  const error = errorMessage(json);
  if (error !== undefined) facts.errorMessage = error;
  return facts;
}

/** The url_citation annotations of an output_text part (flat: start_index, end_index, url, title). */
function urlCitations(part: JsonObject): JsonObject[] {
  return asArray(part.annotations).filter((a): a is JsonObject => isObject(a) && a.type === "url_citation");
}

/**
 * Annotations that cite a file by name (file search, code interpreter): the `filename` is text the
 * answer shows (a file named after a customer or a case number), judged and redacted like a citation's
 * title. Their offsets (`index`; a container file's range) are left as they are.
 */
export const FILE_CITATION_TYPES: ReadonlySet<unknown> = new Set(["file_citation", "container_file_citation"]);

function fileCitations(part: JsonObject): JsonObject[] {
  return asArray(part.annotations).filter((a): a is JsonObject => isObject(a) && FILE_CITATION_TYPES.has(a.type) && typeof a.filename === "string");
}

/** The output_text parts of an answer, in order. */
function outputTextParts(json: unknown): JsonObject[] {
  const parts: JsonObject[] = [];
  for (const item of outputItems(json)) {
    if (item.type !== "message") continue;
    for (const part of asArray(item.content)) if (isObject(part) && part.type === "output_text" && typeof part.text === "string") parts.push(part);
  }
  return parts;
}

/**
 * After an outbound redaction, each output_text part's url_citation annotations are moved onto the
 * part's redacted text (their offsets count in the part), as chat completions' are
 * (chat-completions.ts chatAfterRedaction); their url and title are redacted on their own, as are the
 * hosted tools' texts (hostedToolSlots); the parts' logprobs are dropped.
 */
export function responsesAfterRedaction(original: unknown, redacted: unknown, redactText: (text: string) => string): void {
  for (const item of outputItems(redacted)) for (const s of hostedToolSlots(item)) {
    const value = s.get();
    const after = redactText(value);
    if (after !== value) s.set(after);
  }
  // Log probabilities spell the answer token by token: they would show what redaction took out.
  for (const part of outputTextParts(redacted)) if (Array.isArray(part.logprobs) && part.logprobs.length > 0) part.logprobs = [];
  const before = outputTextParts(original);
  outputTextParts(redacted).forEach((part, i) => {
    for (const citation of fileCitations(part)) citation.filename = redactText(citation.filename as string);
    const citations = urlCitations(part);
    if (citations.length > 0) moveUrlCitations(citations, before[i]?.text as string | undefined, part.text as string, redactText);
  });
}

/** The url and title of every url_citation, the filename of every file citation, and the hosted tools' texts (hostedToolSlots), joined by "\n\n": judged with the answer. */
export function responsesQuotedText(json: unknown): string {
  const out: string[] = [];
  for (const item of outputItems(json)) for (const s of hostedToolSlots(item)) out.push(s.get());
  for (const part of outputTextParts(json)) {
    for (const citation of urlCitations(part)) for (const field of URL_CITATION_STRINGS) if (typeof citation[field] === "string" && citation[field] !== "") out.push(citation[field]);
    for (const citation of fileCitations(part)) if (citation.filename !== "") out.push(citation.filename as string);
  }
  return out.join("\n\n");
}

/** The terminal events of a response stream: each carries the whole final Response. */
export const RESPONSE_TERMINAL_EVENTS: ReadonlySet<string> = new Set(["response.completed", "response.incomplete", "response.failed"]);

/** One output item as the stream built it so far (deltas, then the `*.done` events' whole values). */
interface StreamedItem {
  type: string;
  item: JsonObject;
  /** Text of content part c (output_text, refusal or reasoning_text), and of summary part s. */
  content: Map<number, { type: string; text: string }>;
  summary: Map<number, string>;
  arguments: string;
}

/**
 * Observer for Responses streams. It mirrors what the openai SDK's ResponseStream gives the client: the
 * items the deltas build (a `*.done` event's whole value replaces the deltas, as the SDK does), replaced
 * by the final Response of a terminal event (response.completed / incomplete / failed) when one comes,
 * whose usage is the stream's.
 */
export class ResponsesObserver implements StreamObserver {
  private readonly parser: SseParser;
  private readonly items = new Map<number, StreamedItem>();
  private final: JsonObject | undefined;
  /** An event of the response came (a body with none is not a Responses stream: nothing to call unfinished). */
  private started = false;
  private model: string | undefined;
  /** The service tier the last response object named (response.created names the requested one, the final one the tier that served). */
  private serviceTier: string | undefined;
  private errorMessage: string | undefined;

  constructor() {
    this.parser = new SseParser({ onEvent: (e) => this.onEvent(e.event, e.data) });
  }

  push(chunk: Uint8Array): void {
    this.parser.push(chunk);
  }

  end(): ResponseFacts {
    this.parser.end();
    const answer = this.final ?? { output: this.builtOutput() };
    const facts = parseResponsesAnswer(answer);
    if (this.final === undefined && this.errorMessage === undefined && this.started) {
      facts.endedEarly = true;
      facts.errorMessage = "the stream ended before its final response (response.completed)";
    }
    const args = toolArguments(answer);
    if (args.length > 0) facts.toolArguments = args;
    if (facts.model === undefined && this.model !== undefined) facts.model = this.model;
    if (facts.serviceTier === undefined && this.serviceTier !== undefined) facts.serviceTier = this.serviceTier;
    if (this.errorMessage !== undefined) facts.errorMessage = this.errorMessage;
    return facts;
  }

  /** The output items as built from the deltas, in output_index order. */
  private builtOutput(): JsonObject[] {
    return [...this.items.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, s]) => {
        const item: JsonObject = { ...s.item };
        if (s.type === "message") {
          item.content = [...s.content.entries()].sort(([a], [b]) => a - b).map(([, p]) => (p.type === "refusal" ? { type: "refusal", refusal: p.text } : { type: "output_text", text: p.text }));
        } else if (s.type === "reasoning") {
          item.summary = [...s.summary.entries()].sort(([a], [b]) => a - b).map(([, text]) => ({ type: "summary_text", text }));
          item.content = [...s.content.entries()].sort(([a], [b]) => a - b).map(([, p]) => ({ type: "reasoning_text", text: p.text }));
        } else if (s.type === "function_call") item.arguments = s.arguments;
        else if (s.type === "custom_tool_call") item.input = s.arguments;
        return item;
      });
  }

  private itemAt(index: unknown, type = ""): StreamedItem | undefined {
    if (typeof index !== "number" || !Number.isInteger(index) || index < 0) return undefined;
    let s = this.items.get(index);
    if (!s) {
      s = { type, item: { type }, content: new Map(), summary: new Map(), arguments: "" };
      this.items.set(index, s);
    }
    return s;
  }

  private part(s: StreamedItem, index: unknown, type: string): { type: string; text: string } {
    const c = typeof index === "number" ? index : 0;
    let p = s.content.get(c);
    if (!p) {
      p = { type, text: "" };
      s.content.set(c, p);
    }
    return p;
  }

  private onEvent(eventName: string, data: string): void {
    const json = tryParseJson(data);
    if (!isObject(json)) return;
    const type = asString(json.type) ?? eventName;
    this.started = true;
    if (type === "error") {
      this.errorMessage = errorMessage(json) ?? asString(json.message) ?? "stream error";
      return;
    }
    if (isObject(json.response)) {
      const model = asString(json.response.model);
      if (model !== undefined) this.model = model;
      const tier = asString(json.response.service_tier);
      if (tier !== undefined) this.serviceTier = tier;
      if (RESPONSE_TERMINAL_EVENTS.has(type)) this.final = json.response;
      return;
    }
    const o = json.output_index;
    switch (type) {
      case "response.output_item.added":
      case "response.output_item.done": {
        if (!isObject(json.item)) return;
        const s = this.itemAt(o, asString(json.item.type) ?? "");
        if (!s) return;
        s.type = asString(json.item.type) ?? s.type;
        s.item = json.item;
        if (type === "response.output_item.done") this.takeWhole(s, json.item);
        else if (typeof json.item.arguments === "string") s.arguments = json.item.arguments;
        return;
      }
      case "response.output_text.delta":
      case "response.refusal.delta":
      case "response.reasoning_text.delta": {
        const s = this.itemAt(o);
        if (s && typeof json.delta === "string") this.part(s, json.content_index, type === "response.refusal.delta" ? "refusal" : type === "response.reasoning_text.delta" ? "reasoning_text" : "output_text").text += json.delta;
        return;
      }
      case "response.output_text.done":
      case "response.reasoning_text.done": {
        const s = this.itemAt(o);
        if (s && typeof json.text === "string") this.part(s, json.content_index, type === "response.reasoning_text.done" ? "reasoning_text" : "output_text").text = json.text;
        return;
      }
      case "response.refusal.done": {
        const s = this.itemAt(o);
        if (s && typeof json.refusal === "string") this.part(s, json.content_index, "refusal").text = json.refusal;
        return;
      }
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_summary_text.done": {
        const s = this.itemAt(o);
        const k = typeof json.summary_index === "number" ? json.summary_index : 0;
        const text = type.endsWith(".delta") ? json.delta : json.text;
        if (s && typeof text === "string") s.summary.set(k, type.endsWith(".delta") ? (s.summary.get(k) ?? "") + text : text);
        return;
      }
      case "response.function_call_arguments.delta":
      case "response.custom_tool_call_input.delta": {
        const s = this.itemAt(o);
        if (s && typeof json.delta === "string") s.arguments += json.delta;
        return;
      }
      case "response.function_call_arguments.done":
      case "response.custom_tool_call_input.done": {
        const s = this.itemAt(o);
        const whole = type === "response.function_call_arguments.done" ? json.arguments : json.input;
        if (s && typeof whole === "string") s.arguments = whole;
        return;
      }
      default:
        return;
    }
  }

  /** An output_item.done's item replaces what the deltas built for it. */
  private takeWhole(s: StreamedItem, item: JsonObject): void {
    if (s.type === "message") {
      s.content.clear();
      asArray(item.content).forEach((p, c) => {
        if (isObject(p) && p.type === "refusal" && typeof p.refusal === "string") s.content.set(c, { type: "refusal", text: p.refusal });
        else if (isObject(p) && typeof p.text === "string") s.content.set(c, { type: "output_text", text: p.text });
      });
    } else if (s.type === "reasoning") {
      s.summary.clear();
      s.content.clear();
      asArray(item.summary).forEach((p, k) => {
        if (isObject(p) && typeof p.text === "string") s.summary.set(k, p.text);
      });
      asArray(item.content).forEach((p, c) => {
        if (isObject(p) && typeof p.text === "string") s.content.set(c, { type: "reasoning_text", text: p.text });
      });
    } else if (s.type === "function_call" && typeof item.arguments === "string") s.arguments = item.arguments;
    else if (s.type === "custom_tool_call" && typeof item.input === "string") s.arguments = item.input;
  }
}

/**
 * The Responses API's error event. The SDK throws an APIError for any event whose data carries an
 * `error` object (core/streaming.ts); the flat code/message fields are the API's own `error` event shape.
 */
function errorEvent(message: string, code: string, options?: ErrorEventOptions): string {
  const details = options?.details ?? {};
  const error = { type: code, code, message, param: null, ...details };
  return `event: error\ndata: ${JSON.stringify({ type: "error", code, message, param: null, error })}\n\n`;
}

/**
 * Input outside the prompt (input-extras.ts): each tool definition of `tools` (a function tool's
 * `description` and `parameters` schema, a custom tool's `description`, a remote MCP server's
 * `server_description`), then the response format's schema (`text.format` of type json_schema:
 * `description`, then `schema`). Refusal parts sent back are prompt text (contentSlots).
 */
function inputExtraSlots(body: unknown): InputExtraGroup[] {
  const groups: InputExtraGroup[] = [];
  if (!isObject(body)) return groups;
  for (const tool of asArray(body.tools)) {
    if (!isObject(tool)) continue;
    const slots: TextSlot[] = [];
    if (tool.type === "function" || tool.type === "custom") {
      if (typeof tool.description === "string") slots.push(slot(tool, "description"));
      if (tool.type === "function" && tool.parameters !== undefined && tool.parameters !== null) pushAll(slots, schemaSlots(tool, "parameters"));
    } else if (tool.type === "mcp" && typeof tool.server_description === "string") slots.push(slot(tool, "server_description"));
    pushGroup(groups, "tool_definition", slots);
  }
  const format = isObject(body.text) ? body.text.format : undefined;
  if (isObject(format) && format.type === "json_schema") {
    const slots: TextSlot[] = typeof format.description === "string" ? [slot(format, "description")] : [];
    if (format.schema !== undefined && format.schema !== null) pushAll(slots, schemaSlots(format, "schema"));
    pushGroup(groups, "response_schema", slots);
  }
  return groups;
}

/** Billed input that is not prompt text: the request's tool definitions. */
function inputExtrasText(body: unknown): string {
  return fieldsJson(body, ["tools"]);
}

/** The Responses API's adapter: OpenAI's, with its own wire format (UpstreamTarget.wire from openaiAdapter.resolve). */
export const openaiResponsesAdapter: ProviderAdapter = {
  name: "openai",
  wire: "openai-responses",
  defaultBaseUrl: "https://api.openai.com",
  authHeaders: ["authorization"],
  resolve: resolveResponses,
  inputExtrasText,
  inputExtraSlots,
  promptParts: (body) => readSlots(body, responsesPromptSlots),
  promptText: (body) => readSlots(body, responsesPromptSlots).join("\n\n"),
  systemText: (body) => readSlots(body, responsesSystemSlots).join("\n\n"),
  mapPromptText: (body, fn) => mapSlots(body, responsesPromptSlots, fn),
  parseResponse: parseResponsesAnswer,
  mapCompletionText: (json, fn) => mapGroups(json, responsesCompletionGroups, fn),
  mapReasoningText: (json, fn) => mapGroups(json, responsesReasoningGroups, fn),
  afterRedaction: responsesAfterRedaction,
  quotedText: responsesQuotedText,
  answerToolSlots: responsesAnswerToolSlots,
  streamObserver: () => new ResponsesObserver(),
  errorEvent,
};
