// Admission of a proxy request, before anything is traced (DESIGN.md §11: refusals for authentication,
// permission, unknown agent or provider, oversize and unreadable bodies are not traced): the provider,
// the method, the X-Service-Key (scope ingest or api, active user: the Sync state only lists such
// keys), the agent, the body (≤ 10 MiB, JSON parsed once) and the native upstream target.
import type { IncomingMessage } from "node:http";
import { hash } from "node:crypto";
import type { Agent } from "@agentgov/proto";
import { getProvider, ProviderRequestError, type ProviderAdapter, type UpstreamTarget } from "../providers/index.js";
import type { GovernanceState } from "../state/governance-state.js";
import { ProxyRefusal } from "./outcomes.js";
import { readBody } from "./read-body.js";
import type { ProxyRoute } from "./route.js";

export interface Admission {
  state: GovernanceState;
  agent: Agent;
  /** Id of the X-Service-Key used (recorded on the trace so the key's lastUsedAt moves). */
  keyId: string;
  adapter: ProviderAdapter;
  target: UpstreamTarget;
  /** The request body exactly as received. */
  bodyBytes: Buffer;
  /** Its text (UTF-8), which a rewritten body keeps the number literals of (json-keeping-numbers.ts). */
  bodyText: string;
  /** The body parsed (once). */
  body: unknown;
}

export const firstHeader = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

const notFound = (message: string) => new ProxyRefusal(404, "not_found", message);

/** What each provider's proxy path governs, for the 404 of any other path. */
const GOVERNED_ENDPOINTS: Record<string, string> = {
  openai: "chat completions, the Responses API, embeddings",
  anthropic: "messages",
  google: "generateContent, streamGenerateContent, embedContent, batchEmbedContents",
  mistral: "chat completions, embeddings",
  cohere: "v2 chat, v2 embed",
};

export async function admit(req: IncomingMessage, route: ProxyRoute, state: GovernanceState): Promise<Admission> {
  const adapter = getProvider(route.providerName);
  if (!adapter) throw notFound(`unknown provider "${route.providerName}"; use openai, anthropic, google, mistral or cohere`);
  if (req.method !== "POST") throw notFound(`no route for ${req.method ?? "?"} ${route.pathname}`);

  const key = firstHeader(req, "x-service-key");
  // crypto.hash: the one-shot digest, ~0.5 µs against ~1.3 µs for a createHash object per request
  const keyRow = key ? state.keysByHash.get(hash("sha256", key, "hex")) : undefined;
  if (!keyRow) {
    if (state.ownKeyRevoked) throw new ProxyRefusal(401, "unauthorized", "this sidecar's own key (SIDECAR_KEY) was refused by the control plane: it cannot learn revocations, so it accepts no X-Service-Key until it has a valid key");
    throw new ProxyRefusal(401, "unauthorized", "missing or invalid X-Service-Key");
  }
  if (keyRow.scope !== "ingest" && keyRow.scope !== "api") throw new ProxyRefusal(403, "forbidden", "this key may not use the proxy (needs scope ingest or api)");

  const agentId = firstHeader(req, "x-service-agent");
  const agent = agentId ? state.agents.get(agentId) : undefined;
  if (!agent || agent.status === "archived") throw notFound(`agent ${agentId ?? "(missing X-Service-Agent)"} not found`);

  // The policies must read the body: one in a content coding (no official SDK sends one) is refused
  // saying so, rather than as "not valid JSON" (QA, session 27), as the control plane does.
  const coding = firstHeader(req, "content-encoding")?.trim().toLowerCase() ?? "";
  if (coding !== "" && coding !== "identity") {
    throw new ProxyRefusal(400, "bad_request", `request bodies in a content coding (Content-Encoding: ${coding.slice(0, 40)}) are not accepted: the sidecar's policies must read the body; send it uncompressed`);
  }
  const bodyBytes = await readBody(req);
  const bodyText = bodyBytes.toString("utf8");
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    throw new ProxyRefusal(400, "bad_request", "request body is not valid JSON");
  }

  let target: UpstreamTarget | null;
  try {
    target = adapter.resolve(route.subPath, route.search, body);
  } catch (e) {
    if (e instanceof ProviderRequestError) throw new ProxyRefusal(400, "bad_request", e.message);
    throw e;
  }
  if (!target) throw notFound(`${adapter.name} path ${route.subPath} is not an endpoint this proxy governs (${GOVERNED_ENDPOINTS[adapter.name] ?? "see the README"}; the README's "Pointing an agent's SDK at the sidecar (proxy paths)" lists the paths)`);
  // An endpoint with a wire format of its own (OpenAI's Responses API) is read through its adapter.
  return { state, agent, keyId: keyRow.id, adapter: target.adapter ?? adapter, target, bodyBytes, bodyText, body };
}
