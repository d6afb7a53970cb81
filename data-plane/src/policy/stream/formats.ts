// Where the completion text sits in each provider's stream events, and how to make an extra text event
// of the same kind. A "channel" is one independent output text (a choice's content or refusal, a
// content block, a candidate); the governor holds back and redacts per channel. The reasoning a model
// shows beside its answer (Anthropic thinking blocks, Gemini thought parts, Mistral and Cohere thinking
// chunks, Cohere's tool plan) has channels of its own, named `…:thinking` / `…:thought` / `plan`, so
// that textEvent knows which kind of event carries a held reasoning tail.
import type { QuoteFields } from "../../providers/quotes.js";
import type { OffsetUnit } from "../../providers/text-offsets.js";
import { chatErrorMessage, REASONING_DETAIL_FIELDS, REASONING_FIELDS, URL_CITATION, URL_CITATION_UNITS } from "../../providers/chat-completions.js";
import { CITATION_SOURCE, CITATION_SOURCE_STRINGS, CITATION_SOURCE_UNITS, citationSourcesOf, functionCallsOf, hostedPartSlots, mayHostText } from "../../providers/google.js";
import type { TextSlot } from "../../providers/text-slots.js";
import { answerResultSlots, TOOL_BLOCKS } from "../../providers/anthropic.js";
import type { WireFormat } from "../../providers/index.js";
import { asArray, EMPTY, indexOf, isObject, ownSlots, ownTexts, piece, toolPiece, type EventView, type Json, type StreamFormat, type TextPiece } from "./event-view.js";
import { responsesFormat } from "./responses-format.js";

export type { EventView, Quote, StreamFormat, TextPiece, ToolArgPiece } from "./event-view.js";

/**
 * The tool-call argument pieces of a chat-completion delta of choice `i` (calls by `index`; legacy
 * function_call). `whole`: each call comes whole in its delta (Mistral, whose clients read every delta's
 * call as a complete call: it must leave in its own delta, never split or completed by another one).
 */
function chatToolPieces(i: number, delta: Json, view: EventView, whole: boolean): void {
  const group = String(i);
  const seen = new Set<number>();
  asArray(delta.tool_calls).forEach((call, position) => {
    if (!isObject(call)) return;
    const k = indexOf(call, position);
    // Two calls of one delta under one index (a server that sends each call whole): told apart by position.
    const name = seen.has(k) ? `${i}:${k}#${position}` : `${i}:${k}`;
    seen.add(k);
    if (isObject(call.function) && (typeof call.function.arguments === "string" || isObject(call.function.arguments))) (view.toolArgs ??= []).push(toolPiece(name, group, call.function, "arguments", "json", whole));
    else if (isObject(call.custom) && typeof call.custom.input === "string") (view.toolArgs ??= []).push(toolPiece(`${name}:custom`, group, call.custom, "input", "text", whole));
  });
  const legacy = delta.function_call;
  if (isObject(legacy) && typeof legacy.arguments === "string") (view.toolArgs ??= []).push(toolPiece(`${i}:fc`, group, legacy, "arguments", "json", whole));
}

const CITATION: QuoteFields = { start: "start", end: "end", text: "text" };
const CITATION_UNITS: readonly OffsetUnit[] = ["utf16", "codepoints"];
const SEGMENT: QuoteFields = { start: "startIndex", end: "endIndex", text: "text" };
const SEGMENT_UNITS: readonly OffsetUnit[] = ["utf8", "utf16", "codepoints"];

/**
 * The provider's own error ends the stream unfinished (EventView.failed): the governor drops the text it
 * holds instead of releasing it, and the error event leaves last, as it came.
 */
const FAILED: EventView = { ...EMPTY, endsStream: true, failed: true };

/** A Gemini error element in the middle of a stream (`{"error": {...}}` without candidates). */
function isProviderError(json: Json): boolean {
  return isObject(json.error) && json.choices === undefined && json.candidates === undefined;
}

/**
 * Mistral's own failure in the middle of a stream: a chunk whose every choice finishes with
 * `finish_reason: "error"` and carries no output (no text, reasoning, refusal or tool call). A failing
 * chunk that still carries output is governed as any finishing chunk (its text must be judged).
 */
