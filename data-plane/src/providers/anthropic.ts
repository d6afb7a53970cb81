// Anthropic adapter: POST /v1/messages, x-api-key (or Bearer) auth, SSE with `event:` names
// (message_start, content_block_*, message_delta, message_stop, ping, error).
import { argumentsText, asArray, asCount, asString, fieldsJson, hasNumber, isObject, tryParseJson } from "./json.js";
import type { JsonObject } from "./json.js";
import { restoreSignedBlocks } from "./signed-reasoning.js";
import { normalizeSearch, normalizeSubPath, SPEC_PATH } from "./paths.js";
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

/** Blocks of a tool call the model makes (its `input` is output it writes; sent back, input it reads). */
export const TOOL_BLOCKS: ReadonlySet<string> = new Set(["tool_use", "server_tool_use", "mcp_tool_use"]);

/** Result blocks of the code Anthropic runs for the model (code execution tool): their content is the code's output. */
const CODE_RESULT_BLOCKS: ReadonlySet<string> = new Set(["code_execution_tool_result", "bash_code_execution_tool_result", "text_editor_code_execution_tool_result"]);

/**
 * The output texts of a code execution result block (`code_execution_tool_result`,
 * `bash_code_execution_tool_result`, `text_editor_code_execution_tool_result`), pushed onto `out`: its
 * content's `stdout` and `stderr`; a text editor's viewed file (`content`) and changed `lines`. Nothing
 * for other blocks. In an answer, output the client gets (answerToolSlots; in a stream, judged and
 * redacted on their own: policy/stream/formats.ts); sent back, text the model reads.
 */
export function codeResultSlots(block: JsonObject, out: TextSlot[]): void {
  if (!CODE_RESULT_BLOCKS.has(String(block.type)) || !isObject(block.content)) return;
  const content = block.content;
  if (typeof content.stdout === "string") out.push(slot(content, "stdout"));
  if (typeof content.stderr === "string") out.push(slot(content, "stderr"));
  if (typeof content.content === "string") out.push(slot(content, "content"));
  if (Array.isArray(content.lines)) pushAll(out, leafSlots(content, "lines"));
}

/**
 * Text slots of a `system` value or a message `content`: a string, or text blocks, in block order. A
 * block's text comes where the block is: `tool_result` and `mcp_tool_result` content (string or blocks,
 * so nested documents and search results too), a `document`'s `title` and `context`, then its
 * `source.data` (`source.type: "text"`, or `"base64"` with a text `media_type`: the UTF-8 it encodes)
 * or `source.content` (`"content"`: string or text blocks), a
 * `search_result` (`title`, `source`, then its `content` text blocks), the string leaves of a tool call's
 * `input` (the model's earlier `tool_use` sent back to it), the results of Anthropic's server tools sent
 * back: a web search result's `title`, a fetched page's document, a code execution's output
 * (codeResultSlots). Thinking blocks are not input text: their signature covers them, so they cannot be
 * rewritten.
 */
/**
 * The texts of a tool result block that an answer carries beside its text (Anthropic ran the tool, or
 * called the MCP server, for the model), pushed onto `out`: a code execution result's output
 * (codeResultSlots), an `mcp_tool_result`'s content (a string or text blocks: what the third-party
 * server answered, as the Responses API's `mcp_call` output). Web search and web fetch results are the
 * pages themselves, which pass (as Gemini's grounding sources do). Nothing for other blocks.
 */
export function answerResultSlots(block: JsonObject, out: TextSlot[]): void {
  if (block.type === "mcp_tool_result") pushAll(out, blockSlots(block, "content"));
  else codeResultSlots(block, out);
}

function blockSlots(holder: JsonObject, key: string): TextSlot[] {
  const value = holder[key];
  if (typeof value === "string") return [slot(holder, key)];
  const slots: TextSlot[] = [];
  for (const block of asArray(value)) {
    if (!isObject(block)) continue;
    if (block.type === "text" && typeof block.text === "string") slots.push(slot(block, "text"));
    else if (block.type === "tool_result" || block.type === "mcp_tool_result") pushAll(slots, blockSlots(block, "content"));
    else if (block.type === "document") documentSlots(block, slots);
    else if (block.type === "search_result") {
      if (typeof block.title === "string") slots.push(slot(block, "title"));
      if (typeof block.source === "string") slots.push(slot(block, "source"));
      pushAll(slots, blockSlots(block, "content"));
    } else if (TOOL_BLOCKS.has(String(block.type)) && isObject(block.input)) {
      pushAll(slots, argumentSlots(block, "input"));
    } else if (block.type === "web_search_tool_result") {
      for (const result of asArray(block.content)) if (isObject(result) && typeof result.title === "string") slots.push(slot(result, "title"));
    } else if (block.type === "web_fetch_tool_result") {
      if (isObject(block.content) && isObject(block.content.content) && block.content.content.type === "document") documentSlots(block.content.content, slots);
    } else codeResultSlots(block, slots);
  }
  return slots;
}

