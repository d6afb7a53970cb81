// Small helpers to read untyped JSON safely.

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function asString(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** A finite non-negative number, else 0. */
export function asCount(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}

export function hasNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/** Deep copy of a JSON value (bodies are plain JSON, structuredClone keeps them intact). */
export function cloneJson<T>(value: T): T {
  return structuredClone(value);
}

/** Parses JSON text, undefined on failure. */
export function tryParseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * JSON text of the fields of body named by keys that hold something (e.g. a request's tool definitions),
 * one per line; "" when none do. Used to estimate billed input that is not prompt text.
 */
export function fieldsJson(body: unknown, keys: readonly string[]): string {
  if (!isObject(body)) return "";
  const parts: string[] = [];
  for (const key of keys) {
    const value = body[key];
    if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) continue;
    parts.push(typeof value === "string" ? value : JSON.stringify(value));
  }
  return parts.join("\n");
}

/** A tool call's arguments as text: a string as is (streamed fragments, OpenAI JSON text), else its JSON. */
export function argumentsText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return "";
  return JSON.stringify(value) ?? "";
}
