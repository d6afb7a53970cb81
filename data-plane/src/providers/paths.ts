// Path helpers shared by the adapters' resolve().

/** Collapses duplicate slashes, removes a trailing slash, guarantees a leading slash. */
export function normalizeSubPath(subPath: string): string {
  let p = subPath.replace(/\/{2,}/g, "/");
  if (!p.startsWith("/")) p = `/${p}`;
  if (p.length > 1 && p.endsWith("/")) p = p.slice(0, -1);
  return p;
}

/** The spec path every provider accepts: /v1/proxy/{provider}/chat/completions. */
export const SPEC_PATH = "/chat/completions";

/** "" or "?…" → the same, normalised ("?" alone becomes ""). */
export function normalizeSearch(search: string): string {
  if (search === "" || search === "?") return "";
  return search.startsWith("?") ? search : `?${search}`;
}

/**
 * The model segment of a native path (Gemini `models/{model}:…`), percent-decoded; undefined (refused
 * like any other path that is not a governed endpoint) when it does not decode or decodes to more than a
 * name: a `/` or `\` ("..%2f..%2ffiles" would reach another upstream path than the one the policies
 * judged) or a dot segment.
 */
export function nativeModel(raw: string): string | undefined {
  let model: string;
  try {
    model = decodeURIComponent(raw);
  } catch {
    return undefined;
  }
  return isModelName(model) ? model : undefined;
}

/** A name that stays one path segment upstream: no `/` or `\`, not a dot segment. */
export function isModelName(name: string): boolean {
  return name !== "." && name !== ".." && !name.includes("/") && !name.includes("\\");
}