/**
 * A document block's text, pushed onto `slots`: `title`, `context`, then a text source's `data`, a
 * base64 source's file when its `media_type` is text (isTextMime: read as the UTF-8 its base64 encodes,
 * base64TextSlot; a PDF is not), or a content source's blocks.
 */
function documentSlots(block: JsonObject, slots: TextSlot[]): void {
  if (typeof block.title === "string") slots.push(slot(block, "title"));
  if (typeof block.context === "string") slots.push(slot(block, "context"));
  const source = block.source;
  if (!isObject(source)) return;
  if (source.type === "text" && typeof source.data === "string") slots.push(slot(source, "data"));
  else if (source.type === "base64" && typeof source.data === "string" && source.data !== "" && isTextMime(source.media_type)) slots.push(base64TextSlot(source, "data"));
  else if (source.type === "content") pushAll(slots, blockSlots(source, "content"));
}

function promptSlots(body: unknown): TextSlot[] {
  if (!isObject(body)) return [];
  const slots = blockSlots(body, "system");
  for (const message of asArray(body.messages)) {
    if (isObject(message)) pushAll(slots, blockSlots(message, "content"));
  }
  return slots;
}

/**
 * Input outside the prompt (input-extras.ts): each tool definition of `tools` (a custom tool's
 * `description`, its `input_schema`'s texts, its `input_examples`; server tools have none), then the
 * structured output schema (`output_config.format.schema`, the beta's `output_format.schema`).
 */
function inputExtraSlots(body: unknown): InputExtraGroup[] {
  const groups: InputExtraGroup[] = [];
  if (!isObject(body)) return groups;
  for (const tool of asArray(body.tools)) {
    if (!isObject(tool)) continue;
    const slots: TextSlot[] = typeof tool.description === "string" ? [slot(tool, "description")] : [];
    if (tool.input_schema !== undefined && tool.input_schema !== null) pushAll(slots, schemaSlots(tool, "input_schema"));
    if (Array.isArray(tool.input_examples)) pushAll(slots, leafSlots(tool, "input_examples", true));
    pushGroup(groups, "tool_definition", slots);
  }
  for (const format of [isObject(body.output_config) ? body.output_config.format : undefined, body.output_format]) {
    if (isObject(format) && format.schema !== undefined && format.schema !== null) pushGroup(groups, "response_schema", schemaSlots(format, "schema"));
  }
  return groups;
}

/** One group per content block of the answer of `type`, its string `field` the slot, in order. */
function blockGroups(json: unknown, type: string, field: string): TextSlot[][] {
  if (!isObject(json)) return [];
  return asArray(json.content)
    .filter(isObject)
    .filter((b) => b.type === type && typeof b[field] === "string")
    .map((b) => [slot(b, field)]);
}

/** One group per text block of the answer, in order. */
const completionGroups = (json: unknown): TextSlot[][] => blockGroups(json, "text", "text");

/** One group per thinking block of the answer, in order (redacted_thinking blocks are opaque data). */
const reasoningGroups = (json: unknown): TextSlot[][] => blockGroups(json, "thinking", "thinking");

/** The thinking blocks of an answer (or of a message's content sent back) with their signatures, in order. */
function signedThinking(content: unknown): JsonObject[] {
  return asArray(content).filter(isObject).filter((b) => b.type === "thinking" && typeof b.thinking === "string" && typeof b.signature === "string");
}

/**
 * The thinking blocks whose text an outbound redaction changed (`redacted` is `original` mapped by
 * mapReasoningText), each with its signature: what the client got and what the provider signed.
 */
