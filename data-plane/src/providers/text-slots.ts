// Text slots: ordered references to string fields inside a JSON body, so reading (promptText,
// completionText) and rewriting (redaction) walk exactly the same parts in the same order.
import { cloneJson } from "./json.js";
import type { JsonObject } from "./json.js";

export interface TextSlot {
  get(): string;
  set(value: string): void;
}

/** A slot for container[key], which the caller has checked holds a string. */
export function slot(container: JsonObject | unknown[], key: string | number): TextSlot {
  return {
    get: () => (container as Record<string | number, unknown>)[key] as string,
    set: (value: string) => {
      (container as Record<string | number, unknown>)[key] = value;
    },
  };
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
 * numbers, booleans and null are no text. Iterative, so deeply nested JSON cannot overflow the stack.
 */
export function leafSlots(container: JsonObject | unknown[], key: string | number): TextSlot[] {
  const slots: TextSlot[] = [];
  const stack: [JsonObject | unknown[], string | number][] = [[container, key]];
  while (stack.length > 0) {
    const [holder, k] = stack.pop()!;
    const value = (holder as Record<string | number, unknown>)[k];
    if (typeof value === "string") slots.push(slot(holder, k));
    else if (Array.isArray(value)) for (let i = value.length - 1; i >= 0; i--) stack.push([value, i]);
    else if (typeof value === "object" && value !== null) {
      const keys = Object.keys(value);
      for (let i = keys.length - 1; i >= 0; i--) stack.push([value as JsonObject, keys[i]!]);
    }
  }
  return slots;
}

/**
 * Slots of a tool call's arguments as the conversation history sends them back to the model. An object
 * (Anthropic `tool_use.input`, Gemini `functionCall.args`, Mistral) is walked like leafSlots. JSON text
 * (OpenAI, Mistral and Cohere `function.arguments`) is parsed and its string leaves are the slots; setting
 * a leaf to a new value writes the arguments back as JSON text, so a redaction keeps them valid JSON (a
 * redaction of the raw text could cut an escape sequence), and the text is left as sent while nothing in
 * it changes. Text that is not JSON is one slot, as sent.
 */
export function argumentSlots(container: JsonObject | unknown[], key: string | number): TextSlot[] {
  const holder = container as Record<string | number, unknown>;
  const value = holder[key];
  if (typeof value !== "string") return leafSlots(container, key);
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return [slot(container, key)];
  }
  const box: JsonObject = { value: parsed };
  return leafSlots(box, "value").map((leaf) => ({
    get: leaf.get,
    set: (text: string) => {
      if (text === leaf.get()) return;
      leaf.set(text);
      holder[key] = JSON.stringify(box.value);
    },
  }));
}
