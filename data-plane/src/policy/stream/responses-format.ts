// OpenAI Responses API streams (providers/openai-responses.ts): typed events, one channel per content
// part of an output item: `o:c` an output_text part, `o:c:refusal` a refusal part, `o:c:reasoning` a
// reasoning_text part, `o:k:summary` reasoning summary part k (o the output_index). Deltas carry the text;
// every `*.done` event, the item's output_item.done and the final response (response.completed,
// .incomplete, .failed) repeat it whole, and the openai SDK replaces what the deltas built with those
// repeats: each is a `repeat` of its channel, set to the whole text the client got. Function and custom
// tool calls are calls `o` / `o:custom` (group `o`), their arguments' fragments in
// function_call_arguments.delta / custom_tool_call_input.delta, repeated whole by their `.done` event,
// output_item.done and the final response. The action of a call the agent runs (computer, shell, apply
// patch) comes whole in its item and is judged alone each time; a hosted tool's code and MCP arguments
// stream in channels `o:0:code` / `o:0:mcp`, its other texts (search queries, results, logs, outputs)
// are judged and redacted alone. Log probabilities (the text's tokens) are dropped from governed events.
import { URL_CITATION, URL_CITATION_UNITS } from "../../providers/chat-completions.js";
import { agentActionKey, FILE_CITATION_TYPES, hostedToolSlots, RESPONSE_TERMINAL_EVENTS } from "../../providers/openai-responses.js";
import { asArray, EMPTY, isObject, ownTexts, piece, slotHolder, toolPiece, type EventView, type Json, type StreamFormat, type ToolRepeat } from "./event-view.js";

const num = (v: unknown, fallback = 0): number => (typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : fallback);

function toolRepeat(call: string, kind: "json" | "text", holder: Json, key: string): ToolRepeat {
  return {
    call,
    kind,
    get: () => holder[key],
    set: (value) => {
      holder[key] = value;
    },
  };
}

function view(): EventView {
  return { pieces: [], endsChannels: [], endsStream: false };
}

/** Log probabilities (the text's tokens) of an event or a part: dropped (policy/stream/event-view.ts `drops`). */
function dropLogprobs(v: EventView, holder: Json): void {
  if (Array.isArray(holder.logprobs) && holder.logprobs.length > 0) (v.drops ??= []).push({ holder, key: "logprobs", empty: [] });
}


/** Texts of a hosted tool's item (providers/openai-responses.ts hostedToolSlots): judged and redacted on their own. */
function hostedTexts(v: EventView, item: Json): void {
  for (const s of hostedToolSlots(item, true)) ownTexts(v, slotHolder(s), ["text"]);
}

/** The channels of the texts a hosted tool streams in deltas of their own: code interpreter code, MCP call arguments. */
const STREAMED_TOOL_TEXT: Readonly<Record<string, { key: string; kind: string }>> = {
  code_interpreter_call: { key: "code", kind: "code" },
  mcp_call: { key: "arguments", kind: "mcp" },
};

/** The channel of content part c of output item o, by the part's type (undefined: no text). */
function partChannel(o: number, c: number, type: unknown): string | undefined {
  if (type === "output_text") return `${o}:${c}`;
  if (type === "refusal") return `${o}:${c}:refusal`;
  if (type === "reasoning_text") return `${o}:${c}:reasoning`;
  return undefined;
}

/**
 * A content part's text field (`refusal` for refusal parts) as a piece (`repeat` false: a part opening
 * with text, content_part.added) or a repeat of its channel; its url_citation annotations as quotes, its
 * file citations' names as texts of their own.
 */
function partFields(v: EventView, o: number, c: number, part: unknown, repeat: boolean): void {
  if (!isObject(part)) return;
  const channel = partChannel(o, c, part.type);
  if (channel === undefined) return;
  const key = part.type === "refusal" ? "refusal" : "text";
  if (typeof part[key] === "string") {
    if (repeat) {
      (v.repeats ??= []).push(piece(channel, part, key));
      v.endsChannels.push(channel);
    } else v.pieces.push(piece(channel, part, key));
  }
  for (const annotation of asArray(part.annotations)) annotationQuote(v, channel, annotation);
  dropLogprobs(v, part);
}

function annotationQuote(v: EventView, channel: string, annotation: unknown): void {
  if (!isObject(annotation)) return;
  // A file citation's name is judged and redacted on its own (providers/openai-responses.ts FILE_CITATION_TYPES).
  if (FILE_CITATION_TYPES.has(annotation.type)) return ownTexts(v, annotation, ["filename"]);
  if (annotation.type !== "url_citation") return;
  (v.quotes ??= []).push({ channel, quote: annotation, fields: URL_CITATION, units: URL_CITATION_UNITS, native: "codepoints" });
  ownTexts(v, annotation, ["url", "title"]);
}