function changedThinking(original: unknown, redacted: unknown): { signature: string; original: string; redacted: string }[] {
  if (!isObject(original) || !isObject(redacted)) return [];
  const before = signedThinking(original.content);
  const after = signedThinking(redacted.content);
  const out: { signature: string; original: string; redacted: string }[] = [];
  before.forEach((b, i) => {
    const a = after[i];
    if (a && a.signature === b.signature && a.thinking !== b.thinking) out.push({ signature: b.signature as string, original: b.thinking as string, redacted: a.thinking as string });
  });
  return out;
}

/**
 * A copy of a request body whose assistant thinking blocks get back the text their signature covers,
 * where `original(signature, text)` knows it (a block the sidecar redacted on its way to the client);
 * undefined when no block changed, so the body is forwarded as received.
 */
function restoreThinking(body: unknown, original: (signature: string, text: string) => string | undefined): unknown {
  return restoreSignedBlocks(body, { list: "content", type: "thinking", text: "thinking" }, original);
}

/**
 * input_tokens EXCLUDES cache reads and cache writes, so Usage.inputTokens = input_tokens +
 * cache_read_input_tokens + cache_creation_input_tokens. 1-hour cache writes are reported in
 * usage.cache_creation.ephemeral_1h_input_tokens.
 */
function anthropicUsage(raw: JsonObject): Usage {
  const read = asCount(raw.cache_read_input_tokens);
  const write = asCount(raw.cache_creation_input_tokens);
  const usage: Usage = {
    inputTokens: asCount(raw.input_tokens) + read + write,
    outputTokens: asCount(raw.output_tokens),
    cachedInputTokens: read,
    cacheWriteTokens: write,
  };
  const longWrites = isObject(raw.cache_creation) ? asCount(raw.cache_creation.ephemeral_1h_input_tokens) : 0;
  if (longWrites > 0) usage.cacheWriteLongTokens = longWrites;
  return usage;
}

function toolFact(block: JsonObject): ToolCallFact | undefined {
  if (!TOOL_BLOCKS.has(String(block.type))) return undefined;
  const name = asString(block.name);
  if (name === undefined) return undefined;
  const id = asString(block.id);
  return id === undefined ? { name } : { name, id };
}

function errorMessageOf(json: unknown): string | undefined {
  if (!isObject(json)) return undefined;
  if (json.type === "error" || isObject(json.error)) {
    const error = isObject(json.error) ? json.error : {};
    return asString(error.message) ?? JSON.stringify(json.error ?? json);
  }
  return undefined;
}

/**
 * Pushes a content block's billed output that is not answer text: a thinking block's text, a tool call's
 * input as JSON (an empty `{}`, as content_block_start carries before its input_json_delta, adds nothing).
 */
function pushUncounted(block: JsonObject, out: string[]): void {
  if (block.type === "thinking") {
    if (typeof block.thinking === "string" && block.thinking) out.push(block.thinking);
  } else if (TOOL_BLOCKS.has(String(block.type)) && !(isObject(block.input) && Object.keys(block.input).length === 0)) {
    const input = argumentsText(block.input);
    if (input) out.push(input);
  }
}

/**
 * The slots of a JSON answer that outbound policies judge beside its text, leaf by leaf, in block order:
 * the string leaves of each tool call's `input`, the output of the code Anthropic ran and an MCP server's
 * answer (answerResultSlots).
 */
function answerToolSlots(json: unknown): TextSlot[] {
  const out: TextSlot[] = [];
  if (!isObject(json)) return out;
  for (const block of asArray(json.content)) {
    if (!isObject(block)) continue;
    if (TOOL_BLOCKS.has(String(block.type))) {
      if (isObject(block.input)) pushAll(out, argumentSlots(block, "input"));
    } else answerResultSlots(block, out);
  }
  return out;
}

/**
 * The tier that priced the call, from the usage: `fast` when it ran in fast mode (`speed`, priced at the
 * model's fast rates), else its `service_tier` (standard, priority, batch: the table prices them at base rates).
 */
function servedTier(usage: JsonObject): string | undefined {
  return usage.speed === "fast" ? "fast" : asString(usage.service_tier);
}

