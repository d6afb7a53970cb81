// Input the model reads that is not prompt text (session 26; "Not scanned still" before): tool
// definitions, response schemas, predicted output and participant names. Inbound PII, keyword and regex
// policies judge them with the prompt and a redaction rewrites them in place, but they are no part of
// the prompt's text: the trace's prompt, its PII findings' offsets and the prompt's token count stay
// the messages' own. Each adapter lists them as groups of slots (ProviderAdapter.inputExtraSlots): one
// group per tool definition, per response schema, per prediction, and one for the names.
import { isObject } from "./json.js";
import type { JsonObject } from "./json.js";
import { leafSlots, pushAll, slot } from "./text-slots.js";
import type { TextSlot } from "./text-slots.js";

/**
 * Where an input text outside the prompt stands: a tool (function) definition's description and the
 * texts of its parameter schema; a response format's schema (and its description); predicted output
 * (OpenAI `prediction.content`); a message's participant `name`.
 */
export type InputExtraKind = "tool_definition" | "response_schema" | "prediction" | "name";

/** The slots of one tool definition, one response schema, one prediction, or the names of a request. */
export interface InputExtraGroup {
  kind: InputExtraKind;
  slots: TextSlot[];
}

/** Collects a request body's groups in order (only groups with a slot). */
export type InputExtrasCollector = (body: unknown) => InputExtraGroup[];

/** Appends a group of `kind` when it has a slot. */
export function pushGroup(out: InputExtraGroup[], kind: InputExtraKind, slots: TextSlot[]): void {
  if (slots.length > 0) out.push({ kind, slots });
}

/**
 * Schema keywords whose value is structure, not prose: a type name, a format, a regular expression, a
 * reference, property names (`required`, Gemini's `propertyOrdering`). Their strings are left out, so a
 * keyword policy on "password" does not match every schema with a `password` property.
 */
const STRUCTURAL = new Set([
  "type", "format", "pattern", "$ref", "$schema", "$id", "$anchor", "$dynamicRef", "$dynamicAnchor",
  "required", "propertyOrdering", "property_ordering", "dependentRequired", "contentEncoding", "contentMediaType",
]);
/** Keywords whose value is a value of the described data: every string and number under them is text. */
const VALUE_KEYWORDS = new Set(["enum", "const", "default", "examples", "example"]);
/** Keywords whose value maps names (identifiers, not text) to schemas. */
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);

const SCHEMA = 0;
const MAP = 1;
const VALUES = 2;

/**
 * The text slots of a JSON Schema (or an OpenAPI / Gemini Schema) at container[key], depth first in key
 * order: every string but those of structural keywords (STRUCTURAL: `type`, `format`, `pattern`, `$ref`,
 * `required`…), so `description` and `title` at every level, any other prose a schema carries; the values
 * under `enum`, `const`, `default`, `examples`, `example` (strings, and numbers as their text, as in
 * tool-call arguments: an example SSN or card may be a number); property names (keys of `properties`,
 * `$defs`…) are not text. A string where a schema stands is one slot. Iterative: deep nesting cannot
 * overflow the stack.
 */
export function schemaSlots(container: JsonObject | unknown[], key: string | number): TextSlot[] {
  const slots: TextSlot[] = [];
  const holders: Record<string | number, unknown>[] = [container as Record<string | number, unknown>];
  const keys: (string | number)[] = [key];
  const modes: number[] = [SCHEMA];
  while (holders.length > 0) {
    const holder = holders.pop()!;
    const k = keys.pop()!;
    const mode = modes.pop()!;
    const value = holder[k];
    if (mode === VALUES) {
      pushAll(slots, leafSlots(holder as JsonObject, k, true));
      continue;
    }
    if (typeof value === "string") {
      slots.push(slot(holder as JsonObject, k));
      continue;
    }
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) {
        holders.push(value as unknown as Record<number, unknown>);
        keys.push(i);
        modes.push(SCHEMA);
      }
      continue;
    }
    if (!isObject(value)) continue;
    const names = Object.keys(value);
    for (let i = names.length - 1; i >= 0; i--) {
      const name = names[i]!;
      if (mode === SCHEMA && STRUCTURAL.has(name)) continue;
      holders.push(value);
      keys.push(name);
      modes.push(mode === MAP ? SCHEMA : VALUE_KEYWORDS.has(name) ? VALUES : SCHEMA_MAPS.has(name) ? MAP : SCHEMA);
    }
  }
  return slots;
}

/** A redaction label (`[REDACTED:<type>]`), which a participant name cannot hold at OpenAI. */
const REDACTION_LABEL = /\[REDACTED:([A-Za-z0-9_-]*)\]/g;

/**
 * A slot for a participant `name` (OpenAI/Mistral `messages[].name`). OpenAI refuses a name outside
 * `^[a-zA-Z0-9_-]+$` with a 400, so a redaction label is written as `REDACTED_<type>` there; the value is
 * written only when a redaction changed it.
 */
class NameSlot implements TextSlot {
  constructor(
    private readonly container: JsonObject,
    private readonly key: string,
  ) {}

  get(): string {
    return this.container[this.key] as string;
  }

  set(value: string): void {
    if (value !== this.get()) this.container[this.key] = value.replace(REDACTION_LABEL, "REDACTED_$1");
  }
}

/** A slot for container[key], a participant name the caller has checked is a string. */
export function nameSlot(container: JsonObject, key: string): TextSlot {
  return new NameSlot(container, key);
}

/** One non-empty text outside the prompt and the kind of the group it stands in. */
export interface InputExtraPart {
  kind: InputExtraKind;
  text: string;
}

/** The non-empty texts of the groups with their kinds, in order (what inbound policies judge beside the prompt). */
export function extraPartsWithKinds(groups: readonly InputExtraGroup[]): InputExtraPart[] {
  const parts: InputExtraPart[] = [];
  for (const g of groups) {
    for (const s of g.slots) {
      const text = s.get();
      if (text !== "") parts.push({ kind: g.kind, text });
    }
  }
  return parts;
}

/** The non-empty texts of the groups, in order (what inbound policies judge beside the prompt). */
export function extraParts(groups: readonly InputExtraGroup[]): string[] {
  return extraPartsWithKinds(groups).map((p) => p.text);
}

/** Each tool definition's text (its non-empty slots joined by "\n\n"), one entry per definition. */
export function toolDefinitionTexts(groups: readonly InputExtraGroup[]): string[] {
  const out: string[] = [];
  for (const g of groups) {
    if (g.kind !== "tool_definition") continue;
    const text = extraParts([g]).join("\n\n");
    if (text !== "") out.push(text);
  }
  return out;
}

/**
 * Rewrites every non-empty slot of `collect(body)` in place with fn (once per slot, in order): for a
 * body that is a copy already (the redacted prompt's), so it is not copied again.
 */
export function mapExtrasInPlace(body: unknown, collect: InputExtrasCollector, fn: (text: string) => string): void {
  for (const g of collect(body)) {
    for (const s of g.slots) {
      const text = s.get();
      if (text !== "") s.set(fn(text));
    }
  }
}
