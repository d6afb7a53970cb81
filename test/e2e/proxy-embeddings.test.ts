// The embeddings endpoints through the sidecar, with each provider's official SDK pointed at it as for
// chat (openai `embeddings.create`, Mistral `embeddings.create`, @google/genai `models.embedContent`, which
// calls :batchEmbedContents, Cohere v2 `embed`): the SDK gets the vectors, the provider gets the body as
// sent, the trace has the provider's input tokens (Gemini reports none: counted locally, flagged
// estimated) and the price table's exact cost, and no quality scores; inbound policies govern the texts
// being embedded: a redaction rewrites them before they leave, a block answers 403 without calling the
// provider; token arrays are refused (400).
import test from "ava";
import OpenAI from "openai";
import { computeCost, priceFor } from "../../data-plane/src/pricing/index.js";
import { estimateTokens } from "../../data-plane/src/providers/index.js";
import { fakeVector, type FakeProviderName, type RecordedRequest } from "../fakes/providers/index.js";
import { recordingFetch, sdkClients, startProxyWorld, type ProxyWorld } from "./proxy-helpers.js";
import { createPolicy } from "./policy-helpers.js";

let w: ProxyWorld;

test.before(async () => {
  w = await startProxyWorld({ SSE_KEEPALIVE_MS: "0" });
});
test.after.always(async () => {
  await w?.stop();
});

type Provider = Exclude<FakeProviderName, "anthropic">;
type Clients = ReturnType<typeof sdkClients>;

interface Case {
  model: string;
  /** The native path the provider receives. */
  path: string;
  /** Embeds `texts` through the SDK; the vectors it returns. */
  embed(c: Clients, texts: string[]): Promise<number[][]>;
  /** The texts of the body the provider received. */
  received(r: RecordedRequest): string[];
  /** The body the SDK sends for `texts` (as the provider receives it when no policy rewrote it). */
  body(texts: string[]): unknown;
  /** Whether the provider reports usage (Gemini does not). */
  reportsUsage: boolean;
  /** The SDK's vectors of `texts` as the fake computed them (the openai SDK's base64 is float32). */
  expected(texts: string[]): number[][];
}

const float32 = (v: number[]) => v.map((x) => Math.fround(x));
const json = (r: RecordedRequest) => r.json as Record<string, unknown>;

const CASES: Record<Provider, Case> = {
  openai: {
    model: "text-embedding-3-small",
    path: "/v1/embeddings",
    embed: async (c, texts) => (await c.openai.embeddings.create({ model: "text-embedding-3-small", input: texts })).data.map((d) => Array.from(d.embedding)),
    received: (r) => json(r).input as string[],
    body: (texts) => ({ model: "text-embedding-3-small", input: texts, encoding_format: "base64" }),
    reportsUsage: true,
    expected: (texts) => texts.map((t) => float32(fakeVector(t))),
  },
  mistral: {
    model: "mistral-embed",
    path: "/v1/embeddings",
    embed: async (c, texts) => (await c.mistral.embeddings.create({ model: "mistral-embed", inputs: texts })).data.map((d) => d.embedding ?? []),
    received: (r) => json(r).input as string[],
    body: (texts) => ({ model: "mistral-embed", input: texts }),
    reportsUsage: true,
    expected: (texts) => texts.map((t) => fakeVector(t)),
  },
  google: {
    model: "gemini-embedding-001",
    path: "/v1beta/models/gemini-embedding-001:batchEmbedContents",
    embed: async (c, texts) => ((await c.google.models.embedContent({ model: "gemini-embedding-001", contents: texts })).embeddings ?? []).map((e) => e.values ?? []),
    received: (r) => (json(r).requests as { content: { parts: { text: string }[] } }[]).map((q) => q.content.parts[0]!.text),
    body: (texts) => ({ requests: texts.map((text) => ({ content: { role: "user", parts: [{ text }] }, model: "models/gemini-embedding-001" })) }),
    reportsUsage: false,
    expected: (texts) => texts.map((t) => fakeVector(t)),
  },
  cohere: {
    model: "embed-v4.0",
    path: "/v2/embed",
    embed: async (c, texts) => (await c.cohere.embed({ model: "embed-v4.0", texts, inputType: "search_document", embeddingTypes: ["float"] })).embeddings.float ?? [],
    received: (r) => json(r).texts as string[],
    body: (texts) => ({ model: "embed-v4.0", texts, input_type: "search_document", embedding_types: ["float"] }),
    reportsUsage: true,
    expected: (texts) => texts.map((t) => fakeVector(t)),
  },
};
const PROVIDERS = Object.keys(CASES) as Provider[];

function clients(agentId: string) {
  const rec = recordingFetch();
  return { rec, c: sdkClients(w.sidecar.url, w.serviceHeaders(agentId), rec.fetch) };
}

const traceIdOf = (rec: ReturnType<typeof recordingFetch>): string => rec.last().headers.get("x-service-trace-id") ?? "";
const statusOf = (e: unknown): number | undefined => {
  const x = e as { status?: unknown; statusCode?: unknown; code?: unknown };
  for (const v of [x.status, x.statusCode, x.code]) if (typeof v === "number") return v;
  return undefined;
};