function parseResponse(json: unknown): ResponseFacts {
  const facts: ResponseFacts = { completionText: readGroups(json, completionGroups), toolCalls: [] };
  if (!isObject(json)) return facts;
  if (isObject(json.usage)) {
    facts.usage = anthropicUsage(json.usage);
    const tier = servedTier(json.usage);
    if (tier !== undefined) facts.serviceTier = tier;
    const geo = asString(json.usage.inference_geo);
    if (geo !== undefined) facts.region = geo;
  }
  // Uncounted output is only counted when the provider reported no usage: collected only then.
  const uncounted: string[] | undefined = facts.usage === undefined ? [] : undefined;
  for (const block of asArray(json.content)) {
    if (!isObject(block)) continue;
    const fact = toolFact(block);
    if (fact) facts.toolCalls.push(fact);
    if (uncounted) pushUncounted(block, uncounted);
  }
  if (uncounted && uncounted.length > 0) facts.uncountedOutputText = uncounted.join("");
  const reasoning = readGroups(json, reasoningGroups);
  if (reasoning) facts.reasoningText = reasoning;
  const model = asString(json.model);
  if (model !== undefined) facts.model = model;
  const stop = asString(json.stop_reason);
  if (stop !== undefined) facts.finishReason = stop;
  const error = errorMessageOf(json);
  if (error !== undefined) facts.errorMessage = error;
  return facts;
}

function resolve(subPath: string, search: string, body: unknown): UpstreamTarget | null {
  const p = normalizeSubPath(subPath);
  if (p !== SPEC_PATH && p !== "/v1/messages") return null;
  const model = isObject(body) ? (asString(body.model) ?? "") : "";
  const stream = isObject(body) && body.stream === true;
  return { path: `/v1/messages${normalizeSearch(search)}`, model, stream };
}

/**
 * Observer for Messages streams. `message_stop` is the end marker: a stream that carried an event but
 * ended cleanly without it (message_delta's usage may have come) is ResponseFacts.endedEarly.
 */