function failedChunk(json: Json): boolean {
  const choices = asArray(json.choices);
  return choices.length > 0 && choices.every((c) => isObject(c) && c.finish_reason === "error" && !carriesOutput(c.delta));
}

function carriesOutput(delta: unknown): boolean {
  if (!isObject(delta)) return false;
  const filled = (v: unknown) => v !== undefined && v !== null && v !== "" && !(Array.isArray(v) && v.length === 0);
  return [delta.content, delta.refusal, delta.tool_calls, delta.function_call, delta.reasoning_details, ...REASONING_FIELDS.map((f) => delta[f])].some(filled);
}

/** The reasoning channels of chat-completion choice `i` (names built once per index: every content delta ends them). */
const reasoningNames: string[][] = [];
function reasoningChannels(i: number): readonly string[] {
  const cached = Number.isInteger(i) && i >= 0 && i < 64 ? reasoningNames[i] : undefined;
  if (cached) return cached;
  const names = [`${i}:thinking`, ...REASONING_FIELDS.map((f) => `${i}:${f}`), `${i}:reasoning_details`];
  if (Number.isInteger(i) && i >= 0 && i < 64) reasoningNames[i] = names;
  return names;
}

/** The text pieces of a Mistral thinking chunk: `thinking` as a string, or its text parts. */
function thinkingPieces(channel: string, part: Json, out: TextPiece[]): void {
  if (typeof part.thinking === "string") out.push(piece(channel, part, "thinking"));
  else for (const t of asArray(part.thinking)) if (isObject(t) && typeof t.text === "string") out.push(piece(channel, t, "text"));
}

/**
 * A `reasoning.text` item carrying `text`, modelled on the last text item of choice `i` in `template`
 * (its `index`, which clients group items by, and `format`), so an inserted tail joins its own block.
 */
function reasoningDetailLike(template: unknown, i: number, text: string): Json {
  let like: Json | undefined;
  for (const raw of isObject(template) ? asArray(template.choices) : []) {
    if (!isObject(raw) || indexOf(raw, 0) !== i || !isObject(raw.delta)) continue;
    for (const item of asArray(raw.delta.reasoning_details)) if (isObject(item) && typeof item.text === "string") like = item;
  }
  const out: Json = { type: "reasoning.text", text, index: like && typeof like.index === "number" ? like.index : 0 };
  if (like && typeof like.format === "string") out.format = like.format;
  return out;
}

/**
 * OpenAI and Mistral chat-completion chunks: choices[].delta.content (string or text parts) and .refusal;
 * Mistral reasoning models stream `{type:"thinking", thinking:[{type:"text", text}]}` content parts
 * (channel `i:thinking`), which end when the choice's answer text starts or the choice finishes.
 */
