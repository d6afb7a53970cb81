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
