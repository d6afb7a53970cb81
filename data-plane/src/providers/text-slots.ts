// Text slots: ordered references to string fields inside a JSON body, so reading (promptText,
// completionText) and rewriting (redaction) walk exactly the same parts in the same order.
import { cloneJson } from "./json.js";
import type { JsonObject } from "./json.js";

export interface TextSlot {
  get(): string;
  set(value: string): void;
}

/** A slot for a field: one small object per slot, its methods on the prototype (slots are made per request). */
class FieldSlot implements TextSlot {
  constructor(
    private readonly container: Record<string | number, unknown>,
    private readonly key: string | number,
  ) {}

  get(): string {
    return this.container[this.key] as string;
  }

  set(value: string): void {
    this.container[this.key] = value;
  }
}

/**
 * A slot for a number of a tool call's arguments: read as its text; a redaction writes the redacted
 * text in its place (a string then: a number cannot hold a label).
 */
class NumberSlot implements TextSlot {
  constructor(
    private readonly container: Record<string | number, unknown>,
    private readonly key: string | number,
  ) {}

  get(): string {
    return String(this.container[this.key]);
  }

  set(value: string): void {
    if (value !== this.get()) this.container[this.key] = value;
  }
}

/**
 * A slot for a base64 field holding a text file the model reads (Gemini `inlineData` and an Anthropic
 * base64 `document` source with a text MIME type; after `prefix`, an OpenAI `file_data` data URL): read
 * as the UTF-8 text it encodes (bytes that are no UTF-8 read as U+FFFD); a redaction writes the base64
 * of the redacted text's UTF-8 in its place (after the same prefix), and only a redaction writes.
 */
class Base64TextSlot implements TextSlot {
  constructor(
    private readonly container: Record<string | number, unknown>,
    private readonly key: string | number,
    private readonly prefix: string,
    private decoded?: string,
  ) {}

  get(): string {
    return (this.decoded ??= Buffer.from((this.container[this.key] as string).slice(this.prefix.length), "base64").toString("utf8"));
  }

  set(value: string): void {
    if (value === this.get()) return;
    this.container[this.key] = this.prefix + Buffer.from(value, "utf8").toString("base64");
    this.decoded = value;
  }
}

/** MIME types other than `text/*` whose files are text (the document types Gemini reads as text). */
const TEXT_MIME_TYPES = new Set(["application/json", "application/xml", "application/x-javascript", "application/x-typescript", "application/x-python-code", "application/rtf"]);

/** Whether a file of this MIME type (parameters such as `; charset=utf-8` allowed) is text. */
export function isTextMime(mime: unknown): boolean {
  if (typeof mime !== "string") return false;
  const semi = mime.indexOf(";");
  const type = (semi === -1 ? mime : mime.slice(0, semi)).trim().toLowerCase();
  return type.startsWith("text/") || TEXT_MIME_TYPES.has(type);
}

/** A slot for container[key], a base64 string the caller has checked holds a text file (isTextMime). */
export function base64TextSlot(container: JsonObject | unknown[], key: string | number): TextSlot {
  return new Base64TextSlot(container as Record<string | number, unknown>, key, "");
}

/**
 * A slot for container[key] when it is a non-empty base64 data URL of a text file
 * (`data:<mime>[;params];base64,<data>`, the MIME type text by isTextMime): read as the UTF-8 text its
 * data encodes; a redaction writes the base64 of the redacted text after the same prefix. Undefined for
 * anything else (no string, another scheme, no `;base64`, not text, no data).
 */
export function dataUrlTextSlot(container: JsonObject | unknown[], key: string | number): TextSlot | undefined {
  const value = (container as Record<string | number, unknown>)[key];
  if (typeof value !== "string" || value.slice(0, 5).toLowerCase() !== "data:") return undefined;
  const comma = value.indexOf(",");
  if (comma === -1 || comma === value.length - 1) return undefined;
  const params = value.slice(5, comma).split(";");
  if (params.pop()?.trim().toLowerCase() !== "base64" || !isTextMime(params[0])) return undefined;
  return new Base64TextSlot(container as Record<string | number, unknown>, key, value.slice(0, comma + 1));
}