const chatCompletions = (wholeToolCalls: boolean): StreamFormat => ({
  view(_event, data, json) {
    if (data.trim() === "[DONE]") return { ...EMPTY, endsStream: true };
    if (!isObject(json)) return EMPTY;
    // An error chunk as the stream observer reads it: OpenAI's {error}, Mistral's {object: "error", message}
    // (one that also has choices is read as a chunk: its text is governed, and it leaves as it is).
    if (json.choices === undefined && chatErrorMessage(json) !== undefined) return FAILED;
    if (failedChunk(json)) return FAILED;
    const view: EventView = { pieces: [], endsChannels: [], endsStream: false, endsReasoning: [] };
    asArray(json.choices).forEach((raw, position) => {
      if (!isObject(raw)) return;
      const i = indexOf(raw, position);
      const delta = raw.delta;
      let answered = false;
      if (isObject(delta)) {
        if (typeof delta.content === "string") {
          view.pieces.push(piece(`${i}:content`, delta, "content"));
          answered = delta.content !== "";
        } else {
          for (const part of asArray(delta.content)) {
            if (!isObject(part)) continue;
            if (part.type === "text" && typeof part.text === "string") {
              view.pieces.push(piece(`${i}:content`, part, "text"));
              answered ||= part.text !== "";
            } else if (part.type === "thinking") thinkingPieces(`${i}:thinking`, part, view.pieces);
          }
        }
        if (typeof delta.refusal === "string") view.pieces.push(piece(`${i}:refusal`, delta, "refusal"));
        // OpenAI-compatible servers' reasoning fields (reasoning_content, reasoning): channel `i:<field>`,
        // whose held tail leaves in a delta carrying that field.
        for (const field of REASONING_FIELDS) if (typeof delta[field] === "string") view.pieces.push(piece(`${i}:${field}`, delta, field));
        // OpenRouter's reasoning_details items (text, summary): channel `i:reasoning_details`. A
        // `reasoning.text` item's `signature` (Anthropic models) covers the block's text: it ends the
        // channel (a held tail leaves with it at the latest), and the block is remembered as it was sent.
        if (Array.isArray(delta.reasoning_details)) {
          for (const item of delta.reasoning_details) {
            if (!isObject(item)) continue;
            for (const field of REASONING_DETAIL_FIELDS) if (typeof item[field] === "string") view.pieces.push(piece(`${i}:reasoning_details`, item, field));
            if (item.type === "reasoning.text" && typeof item.signature === "string" && item.signature !== "") {
              view.signature = { channel: `${i}:reasoning_details`, value: item.signature };
              view.endsReasoning!.push(`${i}:reasoning_details`);
            }
          }
        }
        // Tool calls come after the reasoning too: a held reasoning tail leaves before them.
        if (Array.isArray(delta.tool_calls) && delta.tool_calls.length > 0) answered = true;
        if (delta.tool_calls !== undefined || delta.function_call !== undefined) chatToolPieces(i, delta, view, wholeToolCalls);
        // Web search models' url_citation annotations (usually in a late chunk): offsets into the whole
        // content of the choice, no text.
        for (const annotation of asArray(delta.annotations)) {
          if (isObject(annotation) && isObject(annotation.url_citation)) {
            (view.quotes ??= []).push({ channel: `${i}:content`, quote: annotation.url_citation, fields: URL_CITATION, units: URL_CITATION_UNITS, native: "codepoints" });
            ownTexts(view, annotation.url_citation, ["url", "title"]);
          }
        }
      }
      // Log probabilities spell the text token by token: dropped from every governed chunk.
      if (raw.logprobs !== undefined && raw.logprobs !== null) (view.drops ??= []).push({ holder: raw, key: "logprobs", empty: null });
      // Reasoning comes before the answer: its held tail leaves before the first answer text, not after it.
      if (answered) view.endsReasoning!.push(...reasoningChannels(i));
      if (raw.finish_reason !== null && raw.finish_reason !== undefined) {
        view.endsChannels.push(`${i}:content`, `${i}:refusal`);
        view.endsReasoning!.push(...reasoningChannels(i));
        (view.endsToolGroups ??= []).push(String(i));
      }
    });
    return view;
  },
  toolEvent(call, args, template) {
    const [index, k, kind] = call.split(":") as [string, string, string | undefined];
    const base: Json = isObject(template.json) ? { ...template.json } : {};
    delete base.usage;
    if (isObject(template.json) && "usage" in template.json && template.json.usage === null) base.usage = null;
    const position = Number.parseInt(k, 10);
    const delta =
      k === "fc" ? { function_call: { arguments: args } } : { tool_calls: [kind === "custom" ? { index: position, custom: { input: args } } : { index: position, function: { arguments: args } }] };
    base.choices = [{ index: Number(index), delta, finish_reason: null }];
    return { event: template.event, json: base };
  },
  textEvent(channel, text, template) {
    const [index, field] = channel.split(":") as [string, string];
    const base: Json = isObject(template.json) ? { ...template.json } : {};
    delete base.usage;
    if (isObject(template.json) && "usage" in template.json && template.json.usage === null) base.usage = null;
    const delta =
      field === "thinking"
        ? { content: [{ type: "thinking", thinking: [{ type: "text", text }] }] }
        : field === "reasoning_details"
          ? { reasoning_details: [reasoningDetailLike(template.json, Number(index), text)] }
          : { [field]: text };
    base.choices = [{ index: Number(index), delta, finish_reason: null }];
    return { event: template.event, json: base };
  },
});

/**
 * Anthropic Messages, per block index: text blocks (content_block_start text, text_delta; channel `i`)
 * and thinking blocks (content_block_start thinking, thinking_delta; channel `i:thinking`). A thinking
 * block ends with its signature_delta (the signature covers its text), so a held tail leaves before the
 * signature. redacted_thinking blocks are opaque (encrypted) and pass untouched. A tool call's input
 * (input_json_delta fragments, or whole in content_block_start) is judged as a call; a code execution
 * result's output and an MCP tool result's text, whole in their content_block_start, on their own.
 */
