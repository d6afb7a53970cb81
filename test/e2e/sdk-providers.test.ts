// The SDK's sidecar helpers configure each official provider SDK (openai, @anthropic-ai/sdk,
// @google/genai, @mistralai/mistralai, cohere-ai) to go through a real sidecar: each call reaches the
// provider with its own credential and without the agentgov headers, and is traced for the agent with
// the session id.
import test from "ava";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import { HTTPClient, Mistral } from "@mistralai/mistralai";
import { CohereClientV2 } from "cohere-ai";
import { startStack, eventually, type Stack } from "../harness/stack.js";
import { startFakeProviders, type FakeProviders } from "../fakes/providers/index.js";
import { AgentGov, viaSidecar, type Sidecar as SidecarHelper } from "../../sdk/src/index.js";
import type { Sidecar } from "@agentgov/data-plane";

let stack: Stack;
let fakes: FakeProviders;
let sidecar: Sidecar;
let agentId: string;
let via: SidecarHelper;
let ag: AgentGov;

test.before(async () => {
  fakes = await startFakeProviders();
  stack = await startStack();
  ag = new AgentGov({ baseUrl: stack.cp.restUrl, apiKey: stack.adminKey });
  agentId = (await ag.post("/api/agents", { body: { name: "sdk-providers", modelProvider: "openai", modelName: "gpt-4o-mini" } })).data.id;
  const env: Record<string, string> = {};
  for (const p of ["openai", "anthropic", "google", "mistral", "cohere"] as const) env[`PROVIDER_${p.toUpperCase()}_URL`] = fakes.urls[p];
  sidecar = await stack.sidecar(env);
  await eventually(async () => sidecar.state().agents.has(agentId));
  via = viaSidecar({ url: sidecar.url, serviceKey: stack.adminKey, agentId, sessionId: "sess-sdk" });
});
test.after.always(async () => {
  await stack?.stop();
  await fakes?.close();
});

function lastRequest(provider: string) {
  const r = [...fakes.requests].reverse().find((x) => x.provider === provider);
  if (!r) throw new Error(`${provider} was not called`);
  return r;
}

function noAgentgovHeaders(t: { is: (a: unknown, b: unknown) => void }, provider: string) {
  const h = lastRequest(provider).headers;
  t.is(h["x-service-key"], undefined);
  t.is(h["x-service-agent"], undefined);
  t.is(h["x-service-session"], undefined);
}

test.serial("openai", async (t) => {
  fakes.script({ text: "Hi from OpenAI." });
  const client = new OpenAI({ apiKey: "sk-openai", maxRetries: 0, ...via.openai() });
  const r = await client.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
  t.is(r.choices[0]?.message.content, "Hi from OpenAI.");
  t.is(lastRequest("openai").headers.authorization, "Bearer sk-openai");
  noAgentgovHeaders(t, "openai");
});

test.serial("anthropic", async (t) => {
  fakes.script({ text: "Hi from Claude." });
  const client = new Anthropic({ apiKey: "sk-ant", maxRetries: 0, ...via.anthropic() });
  const r = await client.messages.create({ model: "claude-sonnet-4-6", max_tokens: 64, messages: [{ role: "user", content: "hi" }] });
  t.deepEqual(r.content.map((b) => (b.type === "text" ? b.text : "")), ["Hi from Claude."]);
  const h = lastRequest("anthropic").headers;
  t.true(h["x-api-key"] === "sk-ant" || h.authorization === "Bearer sk-ant", "the provider credential arrives as the SDK sent it");
  noAgentgovHeaders(t, "anthropic");
});

test.serial("google", async (t) => {
  fakes.script({ text: "Hi from Gemini." });
  const client = new GoogleGenAI({ apiKey: "g-key", ...via.google() });
  const r = await client.models.generateContent({ model: "gemini-2.5-flash", contents: "hi" });
  t.is(r.text, "Hi from Gemini.");
  t.is(lastRequest("google").headers["x-goog-api-key"], "g-key");
  t.is(lastRequest("google").path, "/v1beta/models/gemini-2.5-flash:generateContent");
  noAgentgovHeaders(t, "google");
});

test.serial("mistral", async (t) => {
  fakes.script({ text: "Hi from Mistral." });
  const m = via.mistral();
  const client = new Mistral({ apiKey: "m-key", serverURL: m.serverURL, httpClient: new HTTPClient({ fetcher: m.fetcher }) });
  const r = await client.chat.complete({ model: "mistral-small-latest", messages: [{ role: "user", content: "hi" }] });
  const choice = r.choices[0];
  t.is(choice?.message?.content, "Hi from Mistral.");
  t.is(lastRequest("mistral").headers.authorization, "Bearer m-key");
  noAgentgovHeaders(t, "mistral");
});

test.serial("cohere", async (t) => {
  fakes.script({ text: "Hi from Cohere." });
  const client = new CohereClientV2({ token: "c-key", maxRetries: 0, ...via.cohere() });
  const r = await client.chat({ model: "command-a-03-2025", messages: [{ role: "user", content: "hi" }] });
  const first = r.message.content?.[0];
  t.is(first?.type === "text" ? first.text : undefined, "Hi from Cohere.");
  t.is(lastRequest("cohere").headers.authorization, "Bearer c-key");
  noAgentgovHeaders(t, "cohere");
});

test.serial("every call was traced for the agent, with the session id", async (t) => {
  const ids = await eventually(async () => {
    const list: string[] = [];
    for await (const tr of ag.paginate("/v1/traces", { params: { query: { agent_id: agentId } } })) list.push(tr.id);
    return list.length >= 5 ? list : undefined;
  });
  const traces = await Promise.all(ids.map((id) => stack.cp.traces.get(stack.cp.tenantId, id)));
  t.deepEqual(traces.map((x) => x?.provider).sort(), ["anthropic", "cohere", "google", "mistral", "openai"]);
  t.true(traces.every((x) => x?.sessionId === "sess-sdk" && x.status === "success"));
});