/** Base64 (standard or URL-safe alphabet, padded or not, line breaks allowed), nothing else. */
const BASE64 = /^[A-Za-z0-9+/\-_\r\n]+={0,2}$/;
/** Control characters no text file holds (tab, line feed, form feed and carriage return are text). */
const BINARY_CONTROL = /[\x00-\x08\x0b\x0e-\x1f\x7f]/;
/** Document formats whose source may be ASCII yet is no text the model reads as such (a redaction would break them). */
const NOT_TEXT_NAME = /\.(pdf|ps|eps|ai)$/i;
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A slot for an OpenAI `file_data` (container[key]) that holds a text file: a base64 data URL of a text
 * MIME type (dataUrlTextSlot), or plain base64 (the API takes the file's type from `filename` then)
 * whose bytes are UTF-8 text: valid UTF-8 without binary control characters, in a file not named as a
 * PDF or PostScript document. Sniffed rather than looked up by extension: a text file under any name
 * the model reads as text carries its PII all the same, and a binary file (an image, a PDF's compressed
 * streams, a docx) is never valid control-free UTF-8. Undefined for anything else.
 */
export function fileDataTextSlot(container: JsonObject, key: string, filename: unknown): TextSlot | undefined {
  const value = container[key];
  if (typeof value !== "string" || value.length === 0) return undefined;
  if (value.slice(0, 5).toLowerCase() === "data:") return dataUrlTextSlot(container, key);
  if (!BASE64.test(value) || (typeof filename === "string" && NOT_TEXT_NAME.test(filename))) return undefined;
  let text: string;
  try {
    text = strictUtf8.decode(Buffer.from(value, "base64"));
  } catch {
    return undefined;
  }
  if (text === "" || BINARY_CONTROL.test(text)) return undefined;
  return new Base64TextSlot(container as Record<string, unknown>, key, "", text);
}

/** A slot for container[key], which the caller has checked holds a string. */
export function slot(container: JsonObject | unknown[], key: string | number): TextSlot {
  return new FieldSlot(container as Record<string | number, unknown>, key);
}

/** Collects slots of a body, in order. */
export type SlotCollector = (body: unknown) => TextSlot[];

/** Collects groups of output slots: slots of a group are concatenated, groups are joined by "\n\n". */
export type GroupCollector = (json: unknown) => TextSlot[][];

/** Non-empty slots only: an empty text part is no part of the prompt. */
function nonEmpty(slots: TextSlot[]): TextSlot[] {
  return slots.filter((s) => s.get() !== "");
}

export function readSlots(body: unknown, collect: SlotCollector): string[] {
  return nonEmpty(collect(body)).map((s) => s.get());
}

/** A deep copy of body with fn applied once per non-empty slot, in slot order. */
export function mapSlots(body: unknown, collect: SlotCollector, fn: (text: string) => string): unknown {
  const copy = cloneJson(body);
  for (const s of nonEmpty(collect(copy))) s.set(fn(s.get()));
  return copy;
}

export function mapGroups(json: unknown, collect: GroupCollector, fn: (text: string) => string): unknown {
  return mapSlots(json, (b) => collect(b).flat(), fn);
}

/** Output text from groups: each group's parts concatenated, non-empty groups joined by "\n\n". */
export function joinGroups(groups: readonly (readonly string[])[]): string {
  return groups
    .map((g) => g.join(""))
    .filter((t) => t.length > 0)
    .join("\n\n");
}

export function readGroups(json: unknown, collect: GroupCollector): string {
  return joinGroups(collect(json).map((g) => g.map((s) => s.get())));
}

/**
 * Slots of every string leaf of container[key], depth first: a string is one slot; arrays are walked by
 * index, objects by their key order (JSON.parse / structuredClone order, so the same on a copy). Keys,
 * booleans and null are no text, and numbers neither unless `numbers` (tool-call arguments, where a
 * model may write a card or an SSN as a number). Iterative, so deeply nested JSON cannot overflow the stack.
 */
export function leafSlots(container: JsonObject | unknown[], key: string | number, numbers = false): TextSlot[] {
  const slots: TextSlot[] = [];
  // Two parallel stacks (holder, key) rather than a tuple per pending value.
  const holders: Record<string | number, unknown>[] = [container as Record<string | number, unknown>];
  const keys: (string | number)[] = [key];
  while (holders.length > 0) {
    const holder = holders.pop()!;
    const k = keys.pop()!;
    const value = holder[k];
    if (typeof value === "string") slots.push(new FieldSlot(holder, k));
    else if (numbers && typeof value === "number" && Number.isFinite(value)) slots.push(new NumberSlot(holder, k));
    else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) {
        holders.push(value as unknown as Record<number, unknown>);
        keys.push(i);
      }
    } else if (typeof value === "object" && value !== null) {
      const names = Object.keys(value);
      for (let i = names.length - 1; i >= 0; i--) {
        holders.push(value as Record<string, unknown>);
        keys.push(names[i]!);
      }
    }
  }
  return slots;
}