for (const provider of PROVIDERS) {
  test.serial(`${provider}: the SDK gets the vectors, the provider the body as sent; the trace has the input tokens, the table's exact cost and no quality scores`, async (t) => {
    const cs = CASES[provider];
    const agent = await w.agent(`embed-${provider}`, undefined, provider);
    const { rec, c } = clients(agent);
    w.fakes.script({ usage: { inputTokens: 37, outputTokens: 0 } });
    const texts = ["The first document to index.", "A second, shorter one."];
    const before = w.fakes.requests.length;
    t.deepEqual(await cs.embed(c, texts), cs.expected(texts));
    t.is(w.fakes.requests.length, before + 1);
    const sent = w.fakes.requests[before]!;
    t.is(sent.provider, provider);
    t.is(sent.path, cs.path);
    t.deepEqual(sent.json, cs.body(texts));

    const trace = await w.trace(traceIdOf(rec));
    t.is(trace.status, "success");
    t.is(trace.provider, provider);
    t.is(trace.model, cs.model);
    t.false(trace.streamed);
    const prompt = texts.join("\n\n");
    t.is(trace.prompt, prompt);
    t.is(trace.completion, "");
    const inputTokens = cs.reportsUsage ? 37 : estimateTokens(prompt);
    t.is(trace.inputTokens, inputTokens);
    t.is(trace.outputTokens, 0);
    t.is(trace.tokensEstimated, !cs.reportsUsage, "Gemini reports no usage for embeddings: counted locally, flagged");
    const expected = computeCost(priceFor(provider, cs.model), { inputTokens, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0 });
    t.false(expected.priceMissing);
    t.true(expected.totalCost > 0);
    t.is(trace.costUsd, expected.totalCost);
    t.is(Number(rec.last().headers.get("x-service-cost")), expected.totalCost);
    t.deepEqual(trace.qualityScores, []);
    t.deepEqual(trace.toolCalls, []);
  });
}

test.serial("an inbound redact policy rewrites the texts being embedded before they leave, for every provider", async (t) => {
  const agents = await Promise.all(PROVIDERS.map((p) => w.agent(`embed-redact-${p}`, undefined, p)));
  await createPolicy(w, { name: "redact emails in embeddings", action: "redact", priority: 1, conditions: { direction: "inbound", pii_types: ["email"] }, agents });
  w.fakes.script({});
  for (const [i, provider] of PROVIDERS.entries()) {
    const { rec, c } = clients(agents[i]!);
    const before = w.fakes.requests.length;
    const texts = ["Contract signed by jane.doe@example.com on Monday.", "No personal data here."];
    const vectors = await CASES[provider].embed(c, texts);
    const redacted = ["Contract signed by [REDACTED:email] on Monday.", "No personal data here."];
    t.deepEqual(CASES[provider].received(w.fakes.requests[before]!), redacted, provider);
    t.deepEqual(vectors, CASES[provider].expected(redacted), `${provider}: the vectors of what the provider got`);
    const trace = await w.trace(traceIdOf(rec));
    t.is(trace.status, "success", provider);
    t.deepEqual(trace.policiesFired, ["redact emails in embeddings"], provider);
    t.false(trace.prompt.includes("jane.doe@example.com"), `${provider}: no PII in the stored prompt`);
  }
});

test.serial("an inbound block policy answers 403 through each SDK without calling the provider; the trace says blocked", async (t) => {
  const agents = await Promise.all(PROVIDERS.map((p) => w.agent(`embed-block-${p}`, undefined, p)));
  await createPolicy(w, { name: "no ssn in embeddings", action: "block", priority: 1, conditions: { direction: "inbound", pii_types: ["ssn"] }, agents });
  for (const [i, provider] of PROVIDERS.entries()) {
    const { rec, c } = clients(agents[i]!);
    const before = w.fakes.requests.length;
    const err = await t.throwsAsync(CASES[provider].embed(c, ["Employee file: my ssn is 536-22-8726", "other"]));
    t.is(statusOf(err), 403, `${provider}: ${String(err)}`);
    t.is(w.fakes.requests.length, before, `${provider}: the provider was not called`);
    const trace = await w.trace(traceIdOf(rec));
    t.is(trace.status, "blocked", provider);
    t.is(trace.httpStatus, 403, provider);
    t.is(trace.costUsd, 0, provider);
  }
});

test.serial("token arrays cannot be judged by text policies: refused with 400 through the openai SDK, never forwarded", async (t) => {
  const agent = await w.agent("embed-tokens");
  const { c } = clients(agent);
  const before = w.fakes.requests.length;
  const err = await t.throwsAsync(c.openai.embeddings.create({ model: "text-embedding-3-small", input: [[9906, 1917], [15339]] }), { instanceOf: OpenAI.APIError });
  t.is((err as InstanceType<typeof OpenAI.APIError>).status, 400);
  t.regex((err as Error).message, /token arrays cannot be judged/);
  t.is(w.fakes.requests.length, before);
});