/**
 * Every text of output item o: message parts, reasoning summary parts and reasoning_text content, tool
 * call arguments. `repeat`: the item is whole (output_item.done, a final response), so each text is a
 * repeat and each call ends; else (output_item.added) texts are pieces and arguments fragments.
 */
function itemFields(v: EventView, o: number, item: unknown, repeat: boolean): void {
  if (!isObject(item)) return;
  if (item.type === "message" || item.type === "reasoning") asArray(item.content).forEach((part, c) => partFields(v, o, c, part, repeat));
  if (item.type === "reasoning") {
    asArray(item.summary).forEach((part, k) => {
      if (!isObject(part) || typeof part.text !== "string") return;
      const channel = `${o}:${k}:summary`;
      if (repeat) {
        (v.repeats ??= []).push(piece(channel, part, "text"));
        v.endsChannels.push(channel);
      } else v.pieces.push(piece(channel, part, "text"));
    });
  }
  const call = item.type === "function_call" ? { name: String(o), kind: "json" as const, key: "arguments" } : item.type === "custom_tool_call" ? { name: `${o}:custom`, kind: "text" as const, key: "input" } : undefined;
  if (call && typeof item[call.key] === "string") {
    if (repeat) {
      (v.toolRepeats ??= []).push(toolRepeat(call.name, call.kind, item, call.key));
      (v.endsToolGroups ??= []).push(String(o));
    } else (v.toolArgs ??= []).push(toolPiece(call.name, String(o), item, call.key, call.kind));
  }
  // The action of a call the agent runs (computer, shell, apply patch): it comes whole in the item, judged alone each time.
  const action = agentActionKey(item);
  if (action !== undefined && item[action] !== undefined && item[action] !== null) (v.toolRepeats ??= []).push(toolRepeat(`${o}:${action}`, "json", item, action));
  // A hosted tool's code or MCP arguments: a channel of their own (their deltas); its other texts alone.
  const streamed = typeof item.type === "string" ? STREAMED_TOOL_TEXT[item.type] : undefined;
  if (streamed && typeof item[streamed.key] === "string") {
    const channel = `${o}:0:${streamed.kind}`;
    if (repeat) {
      (v.repeats ??= []).push(piece(channel, item, streamed.key));
      v.endsChannels.push(channel);
    } else v.pieces.push(piece(channel, item, streamed.key));
  }
  hostedTexts(v, item);
}