const BACKSLASH = 0x5c;
const COLON = 0x3a;

function isJsonWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/**
 * Where the string value literals of valid JSON text are, in text order: a flat list of [start, end)
 * pairs, quotes included. A literal followed (after whitespace) by ':' is a key and left out. Linear and
 * without recursion: outside literals valid JSON has no quote, so each quote found opens a literal, and a
 * quote inside one is its end unless an odd run of backslashes precedes it.
 */
function valueLiterals(text: string): number[] {
  const bounds: number[] = [];
  let open = text.indexOf('"');
  let from = 0;
  while (open !== -1) {
    numberLiterals(text, from, open, bounds);
    let close = text.indexOf('"', open + 1);
    for (;;) {
      if (close === -1) return bounds; // unterminated: not valid JSON, which the caller has ruled out
      let b = close - 1;
      while (text.charCodeAt(b) === BACKSLASH) b--; // stops at the opening quote at the latest
      if ((close - 1 - b) % 2 === 0) break;
      close = text.indexOf('"', close + 1);
    }
    let next = close + 1;
    while (isJsonWhitespace(text.charCodeAt(next))) next++;
    if (text.charCodeAt(next) !== COLON) bounds.push(open, close + 1);
    from = next;
    open = text.indexOf('"', next);
  }
  numberLiterals(text, from, text.length, bounds);
  return bounds;
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
/** Characters a JSON number is written with after its first: digits, `.`, `e`/`E`, signs. */
const isNumberChar = (c: number) => isDigit(c) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d;

/**
 * The number literals of valid JSON text between two string literals ([from, to): outside strings):
 * a card or an SSN a model writes as a JSON number is a value the policies must see too.
 */
function numberLiterals(text: string, from: number, to: number, bounds: number[]): void {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x2d && !isDigit(c)) continue;
    let end = i + 1;
    while (end < to && isNumberChar(text.charCodeAt(end))) end++;
    bounds.push(i, end);
    i = end;
  }
}

/**
 * The string value literals of one JSON-text field (holder[key]) as the field was read: values decoded
 * lazily and once, replacements kept per literal, and the field rewritten from the original text with
 * only the replaced literals swapped for the JSON of their new value, so every other byte stays as sent.
 */
class JsonTextLiterals {
  private readonly decoded: (string | undefined)[] = [];
  private replacements: Map<number, string> | undefined;
  /** The text up to builtEnd with its replaced literals swapped; no replaced literal lies after builtEnd. */
  private built = "";
  private builtEnd = 0;
  private lastReplaced = -1;

  constructor(
    private readonly holder: Record<string | number, unknown>,
    private readonly key: string | number,
    private readonly text: string,
    private readonly bounds: readonly number[],
  ) {}

  get count(): number {
    return this.bounds.length / 2;
  }

  /** The value literal i holds as sent (a number literal: its text as written). */
  original(i: number): string {
    let value = this.decoded[i];
    if (value === undefined) {
      const start = this.bounds[2 * i]!;
      const end = this.bounds[2 * i + 1]!;
      if (this.text.charCodeAt(start) !== 0x22) value = this.text.slice(start, end);
      else {
        const inner = this.text.slice(start + 1, end - 1);
        value = inner.includes("\\") ? (JSON.parse(this.text.slice(start, end)) as string) : inner;
      }
      this.decoded[i] = value;
    }
    return value;
  }

