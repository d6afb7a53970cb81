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
