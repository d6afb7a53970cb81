// The walking skeleton end to end: agent created → call through the sidecar with the official openai SDK →
// trace listed; an SSN prompt is blocked with 403 policy_violation and the provider is never called.
import test from "ava";
import OpenAI from "openai";
import { startStack, eventually, type Stack } from "../harness/stack.js";
import { startFakeProviders } from "../fakes/providers/index.js";
import type { Sidecar } from "@agentgov/data-plane";

type Fakes = Awaited<ReturnType<typeof startFakeProviders>>;
let stack: Stack;
let fakes: Fakes;
let sidecar: Sidecar;
let agentId: string;

test.before(async () => {
  fakes = await startFakeProviders();
  stack = await startStack();
  const agent = await stack.api.post<{ data: { id: string } }>("/api/agents", { name: "e2e-openai", modelProvider: "openai", modelName: "gpt-4o-mini" });
  agentId = agent.body.data.id;
  const policy = await stack.api.post("/v1/policies", { name: "Block SSN", action: "block", priority: 1, conditions: { direction: "inbound", pii_types: ["ssn"] } });
  if (policy.status !== 201) throw new Error(`policy: ${JSON.stringify(policy.body)}`);
  sidecar = await stack.sidecar({ PROVIDER_OPENAI_URL: fakes.urls.openai });
  await eventually(async () => sidecar.state().policies.size > 0 && sidecar.state().agents.has(agentId));
});
test.after.always(async () => {
  await stack?.stop();
  await fakes?.close();
});

function client(): OpenAI {
  return new OpenAI({
    apiKey: "sk-test-provider-key",
    baseURL: `${sidecar.url}/v1/proxy/openai/v1`,
    defaultHeaders: { "X-Service-Key": stack.adminKey, "X-Service-Agent": agentId },
    maxRetries: 0,
  });
}

test.serial("a call through the sidecar reaches the provider unchanged and its trace is listed", async (t) => {
  fakes.script({ text: "Paris is the capital of France.", usage: { inputTokens: 21, outputTokens: 7 } });
  const before = fakes.requests.length;
  const { data, response } = await client()
    .chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "What is the capital of France?" }] })
    .withResponse();
  t.is(data.choices[0]?.message.content, "Paris is the capital of France.");
  const traceId = response.headers.get("x-service-trace-id");
  t.regex(traceId ?? "", /^trc_[0-9A-Z]{26}$/);
  t.is(response.headers.get("x-service-policies"), "1");
  t.true(Number(response.headers.get("x-service-cost")) > 0);
  const forwarded = fakes.requests[before]!;
  t.is(forwarded.headers.authorization, "Bearer sk-test-provider-key");
  t.is(forwarded.headers["x-service-key"], undefined);
  t.is(forwarded.headers["x-service-agent"], undefined);
  t.deepEqual(JSON.parse(forwarded.body.toString("utf8")).messages, [{ role: "user", content: "What is the capital of France?" }]);

  const trace = await eventually(async () => {
    const r = await stack.api.get<{ data: { id: string; status: string; input_tokens: number; output_tokens: number; cost: number; policies_evaluated: number; pii_detected: boolean }[] }>(
      `/v1/traces?agent_id=${agentId}`,
    );
    return r.body.data.find((x) => x.id === traceId);
  });
  t.is(trace.status, "success");
  t.is(trace.input_tokens, 21);
  t.is(trace.output_tokens, 7);
  t.is(trace.cost, Number(response.headers.get("x-service-cost")));
  t.is(trace.policies_evaluated, 1);
  t.false(trace.pii_detected);
});

test.serial("a prompt with an SSN is blocked with 403 policy_violation and the provider is never called", async (t) => {
  const before = fakes.requests.length;
  const err = await t.throwsAsync(
    client().chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "My SSN is 536-22-8726, file my taxes" }] }),
    { instanceOf: OpenAI.PermissionDeniedError },
  );
  t.is(err?.status, 403);
  const body = err?.error as { code: string; policy_id: string; trace_id: string } | undefined;
  t.is(body?.code, "policy_violation");
  t.regex(body?.policy_id ?? "", /^pol_/);
  t.is(fakes.requests.length, before, "the provider must not be called");
  const trace = await eventually(async () => {
    const r = await stack.api.get<{ data: { id: string; status: string; pii_detected: boolean; policies_blocked: number }[] }>(`/v1/traces?agent_id=${agentId}&status=blocked`);
    return r.body.data.find((x) => x.id === body?.trace_id);
  });
  t.is(trace.status, "blocked");
  t.true(trace.pii_detected);
  t.is(trace.policies_blocked, 1);
});

test.serial("streaming through the sidecar passes every chunk and records usage", async (t) => {
  fakes.script({ text: "one two three four five", usage: { inputTokens: 11, outputTokens: 5 }, comments: true });
  const stream = await client().chat.completions.create({
    model: "gpt-4o-mini",
    messages: [{ role: "user", content: "count to five" }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = "";
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
  t.is(text, "one two three four five");
  const trace = await eventually(async () => {
    const r = await stack.api.get<{ data: { input_tokens: number; output_tokens: number; status: string }[] }>(`/v1/traces?agent_id=${agentId}&status=success&limit=1`);
    const x = r.body.data[0];
    return x && x.input_tokens === 11 ? x : undefined;
  });
  t.is(trace.output_tokens, 5);
});

test.serial("sidecar refusals: bad key 401, unknown agent 404, unknown provider 404", async (t) => {
  const base = `${sidecar.url}/v1/proxy`;
  const body = JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
  const bad = await fetch(`${base}/openai/chat/completions`, { method: "POST", body, headers: { "content-type": "application/json", "x-service-key": "svc_api_nope", "x-service-agent": agentId } });
  t.is(bad.status, 401);
  const unknownAgent = await fetch(`${base}/openai/chat/completions`, { method: "POST", body, headers: { "content-type": "application/json", "x-service-key": stack.adminKey, "x-service-agent": "agt_01J00000000000000000000000" } });
  t.is(unknownAgent.status, 404);
  const unknownProvider = await fetch(`${base}/acme/chat/completions`, { method: "POST", body, headers: { "content-type": "application/json", "x-service-key": stack.adminKey, "x-service-agent": agentId } });
  t.is(unknownProvider.status, 404);
});

test.serial("a key used only at the sidecar shows its use in lastUsedAt (rotation can be confirmed)", async (t) => {
  const k = await stack.api.post<{ data: { id: string; key: string } }>("/api/keys", { name: "agent proxy key", scope: "ingest" });
  const before = await stack.api.get<{ data: { id: string; lastUsedAt: string | null }[] }>("/api/keys?limit=500");
  t.is(before.body.data.find((x) => x.id === k.body.data.id)?.lastUsedAt, null);
  await eventually(async () => sidecar.state().keysByHash.size > 0 && [...sidecar.state().keysByHash.values()].some((x) => x.id === k.body.data.id));
  fakes.script({ text: "ok", usage: { inputTokens: 3, outputTokens: 1 } });
  const c = new OpenAI({ apiKey: "sk-x", baseURL: `${sidecar.url}/v1/proxy/openai/v1`, defaultHeaders: { "X-Service-Key": k.body.data.key, "X-Service-Agent": agentId }, maxRetries: 0 });
  await c.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] });
  const used = await eventually(async () => {
    const r = await stack.api.get<{ data: { id: string; lastUsedAt: string | null }[] }>("/api/keys?limit=500");
    return r.body.data.find((x) => x.id === k.body.data.id)?.lastUsedAt ?? undefined;
  });
  t.true(Date.parse(used) > Date.now() - 60_000);
});