export const responsesFormat: StreamFormat = {
  view(event, _data, json) {
    if (!isObject(json)) return EMPTY;
    const type = typeof json.type === "string" ? json.type : event;
    if (type === "error") return { ...EMPTY, endsStream: true, failed: true };
    const o = num(json.output_index);
    const c = num(json.content_index);
    const v = view();
    switch (type) {
      case "response.output_text.delta":
      case "response.refusal.delta":
      case "response.reasoning_text.delta": {
        const kind = type === "response.refusal.delta" ? "refusal" : type === "response.reasoning_text.delta" ? "reasoning_text" : "output_text";
        if (typeof json.delta === "string") v.pieces.push(piece(partChannel(o, c, kind)!, json, "delta"));
        dropLogprobs(v, json);
        return v;
      }
      case "response.code_interpreter_call_code.delta":
      case "response.mcp_call_arguments.delta": {
        const kind = type === "response.mcp_call_arguments.delta" ? "mcp" : "code";
        if (typeof json.delta === "string") v.pieces.push(piece(`${o}:0:${kind}`, json, "delta"));
        return v;
      }
      case "response.code_interpreter_call_code.done":
      case "response.mcp_call_arguments.done": {
        const kind = type === "response.mcp_call_arguments.done" ? "mcp" : "code";
        const key = kind === "mcp" ? "arguments" : "code";
        const channel = `${o}:0:${kind}`;
        if (typeof json[key] === "string") (v.repeats ??= []).push(piece(channel, json, key));
        v.endsChannels.push(channel);
        return v;
      }
      case "response.reasoning_summary_text.delta":
        if (typeof json.delta === "string") v.pieces.push(piece(`${o}:${num(json.summary_index)}:summary`, json, "delta"));
        return v;
      case "response.output_text.done":
      case "response.reasoning_text.done":
      case "response.refusal.done": {
        const kind = type === "response.refusal.done" ? "refusal" : type === "response.reasoning_text.done" ? "reasoning_text" : "output_text";
        const key = kind === "refusal" ? "refusal" : "text";
        const channel = partChannel(o, c, kind)!;
        if (typeof json[key] === "string") (v.repeats ??= []).push(piece(channel, json, key));
        v.endsChannels.push(channel);
        dropLogprobs(v, json);
        return v;
      }
      case "response.reasoning_summary_text.done": {
        const channel = `${o}:${num(json.summary_index)}:summary`;
        if (typeof json.text === "string") (v.repeats ??= []).push(piece(channel, json, "text"));
        v.endsChannels.push(channel);
        return v;
      }
      case "response.content_part.added":
      case "response.content_part.done":
        partFields(v, o, c, json.part, type === "response.content_part.done");
        return v;
      case "response.reasoning_summary_part.added":
      case "response.reasoning_summary_part.done": {
        const part = json.part;
        if (!isObject(part) || typeof part.text !== "string") return v;
        const channel = `${o}:${num(json.summary_index)}:summary`;
        if (type.endsWith(".done")) {
          (v.repeats ??= []).push(piece(channel, part, "text"));
          v.endsChannels.push(channel);
        } else v.pieces.push(piece(channel, part, "text"));
        return v;
      }
      case "response.output_text.annotation.added":
        annotationQuote(v, `${o}:${c}`, json.annotation);
        return v;
      case "response.output_item.added":
      case "response.output_item.done":
        itemFields(v, o, json.item, type === "response.output_item.done");
        return v;
      case "response.function_call_arguments.delta":
      case "response.custom_tool_call_input.delta": {
        const custom = type === "response.custom_tool_call_input.delta";
        if (typeof json.delta === "string") (v.toolArgs ??= []).push(toolPiece(custom ? `${o}:custom` : String(o), String(o), json, "delta", custom ? "text" : "json"));
        return v;
      }
      case "response.function_call_arguments.done":
      case "response.custom_tool_call_input.done": {
        const custom = type === "response.custom_tool_call_input.done";
        const key = custom ? "input" : "arguments";
        if (typeof json[key] === "string") (v.toolRepeats ??= []).push(toolRepeat(custom ? `${o}:custom` : String(o), custom ? "text" : "json", json, key));
        v.endsToolGroups = [String(o)];
        return v;
      }
      default: {
        // A response object (created, in_progress, queued: normally without output; the terminal events
        // with the whole output): every text in it repeats its channel.
        if (!isObject(json.response)) return EMPTY;
        asArray(json.response.output).forEach((item, index) => itemFields(v, index, item, true));
        if (RESPONSE_TERMINAL_EVENTS.has(type)) v.endsStream = true;
        // A failed response ends the answer unfinished, as an `error` event does: what the governor holds
        // is dropped, and the partial output it repeats is set to what the client got.
        if (type === "response.failed") v.failed = true;
        return v.pieces.length > 0 || v.repeats || v.toolRepeats || v.quotes || v.drops || v.endsStream ? v : EMPTY;
      }
    }
  },
  textEvent(channel, text, template) {
    const [o, k, kind] = channel.split(":") as [string, string, string | undefined];
    const t = isObject(template.json) ? template.json : {};
    const type =
      kind === "refusal"
        ? "response.refusal.delta"
        : kind === "reasoning"
          ? "response.reasoning_text.delta"
          : kind === "summary"
            ? "response.reasoning_summary_text.delta"
            : kind === "code"
              ? "response.code_interpreter_call_code.delta"
              : kind === "mcp"
                ? "response.mcp_call_arguments.delta"
                : "response.output_text.delta";
    const json: Json = { type };
    if (t.sequence_number !== undefined) json.sequence_number = t.sequence_number;
    json.item_id = t.item_id ?? (isObject(t.item) ? t.item.id : undefined);
    json.output_index = Number(o);
    if (kind !== "code" && kind !== "mcp") json[kind === "summary" ? "summary_index" : "content_index"] = Number(k);
    json.delta = text;
    if (kind === undefined) json.logprobs = [];
    return { event: type, json };
  },
  toolEvent(call, args, template) {
    const [o, custom] = call.split(":");
    const t = isObject(template.json) ? template.json : {};
    const type = custom ? "response.custom_tool_call_input.delta" : "response.function_call_arguments.delta";
    const json: Json = { type };
    if (t.sequence_number !== undefined) json.sequence_number = t.sequence_number;
    json.item_id = t.item_id ?? (isObject(t.item) ? t.item.id : undefined);
    json.output_index = Number(o);
    json.delta = args;
    return { event: type, json };
  },
};
