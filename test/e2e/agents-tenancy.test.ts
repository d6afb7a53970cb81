// Tenant isolation of the agent and policy endpoints: another tenant's agents and policies are 404
// (never 403) on every endpoint, absent from lists, and cannot be named in bodies or configYaml.
import test from "ava";
import { createTenant } from "@agentgov/control-plane";
import { startStack, type ApiClient, type Stack } from "../harness/stack.js";

let stack: Stack;
let other: ApiClient;
let agentId: string;
let policyId: string;
let agentName: string;

test.before(async () => {
  stack = await startStack();
  agentName = "tenant-one-bot";
  const a = await stack.api.post<{ data: { id: string } }>("/api/agents", { name: agentName, environment: "prod", configYaml: "rate_limit: 5\n" });
  agentId = a.body.data.id;
  const p = await stack.api.post<{ id: string }>("/v1/policies", { name: "tenant one policy", action: "block", agents: [agentId] });
  policyId = p.body.id;
  const t2 = await createTenant(stack.cp.db, { name: "Other Org", idpOrgId: "org_other", adminEmail: "admin@other.example" });
  other = stack.api.withKey(t2.apiKey);
});
test.after.always(async () => {
  await stack?.stop();
});

test.serial("another tenant's agent is 404 on every agent endpoint of both groups", async (t) => {
  const versions = (await stack.api.get<{ total: number }>(`/api/agents/${agentId}/history`)).body.total;
  const calls: [string, string, unknown?][] = [
    ["GET", `/v1/agents/${agentId}`],
    ["PATCH", `/v1/agents/${agentId}`, { status: "paused" }],
    ["GET", `/api/agents/${agentId}`],
    ["PATCH", `/api/agents/${agentId}`, { description: "hijacked" }],
    ["PATCH", `/api/agents/${agentId}`, { configYaml: "rate_limit: 1\n" }],
    ["GET", `/api/agents/${agentId}/tools`],
    ["GET", `/api/agents/${agentId}/history`],
    ["GET", `/v1/policies?agent_id=${agentId}`],
  ];
  for (const [method, path, body] of calls) {
    const r = await other.call(method, path, body);
    t.is(r.status, 404, `${method} ${path}`);
  }
  const mine = await stack.api.get<{ status: string; config: { rate_limit: number } }>(`/v1/agents/${agentId}`);
  t.is(mine.body.status, "active");
  t.is(mine.body.config.rate_limit, 5);
  t.is((await stack.api.get<{ data: { description: string | null } }>(`/api/agents/${agentId}`)).body.data.description, null);
  t.is((await stack.api.get<{ total: number }>(`/api/agents/${agentId}/history`)).body.total, versions);
});

test.serial("another tenant's policy is 404 on read, update and delete", async (t) => {
  t.is((await other.get(`/v1/policies/${policyId}`)).status, 404);
  t.is((await other.call("PATCH", `/v1/policies/${policyId}`, { status: "disabled" })).status, 404);
  t.is((await other.call("DELETE", `/v1/policies/${policyId}`)).status, 404);
  const mine = await stack.api.get<{ status: string; agents: string[] }>(`/v1/policies/${policyId}`);
  t.is(mine.status, 200);
  t.is(mine.body.status, "active");
  t.deepEqual(mine.body.agents, [agentId]);
});

test.serial("lists show only the caller's tenant", async (t) => {
  const a = await other.get<{ data: unknown[]; has_more: boolean }>("/v1/agents");
  t.deepEqual(a.body, { data: [], has_more: false });
  const b = await other.get<{ data: unknown[]; total: number }>("/api/agents?environment=prod");
  t.is(b.body.total, 0);
  const p = await other.get<{ data: unknown[] }>("/v1/policies");
  t.deepEqual(p.body.data, []);
});

test.serial("bodies and configYaml cannot name another tenant's agents or policies", async (t) => {
  t.is((await other.post("/v1/policies", { name: "x", action: "block", agents: [agentId] })).status, 404);
  const own = await other.post<{ id: string }>("/v1/policies", { name: "own", action: "log" });
  t.is(own.status, 201);
  t.is((await other.call("PATCH", `/v1/policies/${own.body.id}`, { agents: [agentId] })).status, 404);
  const yaml = await other.post<{ error: string; details: { path: string }[] }>("/api/agents", { name: "bot", configYaml: `policies: [${policyId}]\n` });
  t.is(yaml.status, 400);
  t.true(yaml.body.details.some((d) => d.path === "body.configYaml.policies"));
  t.deepEqual((await stack.api.get<{ agents: string[] }>(`/v1/policies/${policyId}`)).body.agents, [agentId]);
});

test.serial("agent names are unique per tenant, not across tenants", async (t) => {
  const r = await other.post<{ data: { id: string; name: string } }>("/api/agents", { name: agentName });
  t.is(r.status, 201);
  t.not(r.body.data.id, agentId);
  t.is((await other.post("/api/agents", { name: agentName })).status, 409);
});

test.serial("a cursor from one tenant does not reveal the other's agents", async (t) => {
  for (let i = 0; i < 3; i++) await stack.api.post("/api/agents", { name: `page-${i}` });
  const page = await stack.api.get<{ next_cursor?: string }>("/v1/agents?limit=1");
  t.truthy(page.body.next_cursor);
  const r = await other.get<{ data: { id: string }[] }>(`/v1/agents?cursor=${page.body.next_cursor}`);
  t.is(r.status, 200);
  const mine = new Set((await stack.api.get<{ data: { id: string }[] }>("/v1/agents?limit=200")).body.data.map((a) => a.id));
  t.false(r.body.data.some((a) => mine.has(a.id)));
});