  get(i: number): string {
    return this.replacements?.get(i) ?? this.original(i);
  }

  set(i: number, value: string): void {
    if (value === this.get(i)) return;
    const replacements = (this.replacements ??= new Map());
    if (value === this.original(i)) {
      replacements.delete(i);
      this.rebuild();
    } else {
      replacements.set(i, value);
      if (i > this.lastReplaced) {
        // Literals are usually set in text order: append to what is built.
        this.built += this.text.slice(this.builtEnd, this.bounds[2 * i]) + JSON.stringify(value);
        this.builtEnd = this.bounds[2 * i + 1]!;
        this.lastReplaced = i;
      } else this.rebuild();
    }
    this.holder[this.key] = this.builtEnd === 0 ? this.text : this.built + this.text.slice(this.builtEnd);
  }

  private rebuild(): void {
    const indices = [...this.replacements!.keys()].sort((a, b) => a - b);
    let built = "";
    let at = 0;
    for (const i of indices) {
      built += this.text.slice(at, this.bounds[2 * i]) + JSON.stringify(this.replacements!.get(i));
      at = this.bounds[2 * i + 1]!;
    }
    this.built = built;
    this.builtEnd = at;
    this.lastReplaced = indices.length > 0 ? indices[indices.length - 1]! : -1;
  }
}

class LiteralSlot implements TextSlot {
  constructor(
    private readonly literals: JsonTextLiterals,
    private readonly index: number,
  ) {}

  get(): string {
    return this.literals.get(this.index);
  }

  set(value: string): void {
    this.literals.set(this.index, value);
  }
}

/**
 * Slots of a tool call's arguments as the conversation history sends them back to the model. An object
 * (Anthropic `tool_use.input`, Gemini `functionCall.args`, Mistral) is walked like leafSlots. JSON text
 * (OpenAI, Mistral and Cohere `function.arguments`) is checked with JSON.parse, and its string value
 * literals (not keys) and number literals are the slots, in TEXT order (a number is read as written; a
 * redaction writes a string in its place; session 16: `{"card": 4111111111111111}` passed unjudged): that differs from leafSlots' key order only for
 * integer-like keys (which JSON.parse puts first) and duplicate keys (each occurrence is a slot here, as
 * the model reads them all). Setting a slot to a new value swaps that literal for the JSON of the value
 * and keeps every other byte as sent (numbers beyond double precision, whitespace, duplicate keys, key
 * order), so a redaction keeps the arguments valid JSON (a redaction of the raw text could cut an escape
 * sequence) and changes nothing else; setting a slot to the value it has changes nothing. Text that is not
 * JSON is one slot, as sent. No recursion, so deeply nested arguments cannot overflow the stack.
 */
export function argumentSlots(container: JsonObject | unknown[], key: string | number): TextSlot[] {
  const holder = container as Record<string | number, unknown>;
  const value = holder[key];
  if (typeof value !== "string") return leafSlots(container, key, true);
  try {
    JSON.parse(value);
  } catch {
    return [new FieldSlot(holder, key)];
  }
  const literals = new JsonTextLiterals(holder, key, value, valueLiterals(value));
  const slots: TextSlot[] = new Array<TextSlot>(literals.count);
  for (let i = 0; i < slots.length; i++) slots[i] = new LiteralSlot(literals, i);
  return slots;
}

/** Appends every slot of `items` (a loop: `push(...items)` throws past ~100k arguments). */
export function pushAll(out: TextSlot[], items: readonly TextSlot[]): void {
  for (const item of items) out.push(item);
}

/**
 * The text outbound policies judge in tool-call arguments (each call's arguments as sent: JSON text or an
 * object): the string leaves of every call (argumentSlots), non-empty ones joined by "\n\n", as
 * `readSlots(json, answerToolSlots)` gives them for a JSON answer.
 */
export function toolArgumentsText(calls: readonly unknown[]): string {
  const leaves: string[] = [];
  for (const value of calls) for (const s of argumentSlots({ value }, "value")) if (s.get() !== "") leaves.push(s.get());
  return leaves.join("\n\n");
}