const anthropic: StreamFormat = {
  view(event, _data, json) {
    if (!isObject(json)) return EMPTY;
    const type = typeof json.type === "string" ? json.type : event;
    const channel = String(indexOf(json, 0));
    const thinking = `${channel}:thinking`;
    switch (type) {
      case "content_block_start": {
        const block = json.content_block;
        if (!isObject(block)) return EMPTY;
        if (block.type === "text" && typeof block.text === "string") return { ...EMPTY, pieces: [piece(channel, block, "text")] };
        if (block.type === "thinking" && typeof block.thinking === "string") return { ...EMPTY, pieces: [piece(thinking, block, "thinking")] };
        // A tool call whose input comes whole here (Anthropic sends `{}` and streams it in input_json_delta;
        // a compatible gateway may not): a call of its own, judged before this event leaves.
        if (TOOL_BLOCKS.has(String(block.type))) {
          return isObject(block.input) && Object.keys(block.input).length > 0 ? { ...EMPTY, toolArgs: [toolPiece(channel, channel, block, "input", "json", true)] } : EMPTY;
        }
        // The output of the code Anthropic ran, an MCP server's answer (result blocks come whole): judged and redacted on their own.
        const output: TextSlot[] = [];
        answerResultSlots(block, output);
        if (output.length === 0) return EMPTY;
        const view: EventView = { ...EMPTY };
        ownSlots(view, output);
        return view;
      }
      case "content_block_delta": {
        const delta = json.delta;
        if (!isObject(delta)) return EMPTY;
        if (delta.type === "text_delta" && typeof delta.text === "string") return { ...EMPTY, pieces: [piece(channel, delta, "text")] };
        if (delta.type === "thinking_delta" && typeof delta.thinking === "string") return { ...EMPTY, pieces: [piece(thinking, delta, "thinking")] };
        if (delta.type === "signature_delta" && typeof delta.signature === "string") return { ...EMPTY, endsReasoning: [thinking], signature: { channel: thinking, value: delta.signature } };
        // A tool_use (or server_tool_use) block's input, as JSON-text fragments: one call per block.
        if (delta.type === "input_json_delta" && typeof delta.partial_json === "string") return { ...EMPTY, toolArgs: [toolPiece(channel, channel, delta, "partial_json")] };
        return EMPTY;
      }
      case "content_block_stop":
        return { ...EMPTY, endsChannels: [channel], endsReasoning: [thinking], endsToolGroups: [channel] };
      case "message_delta":
      case "message_stop":
        return { ...EMPTY, endsStream: true };
      case "error":
        return FAILED;
      default:
        return EMPTY;
    }
  },
  textEvent(channel, text) {
    const [index, kind] = channel.split(":");
    const delta = kind === "thinking" ? { type: "thinking_delta", thinking: text } : { type: "text_delta", text };
    return { event: "content_block_delta", json: { type: "content_block_delta", index: Number(index), delta } };
  },
  toolEvent(call, args) {
    return { event: "content_block_delta", json: { type: "content_block_delta", index: Number(call), delta: { type: "input_json_delta", partial_json: args } } };
  },
};

/**
 * Gemini GenerateContentResponse chunks: candidates[].content.parts[].text, answer parts (channel `c`)
 * and thought parts (`thought: true`, the reasoning summary; channel `c:thought`). Thoughts come before
 * the answer: the thought channel ends at the candidate's first other part (answer text, function call)
 * or its finish. A part's code execution code and output and a text file come whole in their chunk:
 * judged and redacted on their own. A candidate's log probabilities are dropped.
 */
