// Shared setup of the proxy end-to-end tests: a control plane, the five fake providers, one sidecar
// pointed at them, agents created through the REST API, the official SDK of each provider pointed at
// the sidecar, and the stored trace of a request (read from the trace store the control plane writes).
import { request, type IncomingHttpHeaders } from "node:http";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import { Mistral } from "@mistralai/mistralai";
import { HTTPClient } from "@mistralai/mistralai/lib/http.js";
import { CohereClientV2 } from "cohere-ai";
import OpenAI from "openai";
import type { Trace } from "@agentgov/proto";
import type { Sidecar } from "@agentgov/data-plane";
import { startStack, eventually, type Stack } from "../harness/stack.js";
import { startFakeProviders, type FakeProviderName, type FakeProviders } from "../fakes/providers/index.js";

export const PROVIDERS: readonly FakeProviderName[] = ["openai", "anthropic", "google", "mistral", "cohere"];

/** A model of each provider that the price table knows. */
export const MODELS: Record<FakeProviderName, string> = {
  openai: "gpt-4o",
  anthropic: "claude-sonnet-4-6",
  google: "gemini-2.5-flash",
  mistral: "mistral-small-latest",
  cohere: "command-a-03-2025",
};

/** The provider's own credential header, as each SDK sends it (@anthropic-ai/sdk 1.x sends a Bearer token). */
export const CREDENTIAL: Record<FakeProviderName, [string, string]> = {
  openai: ["authorization", "Bearer sk-openai-test"],
  anthropic: ["authorization", "Bearer sk-ant-test"],
  google: ["x-goog-api-key", "g-test"],
  mistral: ["authorization", "Bearer m-test"],
  cohere: ["authorization", "Bearer c-test"],
};

export interface ProxyWorld {
  stack: Stack;
  fakes: FakeProviders;
  sidecar: Sidecar;
  /** Creates an agent and waits until the sidecar knows it; returns its id. */
  agent(name: string, configYaml?: string, provider?: FakeProviderName): Promise<string>;
  /** The two X-Service-* headers for an agent. */
  serviceHeaders(agentId: string): Record<string, string>;
  /** The stored trace (waits for ingest). */
  trace(id: string): Promise<Trace>;
  /** URL of a path under /v1/proxy/{provider}. */
  proxyUrl(provider: string, path: string): string;
  stop(): Promise<void>;
}

export async function startProxyWorld(sidecarEnv: Record<string, string> = {}): Promise<ProxyWorld> {
  const fakes = await startFakeProviders();
  const stack = await startStack();
  const sidecar = await stack.sidecar({
    PROVIDER_OPENAI_URL: fakes.urls.openai,
    PROVIDER_ANTHROPIC_URL: fakes.urls.anthropic,
    PROVIDER_GOOGLE_URL: fakes.urls.google,
    PROVIDER_MISTRAL_URL: fakes.urls.mistral,
    PROVIDER_COHERE_URL: fakes.urls.cohere,
    ...sidecarEnv,
  });
  return {
    stack,
    fakes,
    sidecar,
    async agent(name, configYaml, provider = "openai") {
      const r = await stack.api.post<{ data: { id: string } }>("/api/agents", {
        name,
        modelProvider: provider,
        modelName: MODELS[provider],
        ...(configYaml !== undefined ? { configYaml } : {}),
      });
      if (r.status !== 201) throw new Error(`agent: ${r.status} ${JSON.stringify(r.body)}`);
      const id = r.body.data.id;
      await eventually(async () => sidecar.state().agents.has(id));
      return id;
    },
    serviceHeaders: (agentId) => ({ "X-Service-Key": stack.adminKey, "X-Service-Agent": agentId }),
    trace: (id) => eventually(async () => (await stack.cp.traces.get(stack.cp.tenantId, id)) ?? undefined),
    proxyUrl: (provider, path) => `${sidecar.url}/v1/proxy/${provider}${path}`,
    async stop() {
      await stack?.stop();
      await fakes?.close();
    },
  };
}

/** A fetch that remembers every response, so a test can read the headers an SDK received. */
export function recordingFetch(): { fetch: typeof fetch; last(): Response } {
  const seen: Response[] = [];
  return {
    fetch: async (input, init) => {
      const r = await fetch(input, init);
      seen.push(r);
      return r;
    },
    last: () => {
      const r = seen[seen.length - 1];
      if (!r) throw new Error("no response recorded");
      return r;
    },
  };
}

/** The openai SDK pointed at the world's sidecar for an agent, and the responses it received (their X-Service-* headers). */
export function recordedOpenAI(w: ProxyWorld, agentId: string): { rec: ReturnType<typeof recordingFetch>; openai: OpenAI } {
  const rec = recordingFetch();
  return { rec, openai: sdkClients(w.sidecar.url, w.serviceHeaders(agentId), rec.fetch).openai };
}

/** The official SDK clients pointed at the sidecar exactly as the README documents (base URL + two headers). */
export function sdkClients(sidecarUrl: string, serviceHeaders: Record<string, string>, f: typeof fetch) {
  const base = `${sidecarUrl}/v1/proxy`;
  const mistralHttp = new HTTPClient({ fetcher: (input, init) => f(input, init) });
  mistralHttp.addHook("beforeRequest", (req) => {
    for (const [k, v] of Object.entries(serviceHeaders)) req.headers.set(k, v);
  });
  return {
    openai: new OpenAI({ apiKey: "sk-openai-test", baseURL: `${base}/openai/v1`, defaultHeaders: serviceHeaders, fetch: f, maxRetries: 0 }),
    anthropic: new Anthropic({ apiKey: "sk-ant-test", baseURL: `${base}/anthropic`, defaultHeaders: serviceHeaders, fetch: f, maxRetries: 0 }),
    google: new GoogleGenAI({ apiKey: "g-test", httpOptions: { baseUrl: `${base}/google`, headers: serviceHeaders, fetch: f } }),
    mistral: new Mistral({ apiKey: "m-test", serverURL: `${base}/mistral`, httpClient: mistralHttp, retryConfig: { strategy: "none" } }),
    cohere: new CohereClientV2({ token: "c-test", environment: `${base}/cohere`, headers: serviceHeaders, fetch: f, maxRetries: 0 }),
  };
}

/** Reads a response's body chunk by chunk until it ends, calling onChunk with the text so far. */
export async function readChunks(res: Response, onChunk?: (text: string) => void | Promise<void>): Promise<string> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    await onChunk?.(text);
  }
  return text;
}

export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  trailers: NodeJS.Dict<string>;
  bytes: Buffer;
  text: string;
}

/** A POST with node:http that keeps the exact response bytes and the HTTP trailers. */
export function rawCall(url: string, options: { headers?: Record<string, string>; body?: unknown; method?: string }): Promise<RawAnswer> {
  const payload = options.body === undefined ? undefined : typeof options.body === "string" || Buffer.isBuffer(options.body) ? options.body : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? "POST", headers: { "content-type": "application/json", ...(options.headers ?? {}) } }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (c: Buffer) => parts.push(c));
      res.on("end", () => {
        const bytes = Buffer.concat(parts);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, trailers: res.trailers, bytes, text: bytes.toString("utf8") });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}
