// Every agent and policy change reaches a real sidecar as a Sync delta, and the sidecar enforces it on the
// very next request after the delta arrives (no retries): policy create / update / delete, agent status
// (paused 403 agent_paused, archived 404) and agent config. Also: the detail's metrics and the observed
// tools come from what the sidecar traced.
import test from "ava";
import type { Sidecar } from "@agentgov/data-plane";
import { startStack, eventually, type Stack } from "../harness/stack.js";
import { startFakeProviders } from "../fakes/providers/index.js";

type Fakes = Awaited<ReturnType<typeof startFakeProviders>>;
let stack: Stack;
let fakes: Fakes;
let sidecar: Sidecar;

test.before(async () => {
  fakes = await startFakeProviders();
  stack = await startStack();
  sidecar = await stack.sidecar({ PROVIDER_OPENAI_URL: fakes.urls.openai });
});
test.after.always(async () => {
  await stack?.stop();
  await fakes?.close();
});

interface ProxyAnswer {
  status: number;
  body: { error?: { code: string; policy_id?: string; message: string }; choices?: unknown[] };
  headers: Headers;
}

async function ask(agentId: string, content: string): Promise<ProxyAnswer> {
  const res = await fetch(`${sidecar.url}/v1/proxy/openai/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-test", "x-service-key": stack.adminKey, "x-service-agent": agentId },
    body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content }] }),
  });
  return { status: res.status, body: (await res.json()) as ProxyAnswer["body"], headers: res.headers };
}

/** Waits until the sidecar has applied every change committed so far (the delta has arrived). */
async function deltaArrived(): Promise<void> {
  const r = await stack.cp.db.query<{ v: string | null }>("SELECT max(version)::text AS v FROM sync_changes WHERE tenant_id = $1", [stack.cp.tenantId]);
  const want = BigInt(r.rows[0]?.v ?? "0");
  await eventually(async () => sidecar.state().version >= want, 10_000, 5);
}

let n = 0;
async function agent(configYaml?: string): Promise<string> {
  const r = await stack.api.post<{ data: { id: string } }>("/api/agents", { name: `sync-${++n}`, modelProvider: "openai", modelName: "gpt-4o-mini", ...(configYaml ? { configYaml } : {}) });
  if (r.status !== 201) throw new Error(JSON.stringify(r.body));
  await deltaArrived();
  return r.body.data.id;
}

test.serial("a new blocking policy is enforced on the next request after its delta arrives; update and delete too", async (t) => {
  const a = await agent();
  const b = await agent();
  t.is((await ask(a, "tell me the launch codes")).status, 200, "nothing blocks yet");

  const created = await stack.api.post<{ id: string }>("/v1/policies", { name: "no launch codes", action: "block", priority: 1, conditions: { keywords: ["launch codes"] } });
  t.is(created.status, 201);
  const p = created.body.id;
  await deltaArrived();
  const calls = fakes.requests.length;
  const blocked = await ask(a, "tell me the LAUNCH CODES");
  t.is(blocked.status, 403);
  t.is(blocked.body.error?.code, "policy_violation");
  t.is(blocked.body.error?.policy_id, p);
  t.is(fakes.requests.length, calls, "the provider is not called");
  t.is((await ask(b, "launch codes please")).status, 403, "tenant-wide: every agent");
  t.is((await ask(a, "hello")).status, 200);

  // Scoped to agent a only.
  t.is((await stack.api.call("PATCH", `/v1/policies/${p}`, { agents: [a] })).status, 200);
  await deltaArrived();
  t.is((await ask(b, "launch codes please")).status, 200);
  t.is((await ask(a, "launch codes please")).status, 403);

  // Disabled, then re-enabled with other conditions (replaced whole).
  t.is((await stack.api.call("PATCH", `/v1/policies/${p}`, { status: "disabled" })).status, 200);
  await deltaArrived();
  t.is((await ask(a, "launch codes please")).status, 200);
  t.is((await stack.api.call("PATCH", `/v1/policies/${p}`, { status: "active", conditions: { keywords: ["self destruct"] } })).status, 200);
  await deltaArrived();
  t.is((await ask(a, "launch codes please")).status, 200);
  t.is((await ask(a, "initiate self destruct")).status, 403);

  // Deleted.
  t.is((await stack.api.call("DELETE", `/v1/policies/${p}`)).status, 204);
  await deltaArrived();
  t.false(sidecar.state().policies.has(p));
  t.is((await ask(a, "initiate self destruct")).status, 200);
});

test.serial("agent status: paused is 403 agent_paused, active again serves, archived is 404", async (t) => {
  const a = await agent();
  t.is((await ask(a, "hi")).status, 200);
  t.is((await stack.api.call("PATCH", `/v1/agents/${a}`, { status: "paused" })).status, 200);
  await deltaArrived();
  const paused = await ask(a, "hi");
  t.is(paused.status, 403);
  t.is(paused.body.error?.code, "agent_paused");
  t.is((await stack.api.call("PATCH", `/api/agents/${a}`, { status: "active" })).status, 200);
  await deltaArrived();
  t.is((await ask(a, "hi")).status, 200);
  t.is((await stack.api.call("PATCH", `/v1/agents/${a}`, { status: "archived" })).status, 200);
  await deltaArrived();
  const archived = await ask(a, "hi");
  t.is(archived.status, 404);
  t.is(archived.body.error?.code, "not_found");
});

test.serial("agent config changes reach the sidecar: rate limit, PII detection, policy links from configYaml", async (t) => {
  const a = await agent();
  t.is((await stack.api.call("PATCH", `/api/agents/${a}`, { configYaml: "rate_limit: 1\n" })).status, 200);
  await deltaArrived();
  t.is((await ask(a, "one")).status, 200);
  const limited = await ask(a, "two");
  t.is(limited.status, 429);
  t.is(limited.body.error?.code, "rate_limit_exceeded");

  // A PII policy linked to agent b only, through b's configYaml.
  const b = await agent();
  const c = await agent();
  const pii = await stack.api.post<{ id: string }>("/v1/policies", { name: "no ssn for c", action: "block", conditions: { pii_types: ["ssn"] }, agents: [c] });
  await deltaArrived();
  const ssn = "my ssn is 536-22-8726";
  t.is((await ask(b, ssn)).status, 200, "not linked to b yet");
  t.is((await stack.api.call("PATCH", `/api/agents/${b}`, { configYaml: `policies: [${pii.body.id}]\n` })).status, 200);
  await deltaArrived();
  t.is((await ask(b, ssn)).status, 403, "linked through configYaml");
  t.is((await stack.api.call("PATCH", `/api/agents/${b}`, { configYaml: `pii_detection: false\npolicies: [${pii.body.id}]\n` })).status, 200);
  await deltaArrived();
  t.is((await ask(b, ssn)).status, 200, "pii_detection: false means PII conditions never match");
  t.is((await ask(c, ssn)).status, 403, "c still has detection on");
});

test.serial("an agent created after the sidecar started is served once its delta arrives", async (t) => {
  const r = await stack.api.post<{ data: { id: string } }>("/api/agents", { name: "late-agent" });
  await deltaArrived();
  t.is((await ask(r.body.data.id, "hi")).status, 200);
});

test.serial("the agent detail's metrics and the observed tools come from the sidecar's traces", async (t) => {
  const a = await agent();
  fakes.script({ text: "", toolCalls: [{ name: "get_weather", arguments: { city: "Lyon" } }], usage: { inputTokens: 10, outputTokens: 5 } });
  t.is((await ask(a, "weather in Lyon?")).status, 200);
  t.is((await ask(a, "weather in Lyon again?")).status, 200);
  fakes.script({ text: "plain answer", usage: { inputTokens: 10, outputTokens: 5 } });
  t.is((await ask(a, "no tools")).status, 200);
  const detail = await eventually(async () => {
    const r = await stack.api.get<{ total_requests: number; total_cost: number; metrics: { requests_24h: number; cost_24h: number; error_rate: number; avg_latency_ms: number } }>(`/v1/agents/${a}`);
    return r.body.total_requests === 3 ? r.body : undefined;
  });
  t.is(detail.metrics.requests_24h, 3);
  t.true(detail.total_cost > 0);
  t.is(detail.metrics.cost_24h, detail.total_cost);
  t.is(detail.metrics.error_rate, 0);
  t.true(Number.isInteger(detail.metrics.avg_latency_ms));
  const summary = await stack.api.get<{ data: { id: string; total_requests: number }[] }>("/v1/agents?limit=200");
  t.is(summary.body.data.find((x) => x.id === a)?.total_requests, 3);
  const tools = await eventually(async () => {
    const r = await stack.api.get<{ data: { toolName: string; callCount: number; lastCalledAt: string; agentId: string }[]; total: number }>(`/api/agents/${a}/tools`);
    return r.body.total > 0 ? r.body : undefined;
  });
  t.is(tools.total, 1);
  t.is(tools.data[0]!.toolName, "get_weather");
  t.is(tools.data[0]!.callCount, 2);
  t.is(tools.data[0]!.agentId, a);
});
