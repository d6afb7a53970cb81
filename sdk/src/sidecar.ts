// Options that route each official provider SDK through an agentgov sidecar: the base URL of the
// provider's native paths under /v1/proxy/{provider} plus the X-Service-Key / X-Service-Agent
// (and optional X-Service-Session) headers. The provider's own key stays where the SDK puts it.
//
//   new OpenAI({ apiKey, ...sidecar.openai() })
//   new Anthropic({ apiKey, ...sidecar.anthropic() })
//   new GoogleGenAI({ apiKey, ...sidecar.google() })
//   new Mistral({ apiKey, serverURL: sidecar.mistral().serverURL, httpClient: new HTTPClient({ fetcher: sidecar.mistral().fetcher }) })
//   new CohereClientV2({ token, ...sidecar.cohere() })

export interface SidecarTarget {
  /** The sidecar's address, e.g. `http://127.0.0.1:8181`. */
  url: string;
  /** The agentgov key the sidecar checks (`svc_ingest_…` or `svc_api_…`). */
  serviceKey: string;
  /** The agent these calls are made for (`agt_…`). */
  agentId: string;
  /** Optional session id, recorded on every trace. */
  sessionId?: string;
}

export type FetchFn = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export const PROVIDERS = ["openai", "anthropic", "google", "mistral", "cohere"] as const;
export type Provider = (typeof PROVIDERS)[number];

export interface Sidecar {
  /** The agentgov headers every call must carry. */
  headers: Record<string, string>;
  /** `…/v1/proxy/{provider}` (plus `/v1` for OpenAI, whose SDK expects the version in the base URL). */
  baseUrl(provider: Provider): string;
  /** A fetch that adds the agentgov headers (for SDKs that take a fetch but no default headers). */
  fetch: FetchFn;
  /** `openai`: `new OpenAI({ apiKey, ...these })`. */
  openai(): { baseURL: string; defaultHeaders: Record<string, string> };
  /** `@anthropic-ai/sdk`: `new Anthropic({ apiKey, ...these })`. */
  anthropic(): { baseURL: string; defaultHeaders: Record<string, string> };
  /** `@google/genai`: `new GoogleGenAI({ apiKey, ...these })`. */
  google(): { httpOptions: { baseUrl: string; headers: Record<string, string> } };
  /** `@mistralai/mistralai`: `new Mistral({ apiKey, serverURL, httpClient: new HTTPClient({ fetcher }) })`. */
  mistral(): { serverURL: string; fetcher: FetchFn };
  /** `cohere-ai`: `new CohereClientV2({ token, ...these })`. */
  cohere(): { environment: string; headers: Record<string, string> };
}

export function viaSidecar(target: SidecarTarget, baseFetch: FetchFn = (i, init) => globalThis.fetch(i, init)): Sidecar {
  const root = target.url.replace(/\/+$/, "");
  const headers: Record<string, string> = { "X-Service-Key": target.serviceKey, "X-Service-Agent": target.agentId };
  if (target.sessionId) headers["X-Service-Session"] = target.sessionId;
  const baseUrl = (p: Provider) => `${root}/v1/proxy/${p}${p === "openai" ? "/v1" : ""}`;
  const withHeaders: FetchFn = (input, init) => {
    const h = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    for (const [k, v] of Object.entries(headers)) h.set(k, v);
    return baseFetch(input, { ...init, headers: h });
  };
  return {
    headers: { ...headers },
    baseUrl,
    fetch: withHeaders,
    openai: () => ({ baseURL: baseUrl("openai"), defaultHeaders: { ...headers } }),
    anthropic: () => ({ baseURL: baseUrl("anthropic"), defaultHeaders: { ...headers } }),
    google: () => ({ httpOptions: { baseUrl: baseUrl("google"), headers: { ...headers } } }),
    mistral: () => ({ serverURL: baseUrl("mistral"), fetcher: withHeaders }),
    cohere: () => ({ environment: baseUrl("cohere"), headers: { ...headers } }),
  };
}
