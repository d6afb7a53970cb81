// Where the completion text sits in each provider's stream events, and how to make an extra text event
// of the same kind. A "channel" is one independent output text (a choice's content or refusal, a
// content block, a candidate); the governor holds back and redacts per channel.
import type { ProviderName } from "../../providers/index.js";

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const indexOf = (v: Json, fallback: number): number => (typeof v.index === "number" && Number.isFinite(v.index) ? v.index : fallback);

/** One text field of an event: read and rewritten in place in the parsed event JSON. */
export interface TextPiece {
  channel: string;
  get(): string;
  set(value: string): void;
}

export interface EventView {
  pieces: TextPiece[];
  /** Channels that end with this event (after its own pieces). */
  endsChannels: string[];
  /** Every channel ends before this event ([DONE], message_stop, message-end…). */
  endsStream: boolean;
}

export interface StreamFormat {
  /** The text pieces and markers of one event; `json` is the parsed data (undefined when it is not JSON). */
  view(event: string, data: string, json: unknown): EventView;
  /** An extra event carrying `text` for `channel`, modelled on `template` (the channel's last text event). */
  textEvent(channel: string, text: string, template: { event: string; json: unknown }): { event: string; json: Json };
}

const EMPTY: EventView = { pieces: [], endsChannels: [], endsStream: false };

function piece(channel: string, holder: Json, key: string): TextPiece {
  return {
    channel,
    get: () => holder[key] as string,
    set: (value) => {
      holder[key] = value;
    },
  };
}

/** OpenAI and Mistral chat-completion chunks: choices[].delta.content (string or text parts) and .refusal. */
const chatCompletions: StreamFormat = {
  view(_event, data, json) {
    if (data.trim() === "[DONE]") return { ...EMPTY, endsStream: true };
    if (!isObject(json)) return EMPTY;
    const view: EventView = { pieces: [], endsChannels: [], endsStream: false };
    asArray(json.choices).forEach((raw, position) => {
      if (!isObject(raw)) return;
      const i = indexOf(raw, position);
      const delta = raw.delta;
      if (isObject(delta)) {
        if (typeof delta.content === "string") view.pieces.push(piece(`${i}:content`, delta, "content"));
        else for (const part of asArray(delta.content)) if (isObject(part) && part.type === "text" && typeof part.text === "string") view.pieces.push(piece(`${i}:content`, part, "text"));
        if (typeof delta.refusal === "string") view.pieces.push(piece(`${i}:refusal`, delta, "refusal"));
      }
      if (raw.finish_reason !== null && raw.finish_reason !== undefined) view.endsChannels.push(`${i}:content`, `${i}:refusal`);
    });
    return view;
  },
  textEvent(channel, text, template) {
    const [index, field] = channel.split(":") as [string, string];
    const base: Json = isObject(template.json) ? { ...template.json } : {};
    delete base.usage;
    if (isObject(template.json) && "usage" in template.json && template.json.usage === null) base.usage = null;
    base.choices = [{ index: Number(index), delta: { [field]: text }, finish_reason: null }];
    return { event: template.event, json: base };
  },
};

/** Anthropic Messages: content_block_start (text block) and content_block_delta (text_delta) per block index. */
const anthropic: StreamFormat = {
  view(event, _data, json) {
    if (!isObject(json)) return EMPTY;
    const type = typeof json.type === "string" ? json.type : event;
    const channel = String(indexOf(json, 0));
    switch (type) {
      case "content_block_start": {
        const block = json.content_block;
        return isObject(block) && block.type === "text" && typeof block.text === "string" ? { ...EMPTY, pieces: [piece(channel, block, "text")] } : EMPTY;
      }
      case "content_block_delta": {
        const delta = json.delta;
        return isObject(delta) && delta.type === "text_delta" && typeof delta.text === "string" ? { ...EMPTY, pieces: [piece(channel, delta, "text")] } : EMPTY;
      }
      case "content_block_stop":
        return { ...EMPTY, endsChannels: [channel] };
      case "message_delta":
      case "message_stop":
        return { ...EMPTY, endsStream: true };
      default:
        return EMPTY;
    }
  },
  textEvent(channel, text) {
    return { event: "content_block_delta", json: { type: "content_block_delta", index: Number(channel), delta: { type: "text_delta", text } } };
  },
};

/** Gemini GenerateContentResponse chunks: candidates[].content.parts[].text (thought parts excluded). */
const google: StreamFormat = {
  view(_event, _data, json) {
    if (!isObject(json)) return EMPTY;
    const view: EventView = { pieces: [], endsChannels: [], endsStream: false };
    asArray(json.candidates).forEach((raw, position) => {
      if (!isObject(raw)) return;
      const channel = String(indexOf(raw, position));
      const content = raw.content;
      if (isObject(content)) {
        for (const part of asArray(content.parts)) if (isObject(part) && typeof part.text === "string" && part.thought !== true) view.pieces.push(piece(channel, part, "text"));
      }
      if (raw.finishReason !== undefined && raw.finishReason !== null) view.endsChannels.push(channel);
    });
    return view;
  },
  textEvent(channel, text, template) {
    const base: Json = isObject(template.json) ? { ...template.json } : {};
    delete base.usageMetadata;
    base.candidates = [{ content: { parts: [{ text }], role: "model" }, index: Number(channel) }];
    return { event: template.event, json: base };
  },
};

/** Cohere v2: content-start / content-delta (delta.message.content.text) per content index. */
const cohere: StreamFormat = {
  view(event, _data, json) {
    if (!isObject(json)) return EMPTY;
    const type = typeof json.type === "string" ? json.type : event;
    const channel = String(indexOf(json, 0));
    switch (type) {
      case "content-start":
      case "content-delta": {
        const delta = isObject(json.delta) ? json.delta : {};
        const message = isObject(delta.message) ? delta.message : {};
        const content = message.content;
        return isObject(content) && typeof content.text === "string" ? { ...EMPTY, pieces: [piece(channel, content, "text")] } : EMPTY;
      }
      case "content-end":
        return { ...EMPTY, endsChannels: [channel] };
      case "message-end":
        return { ...EMPTY, endsStream: true };
      default:
        return EMPTY;
    }
  },
  textEvent(channel, text) {
    return { event: "content-delta", json: { type: "content-delta", index: Number(channel), delta: { message: { content: { text } } } } };
  },
};

const FORMATS: Record<ProviderName, StreamFormat> = { openai: chatCompletions, mistral: chatCompletions, anthropic, google, cohere };

export function streamFormat(provider: ProviderName): StreamFormat {
  return FORMATS[provider];
}
