// Helpers of the policy and limits end-to-end tests: policies created through the REST API and waited
// for in the sidecars, native chat bodies with a chosen prompt for each provider, a raw call through the
// sidecar, and what the fake provider received (its prompt text as the adapter reads it).
import type { Sidecar } from "@agentgov/data-plane";
import { eventually } from "../harness/stack.js";
import type { FakeProviderName, RecordedRequest } from "../fakes/providers/index.js";
import { getProvider } from "../../data-plane/src/providers/index.js";
import { CREDENTIAL, MODELS, type ProxyWorld } from "./proxy-helpers.js";

export interface PolicyBody {
  name: string;
  action: "block" | "redact" | "log";
  priority?: number;
  status?: "active" | "disabled";
  conditions?: Record<string, unknown>;
  agents?: string[];
}

/** Creates a policy and waits until every given sidecar holds it; returns its id. */
export async function createPolicy(w: ProxyWorld, body: PolicyBody, sidecars: Sidecar[] = [w.sidecar]): Promise<string> {
  const r = await w.stack.api.post<{ id: string }>("/v1/policies", body);
  if (r.status !== 201) throw new Error(`policy ${body.name}: ${r.status} ${JSON.stringify(r.body)}`);
  const id = r.body.id;
  await eventually(async () => sidecars.every((s) => s.state().policies.has(id)));
  return id;
}

export async function deletePolicy(w: ProxyWorld, id: string, sidecars: Sidecar[] = [w.sidecar]): Promise<void> {
  const r = await w.stack.api.call("DELETE", `/v1/policies/${id}`);
  if (r.status !== 204) throw new Error(`delete policy: ${r.status}`);
  await eventually(async () => sidecars.every((s) => !s.state().policies.has(id)));
}

export interface ChatOptions {
  system?: string;
  stream?: boolean;
  model?: string;
  maxTokens?: number;
}

/** A native chat request (path under /v1/proxy/{provider}, credential header, body) with `user` as the prompt. */
export function chatRequest(provider: FakeProviderName, user: string, o: ChatOptions = {}): { path: string; headers: Record<string, string>; body: Record<string, unknown> } {
  const model = o.model ?? MODELS[provider];
  const [h, v] = CREDENTIAL[provider];
  const headers = { [h]: v };
  const system = o.system ?? "You are terse.";
  switch (provider) {
    case "openai":
    case "mistral":
    case "cohere": {
      const body: Record<string, unknown> = { model, messages: [{ role: "system", content: system }, { role: "user", content: user }] };
      if (o.stream) body.stream = true;
      if (o.stream && provider === "openai") body.stream_options = { include_usage: true };
      if (o.maxTokens !== undefined) body.max_tokens = o.maxTokens;
      return { path: provider === "cohere" ? "/v2/chat" : "/v1/chat/completions", headers, body };
    }
    case "anthropic": {
      const body: Record<string, unknown> = { model, max_tokens: o.maxTokens ?? 256, system, messages: [{ role: "user", content: user }] };
      if (o.stream) body.stream = true;
      return { path: "/v1/messages", headers: { ...headers, "anthropic-version": "2023-06-01" }, body };
    }
    case "google": {
      const body: Record<string, unknown> = { systemInstruction: { parts: [{ text: system }] }, contents: [{ role: "user", parts: [{ text: user }] }] };
      if (o.maxTokens !== undefined) body.generationConfig = { maxOutputTokens: o.maxTokens };
      return { path: o.stream ? `/v1beta/models/${model}:streamGenerateContent?alt=sse` : `/v1beta/models/${model}:generateContent`, headers, body };
    }
  }
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

/** One call through the sidecar with the agent's service headers. */
export async function send(w: ProxyWorld, provider: FakeProviderName, agentId: string, user: string, o: ChatOptions & { sidecar?: Sidecar; headers?: Record<string, string> } = {}): Promise<Answer> {
  const req = chatRequest(provider, user, o);
  const base = o.sidecar?.url ?? w.sidecar.url;
  const res = await fetch(`${base}/v1/proxy/${provider}${req.path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...req.headers, ...w.serviceHeaders(agentId), ...(o.headers ?? {}) },
    body: JSON.stringify(req.body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** The prompt text the provider received, read as the sidecar's adapter reads it. */
export function receivedPrompt(r: RecordedRequest): string {
  const adapter = getProvider(r.provider!)!;
  return adapter.promptText(r.json);
}

/** Text the client got from a JSON answer, read as the sidecar's adapter reads it. */
export function answerText(provider: FakeProviderName, json: unknown): string {
  return getProvider(provider)!.parseResponse(json).completionText;
}

/** Text and error of an SSE answer, read as the sidecar's adapter reads it. */
export function streamText(provider: FakeProviderName, text: string): { text: string; error?: string } {
  const o = getProvider(provider)!.streamObserver();
  o.push(Buffer.from(text, "utf8"));
  const f = o.end();
  return f.errorMessage !== undefined ? { text: f.completionText, error: f.errorMessage } : { text: f.completionText };
}

export const traceIdOf = (a: Answer): string => a.headers.get("x-service-trace-id") ?? "";