const google: StreamFormat = {
  view(_event, _data, json) {
    if (!isObject(json)) return EMPTY;
    if (isProviderError(json)) return FAILED;
    const view: EventView = { pieces: [], endsChannels: [], endsStream: false, endsReasoning: [] };
    asArray(json.candidates).forEach((raw, position) => {
      if (!isObject(raw)) return;
      const channel = String(indexOf(raw, position));
      const thought = `${channel}:thought`;
      const content = raw.content;
      let answered = false;
      if (isObject(content)) {
        asArray(content.parts).forEach((part, n) => {
          if (!isObject(part)) return;
          // A functionCall (or function_call) comes whole: its args object is a call of its own, judged in this chunk.
          let k = 0;
          functionCallsOf(part, (call) => {
            if (isObject(call.args)) (view.toolArgs ??= []).push(toolPiece(k++ === 0 ? `${channel}:${n}` : `${channel}:${n}#${k}`, channel, call, "args", "json", true));
          });
          // The code the model ran (executableCode), its output and a text file: whole here, judged alone.
          if (mayHostText(part)) {
            const hosted: TextSlot[] = [];
            hostedPartSlots(part, hosted);
            ownSlots(view, hosted);
          }
        });
        for (const part of asArray(content.parts)) {
          if (!isObject(part)) continue;
          if (part.thought === true) {
            if (typeof part.text === "string") view.pieces.push(piece(thought, part, "text"));
            continue;
          }
          if (typeof part.text === "string") view.pieces.push(piece(channel, part, "text"));
          answered ||= part.text !== "";
        }
      }
      if (answered) view.endsReasoning!.push(thought);
      if (raw.finishReason !== undefined && raw.finishReason !== null) {
        view.endsChannels.push(channel);
        view.endsReasoning!.push(thought);
      }
      // Log probabilities spell the text token by token (chosen and top candidates): dropped from every governed chunk.
      if (raw.logprobsResult !== undefined && raw.logprobsResult !== null) (view.drops ??= []).push({ holder: raw, key: "logprobsResult", empty: undefined });
      // Recitation citations point into the candidate's answer text (UTF-8 bytes, no text); Vertex AI
      // names the list `citations`.
      if (isObject(raw.citationMetadata)) {
        for (const source of citationSourcesOf(raw.citationMetadata)) {
          (view.quotes ??= []).push({ channel, quote: source, fields: CITATION_SOURCE, units: CITATION_SOURCE_UNITS, native: "utf8" });
          ownTexts(view, source, CITATION_SOURCE_STRINGS);
        }
      }
      // Google Search grounding quotes the candidate's answer text (segment offsets in UTF-8 bytes).
      const grounding = raw.groundingMetadata;
      if (isObject(grounding)) {
        for (const support of asArray(grounding.groundingSupports)) {
          if (isObject(support) && isObject(support.segment)) (view.quotes ??= []).push({ channel, quote: support.segment, fields: SEGMENT, units: SEGMENT_UNITS, native: "utf8" });
        }
        // The search queries the model wrote, and the widget showing them: on no channel, so judged and
        // redacted on their own.
        asArray(grounding.webSearchQueries).forEach((q, n) => {
          if (typeof q === "string") (view.quotes ??= []).push({ channel: "", quote: grounding.webSearchQueries as unknown as Json, fields: { start: "", end: "", text: String(n) }, units: SEGMENT_UNITS, native: "utf8" });
        });
        const entry = grounding.searchEntryPoint;
        if (isObject(entry) && typeof entry.renderedContent === "string") {
          (view.quotes ??= []).push({ channel: "", quote: entry, fields: { start: "", end: "", text: "renderedContent" }, units: SEGMENT_UNITS, native: "utf8" });
        }
      }
    });
    return view;
  },
  textEvent(channel, text, template) {
    const base: Json = isObject(template.json) ? { ...template.json } : {};
    delete base.usageMetadata;
    const [index, kind] = channel.split(":");
    const part = kind === "thought" ? { text, thought: true } : { text };
    base.candidates = [{ content: { parts: [part], role: "model" }, index: Number(index) }];
    return { event: template.event, json: base };
  },
  toolEvent(call, args, template) {
    // Not reached: a functionCall's args come whole and leave in their own chunk.
    const base: Json = isObject(template.json) ? { ...template.json } : {};
    delete base.usageMetadata;
    base.candidates = [{ content: { parts: [{ functionCall: { args } }], role: "model" }, index: Number(call.split(":")[0]) }];
    return { event: template.event, json: base };
  },
};

/** The tool plan's channel (one per answer). */
const PLAN = "plan";