class AnthropicObserver implements StreamObserver {
  private readonly parser = new SseParser({ onEvent: (e) => this.onEvent(e.event, e.data) });
  private readonly texts = new Map<number, string>();
  /** Thinking block text by block index (reasoningText). */
  private readonly thinking = new Map<number, string>();
  private readonly tools = new Map<number, ToolCallFact>();
  /** Tool input JSON text by block index (input_json_delta fragments joined). */
  private readonly toolInputs = new Map<number, string>();
  /**
   * What content_block_start carries whole that outbound policies judge with the tool inputs: a tool
   * call's non-empty `input` (Anthropic sends `{}` there and streams it, a compatible gateway may send it
   * whole), a code execution result's output and an MCP tool result's text as `{text}`; in arrival order.
   */
  private readonly wholeInputs: unknown[] = [];
  /** Thinking text and tool input JSON fragments, in arrival order (joined once at end()). */
  private readonly uncounted: string[] = [];
  private usageRaw: JsonObject | undefined;
  /** Usage is final only once message_delta reported it (message_start holds output_tokens ≈ 1). */
  private usageFinal = false;
  private model: string | undefined;
  private finishReason: string | undefined;
  private errorMessage: string | undefined;
  /** An event came (a body with none is not a stream: nothing to call unfinished). */
  private started = false;
  /** message_stop came. */
  private stopped = false;

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
    const reasoning = joinGroups(order(this.thinking).map((i) => [this.thinking.get(i) ?? ""]));
    if (reasoning) facts.reasoningText = reasoning;
    if (this.uncounted.length > 0) facts.uncountedOutputText = this.uncounted.join("");
    if (this.toolInputs.size > 0 || this.wholeInputs.length > 0) facts.toolArguments = [...order(this.toolInputs).map((i) => this.toolInputs.get(i)), ...this.wholeInputs];
    if (this.usageRaw && this.usageFinal) facts.usage = anthropicUsage(this.usageRaw);
    else if (this.usageRaw) {
      // Cut before message_delta: message_start's input, cache-read and cache-write counts are exact; the
      // output is counted locally when the usage is settled.
      const { outputTokens: _partial, ...input } = anthropicUsage(this.usageRaw);
      facts.partialUsage = input;
    }
    if (this.model !== undefined) facts.model = this.model;
    const tier = this.usageRaw && servedTier(this.usageRaw);
    if (tier) facts.serviceTier = tier;
    const geo = this.usageRaw && asString(this.usageRaw.inference_geo);
    if (geo) facts.region = geo;
    if (this.finishReason !== undefined) facts.finishReason = this.finishReason;
    if (this.errorMessage !== undefined) facts.errorMessage = this.errorMessage;
    else if (this.started && !this.stopped) {
      facts.endedEarly = true;
      facts.errorMessage = "the stream ended before its end marker (message_stop)";
    }
    return facts;
  }

  private onEvent(name: string, data: string): void {
    const payload = tryParseJson(data);
    if (!isObject(payload)) return;
    const type = asString(payload.type) ?? name;
    const index = hasNumber(payload.index) ? payload.index : 0;
    this.started = true;
    switch (type) {
      case "message_stop":
        this.stopped = true;
        break;
      case "message_start": {
        const message = isObject(payload.message) ? payload.message : {};
        this.model = asString(message.model) ?? this.model;
        if (isObject(message.usage)) this.usageRaw = { ...message.usage };
        break;
      }
      case "content_block_start": {
        const block = isObject(payload.content_block) ? payload.content_block : {};
        if (block.type === "text") this.texts.set(index, asString(block.text) ?? "");
        if (block.type === "thinking") this.thinking.set(index, asString(block.thinking) ?? "");
        const fact = toolFact(block);
        if (fact) this.tools.set(index, fact);
        pushUncounted(block, this.uncounted);
        if (fact && isObject(block.input) && Object.keys(block.input).length > 0) this.wholeInputs.push(block.input);
        else if (!fact && block.type !== "text" && block.type !== "thinking") {
          const output: TextSlot[] = [];
          answerResultSlots(block, output);
          for (const s of output) if (s.get() !== "") this.wholeInputs.push({ text: s.get() });
        }
        break;
      }
      case "content_block_delta": {
        const delta = isObject(payload.delta) ? payload.delta : {};
        if (delta.type === "text_delta" && typeof delta.text === "string") {
          this.texts.set(index, (this.texts.get(index) ?? "") + delta.text);
        } else if (delta.type === "input_json_delta" && typeof delta.partial_json === "string" && delta.partial_json) {
          this.uncounted.push(delta.partial_json);
          this.toolInputs.set(index, (this.toolInputs.get(index) ?? "") + delta.partial_json);
        } else if (delta.type === "thinking_delta" && typeof delta.thinking === "string" && delta.thinking) {
          this.uncounted.push(delta.thinking);
          this.thinking.set(index, (this.thinking.get(index) ?? "") + delta.thinking);
        }
        break;
      }
      case "message_delta": {
        const delta = isObject(payload.delta) ? payload.delta : {};
        this.finishReason = asString(delta.stop_reason) ?? this.finishReason;
        // message_delta usage is cumulative: its fields replace those of message_start.
        if (isObject(payload.usage)) {
          const merged: JsonObject = { ...(this.usageRaw ?? {}) };
          for (const [k, v] of Object.entries(payload.usage)) if (v !== null && v !== undefined) merged[k] = v;
          this.usageRaw = merged;
          this.usageFinal = true;
        }
        break;
      }
      case "error": {
        this.errorMessage = errorMessageOf(payload) ?? data;
        break;
      }
      default:
        break; // ping, content_block_stop, unknown future events
    }
  }
}

export const anthropicAdapter: ProviderAdapter = {
  name: "anthropic",
  wire: "anthropic",
  defaultBaseUrl: "https://api.anthropic.com",
  authHeaders: ["x-api-key", "authorization"],
  resolve,
  inputExtrasText: (body) => fieldsJson(body, ["tools"]),
  inputExtraSlots,
  promptParts: (body) => readSlots(body, promptSlots),
  promptText: (body) => readSlots(body, promptSlots).join("\n\n"),
  systemText: (body) => (isObject(body) ? readSlots(body, (b) => blockSlots(b as JsonObject, "system")).join("\n\n") : ""),
  mapPromptText: (body, fn) => mapSlots(body, promptSlots, fn),
  parseResponse,
  mapCompletionText: (json, fn) => mapGroups(json, completionGroups, fn),
  mapReasoningText: (json, fn) => mapGroups(json, reasoningGroups, fn),
  answerToolSlots,
  changedSignedReasoning: changedThinking,
  restoreSignedReasoning: restoreThinking,
  streamObserver: () => new AnthropicObserver(),
  errorEvent(message: string, code: string, options?: ErrorEventOptions): string {
    const payload = { type: "error", error: { type: code, message, ...(options?.details ?? {}) } };
    return `event: error\ndata: ${JSON.stringify(payload)}\n\n`;
  },
};
