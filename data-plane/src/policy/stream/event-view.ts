// The view a stream format gives of one SSE event (formats.ts, responses-format.ts): its text pieces per
// channel, the channels and tool calls it ends, its quotes and the fields that repeat whole texts; and
// the small helpers the formats build those views with.
import type { QuoteFields } from "../../providers/quotes.js";
import type { OffsetUnit } from "../../providers/text-offsets.js";
import { URL_CITATION_UNITS } from "../../providers/chat-completions.js";
import type { TextSlot } from "../../providers/text-slots.js";

export type Json = Record<string, unknown>;
export const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
export const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const indexOf = (v: Json, fallback: number): number => (typeof v.index === "number" && Number.isFinite(v.index) ? v.index : fallback);

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
  /**
   * The stream ends with the provider's own error (an error event, Cohere's message-end with
   * finish_reason ERROR, Mistral's chunk finishing with "error", the Responses API's response.failed):
   * the answer is unfinished, so the text each channel still holds is judged with the rest and dropped,
   * not released (as for a stream cut before its end marker). An event that also repeats the output
   * (response.failed) is then governed as any end: its repeats carry what the client got.
   */
  failed?: boolean;
  /**
   * Reasoning channels that end with this event (when they exist): an event that only ends reasoning
   * that never came is forwarded untouched, as before reasoning was governed.
   */
  endsReasoning?: string[];
  /** The signature of a signed reasoning channel (Anthropic signature_delta). */
  signature?: { channel: string; value: string };
  /**
   * Objects of this event that quote a channel's text by offset (a Cohere citation, a Gemini grounding
   * segment) or point into it by offset only (an OpenAI url_citation, a Gemini citation source),
   * rewritten in place to follow the channel's redactions.
   */
  quotes?: Quote[];
  /** Tool-call arguments in this event: JSON-text fragments of a call, or a call's whole arguments object. */
  toolArgs?: ToolArgPiece[];
  /** Groups whose tool calls end with this event (after its own pieces): a choice's finish, a block's stop. */
  endsToolGroups?: string[];
  /**
   * Fields of this event that repeat a channel's whole text (OpenAI Responses: a `*.done` event, the
   * final response): the channel ends with this event, and each is set to the whole text the client got
   * of it. One that is not the channel's text (or whose channel never came) is judged and redacted on its own.
   */
  repeats?: TextPiece[];
  /** Fields that repeat a tool call's whole arguments (the call ends with this event), set like `repeats`. */
  toolRepeats?: ToolRepeat[];
  /**
   * Fields that spell the text another way (log probabilities: the tokens of the text, with their
   * bytes): set to `empty` in every governed event that has them (undefined: the field is left out, as
   * when the client asked for none), since a held or redacted text's tokens would leave with them.
   */
  drops?: { holder: Json; key: string; empty: unknown }[];
}

/** A field repeating the whole arguments of tool call `call` (JSON text, or a custom tool's free text). */
export interface ToolRepeat {
  call: string;
  kind: "json" | "text";
  get(): unknown;
  set(value: unknown): void;
}

/**
 * One tool call's arguments in an event: a fragment of its JSON text (OpenAI, Mistral, Cohere
 * `function.arguments`, Anthropic `partial_json`) or its whole arguments object (Gemini `functionCall.args`).
 * `call` names the call within the stream; `group` the calls that end together (a choice, a block).
 */
export interface ToolArgPiece {
  call: string;
  group: string;
  /**
   * `json`: JSON text (or an object), judged and redacted value by value; `text`: free text (a custom
   * tool's input), judged and redacted as one text, never parsed.
   */
  kind: "json" | "text";
  /** The piece holds the call's whole arguments (Mistral sends each call whole in one delta): it ends here. */
  whole: boolean;
  get(): unknown;
  set(value: unknown): void;
}

export interface StreamFormat {
  /** The text pieces and markers of one event; `json` is the parsed data (undefined when it is not JSON). */
  view(event: string, data: string, json: unknown): EventView;
  /** An extra event carrying `text` for `channel`, modelled on `template` (the channel's last text event). */
  textEvent(channel: string, text: string, template: { event: string; json: unknown }): { event: string; json: Json };
  /**
   * An extra event carrying the whole arguments of tool call `call` (held and judged), modelled on
   * `template` (the call's last event): for a call whose end had no fragment of its own.
   */
  toolEvent(call: string, args: unknown, template: { event: string; json: unknown }): { event: string; json: Json };
}

export function toolPiece(call: string, group: string, holder: Json, key: string, kind: "json" | "text" = "json", whole = false): ToolArgPiece {
  return {
    call,
    group,
    kind,
    whole,
    get: () => holder[key],
    set: (value) => {
      holder[key] = value;
    },
  };
}


/** One quoting object: where its offsets and text are, and the units its provider counts offsets in. */
export interface Quote {
  channel: string;
  quote: Json;
  fields: QuoteFields;
  units: readonly OffsetUnit[];
  /** The provider's own unit: offsets of a quote placed by its text (its offsets were wrong) are written in it. */
  native: OffsetUnit;
}


export const EMPTY: EventView = { pieces: [], endsChannels: [], endsStream: false };


export function piece(channel: string, holder: Json, key: string): TextPiece {
  return {
    channel,
    get: () => holder[key] as string,
    set: (value) => {
      holder[key] = value;
    },
  };
}


/**
 * String fields the model wrote beside a quote (a cited page's URL and title): on no channel, so judged
 * and redacted on their own, like Gemini's search queries.
 */
export function ownTexts(view: EventView, holder: Json, keys: readonly string[]): void {
  for (const key of keys) {
    if (typeof holder[key] === "string" && holder[key] !== "") (view.quotes ??= []).push({ channel: "", quote: holder, fields: { start: "", end: "", text: key }, units: URL_CITATION_UNITS, native: "codepoints" });
  }
}

/** A text slot as a quote holder whose `text` reads and writes the slot (a base64 text file, a value nested in arrays, a JSON leaf). */
export function slotHolder(s: TextSlot): Json {
  return {
    get text() {
      return s.get();
    },
    set text(value: unknown) {
      s.set(value as string);
    },
  };
}

/**
 * Text slots (providers/text-slots.ts) on no channel, like ownTexts: each judged and redacted on its own
 * (a Gemini part's code and code output, an Anthropic code execution result's stdout).
 */
export function ownSlots(view: EventView, slots: readonly TextSlot[]): void {
  for (const s of slots) if (s.get() !== "") ownTexts(view, slotHolder(s), ["text"]);
}
