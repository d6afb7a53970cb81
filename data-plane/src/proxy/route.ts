// Splits a proxy request URL (/v1/proxy/{provider}/<sub path>?<query>) into its parts, without
// allocating a URL object: the provider segment, the native sub-path the adapter resolves, the query.
export const PROXY_PREFIX = "/v1/proxy/";

export interface ProxyRoute {
  /** Path without the query. */
  pathname: string;
  /** The `{provider}` segment as sent (not yet checked). */
  providerName: string;
  /** What follows the provider segment, e.g. "/v1/chat/completions" ("/" when nothing follows). */
  subPath: string;
  /** "" or "?…". */
  search: string;
}

/** undefined when the path is not under /v1/proxy/. */
export function parseProxyUrl(url: string): ProxyRoute | undefined {
  const q = url.indexOf("?");
  const pathname = q < 0 ? url : url.slice(0, q);
  if (!pathname.startsWith(PROXY_PREFIX)) return undefined;
  const search = q < 0 ? "" : url.slice(q);
  const slash = pathname.indexOf("/", PROXY_PREFIX.length);
  const providerName = slash < 0 ? pathname.slice(PROXY_PREFIX.length) : pathname.slice(PROXY_PREFIX.length, slash);
  const subPath = slash < 0 ? "/" : pathname.slice(slash);
  return { pathname, providerName, subPath, search };
}