/**
 * Cohere v2, per content index: content-start / content-delta `delta.message.content.text` (channel `i`)
 * and, for reasoning models, `.thinking` (channel `i:thinking`); and the tool plan, tool-plan-delta
 * `delta.message.tool_plan` (channel `plan`), which comes before the tool calls and the answer: it ends
 * at the first tool-call-start or content-start. A content event's `logprobs` are dropped.
 */
const cohere: StreamFormat = {
  view(event, _data, json) {
    if (!isObject(json)) return EMPTY;
    const type = typeof json.type === "string" ? json.type : event;
    const channel = String(indexOf(json, 0));
    const message = (): Json => {
      const delta = isObject(json.delta) ? json.delta : {};
      return isObject(delta.message) ? delta.message : {};
    };
    switch (type) {
      case "content-start":
      case "content-delta": {
        const content = message().content;
        const pieces: TextPiece[] = [];
        if (isObject(content) && typeof content.text === "string") pieces.push(piece(channel, content, "text"));
        if (isObject(content) && typeof content.thinking === "string") pieces.push(piece(`${channel}:thinking`, content, "thinking"));
        let view: EventView = pieces.length > 0 ? { ...EMPTY, pieces } : EMPTY;
        // Log probabilities (`logprobs: true`) spell the text token by token: dropped from every governed event.
        if (json.logprobs !== undefined && json.logprobs !== null) view = { ...view, drops: [{ holder: json, key: "logprobs", empty: undefined }] };
        return type === "content-start" ? { ...view, endsReasoning: [PLAN] } : view;
      }
      case "tool-plan-delta": {
        const m = message();
        return typeof m.tool_plan === "string" ? { ...EMPTY, pieces: [piece(PLAN, m, "tool_plan")] } : EMPTY;
      }
      case "tool-call-start":
      case "tool-call-delta": {
        // A call's arguments as JSON-text fragments (the start may carry the first), ended by tool-call-end.
        const call = message().tool_calls;
        const view: EventView = type === "tool-call-start" ? { ...EMPTY, endsReasoning: [PLAN] } : EMPTY;
        return isObject(call) && isObject(call.function) && typeof call.function.arguments === "string" ? { ...view, toolArgs: [toolPiece(channel, channel, call.function, "arguments")] } : view;
      }
      case "tool-call-end":
        return { ...EMPTY, endsToolGroups: [channel] };
      case "citation-start": {
        // A citation points into the text of content item `content_index` (TEXT_CONTENT, the default),
        // that item's thinking (THINKING_CONTENT) or the tool plan (PLAN).
        // A citation that cannot be placed (no offsets, an unknown channel) is redacted on its own.
        const citation = message().citations;
        if (!isObject(citation)) return EMPTY;
        const item = typeof citation.content_index === "number" ? citation.content_index : 0;
        const quoted = citation.type === "PLAN" ? PLAN : citation.type === "THINKING_CONTENT" ? `${item}:thinking` : String(item);
        return { ...EMPTY, quotes: [{ channel: quoted, quote: citation, fields: CITATION, units: CITATION_UNITS, native: "codepoints" }] };
      }
      case "content-end":
        return { ...EMPTY, endsChannels: [channel], endsReasoning: [`${channel}:thinking`] };
      case "message-end":
        return isObject(json.delta) && json.delta.finish_reason === "ERROR" ? FAILED : { ...EMPTY, endsStream: true };
      default:
        return EMPTY;
    }
  },
  textEvent(channel, text) {
    if (channel === PLAN) return { event: "tool-plan-delta", json: { type: "tool-plan-delta", delta: { message: { tool_plan: text } } } };
    const [index, kind] = channel.split(":");
    const content = kind === "thinking" ? { thinking: text } : { text };
    return { event: "content-delta", json: { type: "content-delta", index: Number(index), delta: { message: { content } } } };
  },
  toolEvent(call, args) {
    return { event: "tool-call-delta", json: { type: "tool-call-delta", index: Number(call), delta: { message: { tool_calls: { function: { arguments: args } } } } } };
  },
};

const FORMATS: Record<WireFormat, StreamFormat> = { openai: chatCompletions(false), mistral: chatCompletions(true), anthropic, google, cohere, "openai-responses": responsesFormat };

export function streamFormat(wire: WireFormat): StreamFormat {
  return FORMATS[wire];
}
