// Contract of the agent endpoints of both groups: fields, types, envelopes, defaults, bounds, status
// transitions, configuration history and observed tools (every response is also checked against the
// OpenAPI document by the harness).
import test from "ava";
import { hashApiKey } from "@agentgov/control-plane";
import { startStack, type Stack } from "../harness/stack.js";

let stack: Stack;
test.before(async () => {
  stack = await startStack();
});
test.after.always(async () => {
  await stack?.stop();
});

interface AgentB {
  id: string;
  name: string;
  description: string | null;
  modelProvider: string;
  modelName: string;
  environment: string;
  status: string;
  configYaml?: string;
  createdAt: string;
  updatedAt: string;
}
interface ListB<T> {
  data: T[];
  total: number;
  limit: number;
  offset: number;
}
interface ErrA {
  error: { code: string; message: string; request_id: string };
}
interface ErrB {
  error: string;
  details?: { path: string; message: string }[];
}
interface DetailA {
  id: string;
  name: string;
  provider: string;
  model: string;
  status: string;
  created_at: string;
  updated_at: string;
  total_requests: number;
  total_cost: number;
  config: { rate_limit: number | null; budget_limit_daily: number | null; pii_detection: boolean; policies: string[] };
  metrics: { requests_24h: number; avg_latency_ms: number; cost_24h: number; error_rate: number };
}
interface Deployment {
  id: string;
  agentId: string;
  version: number;
  configYaml: string;
  deployedBy: string;
  deployedAt: string;
}
interface Tool {
  id: string;
  agentId: string;
  toolName: string;
  callCount: number;
  lastCalledAt: string;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
let counter = 0;

async function createAgent(body: Record<string, unknown> = {}): Promise<AgentB> {
  const r = await stack.api.post<{ data: AgentB }>("/api/agents", { name: `agent-${++counter}-${Date.now()}`, ...body });
  if (r.status !== 201) throw new Error(`create agent: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data;
}

async function adminUserId(): Promise<string> {
  const r = await stack.cp.db.query<{ id: string }>("SELECT created_by AS id FROM api_keys WHERE key_hash = $1", [hashApiKey(stack.adminKey)]);
  return r.rows[0]!.id;
}

test("GET /v1/agents/{id}: unwrapped detail with the config defaults and zero metrics for a new agent", async (t) => {
  const a = await createAgent({ modelProvider: "openai", modelName: "gpt-4o-mini", environment: "staging" });
  const r = await stack.api.get<DetailA>(`/v1/agents/${a.id}`);
  t.is(r.status, 200);
  t.deepEqual(Object.keys(r.body).sort(), ["config", "created_at", "id", "metrics", "model", "name", "provider", "status", "total_cost", "total_requests", "updated_at"]);
  t.is(r.body.id, a.id);
  t.is(r.body.name, a.name);
  t.is(r.body.provider, "openai");
  t.is(r.body.model, "gpt-4o-mini");
  t.is(r.body.status, "active");
  t.is(r.body.created_at, a.createdAt);
  t.regex(r.body.updated_at, ISO);
  t.deepEqual(r.body.config, { rate_limit: null, budget_limit_daily: null, pii_detection: true, policies: [] });
  t.deepEqual(r.body.metrics, { requests_24h: 0, avg_latency_ms: 0, cost_24h: 0, error_rate: 0 });
  t.is(r.body.total_requests, 0);
  t.is(r.body.total_cost, 0);
});

test("GET /v1/agents/{id}: config is read from configYaml", async (t) => {
  const a = await createAgent({ configYaml: "rate_limit: 60\nbudget_limit_daily: 2.5\npii_detection: false\nowner: team-a\n" });
  const r = await stack.api.get<DetailA>(`/v1/agents/${a.id}`);
  t.deepEqual(r.body.config, { rate_limit: 60, budget_limit_daily: 2.5, pii_detection: false, policies: [] });
  const zero = await createAgent({ configYaml: "budget_limit_daily: 0\n" });
  t.is((await stack.api.get<DetailA>(`/v1/agents/${zero.id}`)).body.config.budget_limit_daily, 0);
});

test("GET /v1/agents/{id}: unknown id is 404 not_found in group A's shape", async (t) => {
  for (const id of ["agt_01HZZZZZZZZZZZZZZZZZZZZZZZ", "nope"]) {
    const r = await stack.api.get<ErrA>(`/v1/agents/${id}`);
    t.is(r.status, 404);
    t.is(r.body.error.code, "not_found");
    t.is(r.body.error.request_id, r.headers.get("x-request-id") ?? "");
  }
});

test("PATCH /v1/agents/{id}: active ⇄ paused, → archived, archived is final (409 conflict)", async (t) => {
  const a = await createAgent();
  const path = `/v1/agents/${a.id}`;
  const paused = await stack.api.call<DetailA>("PATCH", path, { status: "paused" });
  t.is(paused.status, 200);
  t.is(paused.body.status, "paused");
  t.is(paused.body.id, a.id);
  t.truthy(paused.body.config);
  t.is((await stack.api.call<DetailA>("PATCH", path, { status: "active" })).body.status, "active");
  t.is((await stack.api.call<DetailA>("PATCH", path, { status: "paused" })).body.status, "paused");
  t.is((await stack.api.call<DetailA>("PATCH", path, { status: "paused" })).status, 200, "same status is a no-op");
  t.is((await stack.api.call<DetailA>("PATCH", path, { status: "archived" })).body.status, "archived");
  for (const status of ["active", "paused"]) {
    const r = await stack.api.call<ErrA>("PATCH", path, { status });
    t.is(r.status, 409, status);
    t.is(r.body.error.code, "conflict");
    t.regex(r.body.error.message, /archived/);
  }
  t.is((await stack.api.get<DetailA>(path)).body.status, "archived");
  const direct = await createAgent();
  t.is((await stack.api.call<DetailA>("PATCH", `/v1/agents/${direct.id}`, { status: "archived" })).status, 200, "active → archived");
  const list = await stack.api.get<{ data: { id: string; status: string }[] }>("/v1/agents?status=archived&limit=200");
  t.true(list.body.data.some((x) => x.id === a.id));
  t.true(list.body.data.every((x) => x.status === "archived"));
});

test("PATCH /v1/agents/{id}: bad bodies are 400, unknown agent 404", async (t) => {
  const a = await createAgent();
  for (const body of [{ status: "deleted" }, {}, { status: "paused", name: "x" }, { status: 1 }]) {
    const r = await stack.api.call<ErrA>("PATCH", `/v1/agents/${a.id}`, body);
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error.code, "bad_request");
  }
  t.is((await stack.api.call("PATCH", "/v1/agents/agt_01HZZZZZZZZZZZZZZZZZZZZZZZ", { status: "paused" })).status, 404);
});

test("GET /api/agents: envelope, defaults, no configYaml in items, environment filter", async (t) => {
  const env = `env-${Date.now()}`;
  const made = [];
  for (let i = 0; i < 3; i++) made.push(await createAgent({ environment: env, configYaml: "rate_limit: 5\n", description: `d${i}` }));
  const r = await stack.api.get<ListB<AgentB>>("/api/agents");
  t.is(r.status, 200);
  t.deepEqual(Object.keys(r.body).sort(), ["data", "limit", "offset", "total"]);
  t.is(r.body.limit, 50);
  t.is(r.body.offset, 0);
  t.true(r.body.total >= 3);
  for (const item of r.body.data) {
    t.false("configYaml" in item);
    t.deepEqual(Object.keys(item).sort(), ["createdAt", "description", "environment", "id", "modelName", "modelProvider", "name", "status", "updatedAt"]);
  }
  const filtered = await stack.api.get<ListB<AgentB>>(`/api/agents?environment=${env}`);
  t.is(filtered.body.total, 3);
  t.deepEqual(filtered.body.data.map((x) => x.id), made.map((x) => x.id).reverse(), "newest first");
  const page = await stack.api.get<ListB<AgentB>>(`/api/agents?environment=${env}&limit=2&offset=2`);
  t.deepEqual(page.body.data.map((x) => x.id), [made[0]!.id]);
  t.is(page.body.total, 3);
  t.is(page.body.limit, 2);
  t.is(page.body.offset, 2);
  t.is((await stack.api.get<ListB<AgentB>>("/api/agents?environment=no-such-env")).body.total, 0);
  t.is((await stack.api.get<ListB<AgentB>>("/api/agents?limit=500")).status, 200);
});

test("GET /api/agents: bounds (limit 0, 501, abc, negative offset) are 400 in group B's shape", async (t) => {
  for (const q of ["limit=0", "limit=501", "limit=abc", "limit=-1", "offset=-1", "offset=x", "limit=1.5"]) {
    const r = await stack.api.get<ErrB>(`/api/agents?${q}`);
    t.is(r.status, 400, q);
    t.is(typeof r.body.error, "string");
    t.true(Array.isArray(r.body.details), q);
  }
  t.is((await stack.api.get("/api/agents?unknownParam=1")).status, 200, "unknown query parameters are ignored");
});

test("GET /api/agents: offset up to the advertised maximum is accepted; beyond it is 400 too big", async (t) => {
  const doc = (await (await fetch(`${stack.cp.restUrl}/openapi.json`)).json()) as { paths: Record<string, { get: { parameters: { name: string; schema: { maximum: number } }[] } }> };
  const max = doc.paths["/api/agents"]!.get.parameters.find((p) => p.name === "offset")!.schema.maximum;
  t.is(max, 1_000_000_000);
  const atMax = await stack.api.get<ListB<AgentB>>(`/api/agents?offset=${max}`);
  t.is(atMax.status, 200);
  t.deepEqual(atMax.body.data, []);
  t.is(atMax.body.offset, max);
  for (const offset of [`${max + 1}`, "99999999999", "9".repeat(30)]) {
    const r = await stack.api.get<ErrB>(`/api/agents?offset=${offset}`);
    t.is(r.status, 400, offset);
    t.deepEqual(r.body.details?.map((d) => d.path), ["query.offset"], offset);
    t.regex(r.body.details?.[0]?.message ?? "", /too big/i, offset);
  }
});

test("GET /api/agents/:id: {data} with configYaml exactly as written; unknown id 404", async (t) => {
  const yaml = "rate_limit: 10 # per minute\ncustom_key:\n  nested: [1, 2]\n  text: \"kept\"\n";
  const a = await createAgent({ configYaml: yaml, description: "a bot", modelProvider: "anthropic", modelName: "claude-3-5-haiku" });
  const r = await stack.api.get<{ data: AgentB }>(`/api/agents/${a.id}`);
  t.is(r.status, 200);
  t.is(r.body.data.configYaml, yaml);
  t.is(r.body.data.description, "a bot");
  t.is(r.body.data.modelProvider, "anthropic");
  t.is(r.body.data.status, "active");
  t.is(r.body.data.createdAt, a.createdAt);
  const missing = await stack.api.get<ErrB>("/api/agents/agt_01HZZZZZZZZZZZZZZZZZZZZZZZ");
  t.is(missing.status, 404);
  t.is(typeof missing.body.error, "string");
  const noYaml = await createAgent();
  t.is((await stack.api.get<{ data: AgentB }>(`/api/agents/${noYaml.id}`)).body.data.configYaml, "");
  t.is((await stack.api.get<{ data: AgentB }>(`/api/agents/${noYaml.id}`)).body.data.description, null);
  // A description sent back as the API gave it (null) is accepted at creation, as in a PATCH.
  const nullDescribed = await createAgent({ description: null });
  t.is((await stack.api.get<{ data: AgentB }>(`/api/agents/${nullDescribed.id}`)).body.data.description, null);
});

test("POST /api/agents: name required, trimmed non-empty, unique; 201 creation fields only", async (t) => {
  for (const body of [{}, { name: "" }, { name: "   " }, { name: 5 }, { name: "x".repeat(201) }]) {
    const r = await stack.api.post<ErrB>("/api/agents", body);
    t.is(r.status, 400, JSON.stringify(body));
    t.true((r.body.details ?? []).some((d) => d.path.includes("name")));
  }
  const a = await createAgent({ environment: "prod" });
  t.deepEqual(Object.keys(a).sort(), ["createdAt", "environment", "id", "modelName", "modelProvider", "name", "updatedAt"]);
  t.is(a.modelProvider, "");
  t.regex(a.createdAt, ISO);
  const dup = await stack.api.post<ErrB>("/api/agents", { name: a.name });
  t.is(dup.status, 409);
});

test("PATCH /api/agents/:id: any writable field, name uniqueness, status rules, strict body", async (t) => {
  const a = await createAgent({ environment: "dev" });
  const other = await createAgent();
  const r = await stack.api.call<{ data: AgentB }>("PATCH", `/api/agents/${a.id}`, {
    name: `${a.name}-renamed`,
    description: "now described",
    modelProvider: "mistral",
    modelName: "mistral-small",
    environment: "prod",
  });
  t.is(r.status, 200);
  t.is(r.body.data.name, `${a.name}-renamed`);
  t.is(r.body.data.description, "now described");
  t.is(r.body.data.modelProvider, "mistral");
  t.is(r.body.data.modelName, "mistral-small");
  t.is(r.body.data.environment, "prod");
  t.is(r.body.data.configYaml, "");
  t.true(Date.parse(r.body.data.updatedAt) >= Date.parse(a.updatedAt));
  const detail = await stack.api.get<DetailA>(`/v1/agents/${a.id}`);
  t.is(detail.body.provider, "mistral");
  t.is(detail.body.model, "mistral-small");

  t.is((await stack.api.call("PATCH", `/api/agents/${a.id}`, { name: other.name })).status, 409);
  t.is((await stack.api.call("PATCH", `/api/agents/${a.id}`, { name: `${a.name}-renamed` })).status, 200, "own name is not a duplicate");
  t.is((await stack.api.call<ErrB>("PATCH", `/api/agents/${a.id}`, { bogus: 1 })).status, 400);
  t.is((await stack.api.call("PATCH", `/api/agents/${a.id}`, { description: null })).status, 200);
  t.is((await stack.api.get<{ data: AgentB }>(`/api/agents/${a.id}`)).body.data.description, null);

  t.is((await stack.api.call<{ data: AgentB }>("PATCH", `/api/agents/${a.id}`, { status: "paused" })).body.data.status, "paused");
  t.is((await stack.api.get<DetailA>(`/v1/agents/${a.id}`)).body.status, "paused");
  t.is((await stack.api.call("PATCH", `/api/agents/${a.id}`, { status: "archived" })).status, 200);
  const back = await stack.api.call<ErrB>("PATCH", `/api/agents/${a.id}`, { status: "active" });
  t.is(back.status, 409);
  t.regex(back.body.error, /archived/);
  t.is((await stack.api.call("PATCH", "/api/agents/agt_01HZZZZZZZZZZZZZZZZZZZZZZZ", { description: "x" })).status, 404);
});

test("history: version 1 at creation, a new configYaml appends a record by the key's user, most recent first", async (t) => {
  const user = await adminUserId();
  const a = await createAgent({ configYaml: "rate_limit: 1\n" });
  const h1 = await stack.api.get<ListB<Deployment>>(`/api/agents/${a.id}/history`);
  t.is(h1.status, 200);
  t.is(h1.body.total, 1);
  t.is(h1.body.limit, 20);
  t.is(h1.body.offset, 0);
  const first = h1.body.data[0]!;
  t.deepEqual(Object.keys(first).sort(), ["agentId", "configYaml", "deployedAt", "deployedBy", "id", "version"]);
  t.regex(first.id, /^dep_[0-9A-Z]{26}$/);
  t.is(first.agentId, a.id);
  t.is(first.version, 1);
  t.is(first.configYaml, "rate_limit: 1\n");
  t.is(first.deployedBy, user);
  t.regex(first.deployedAt, ISO);

  // Non-config changes and an identical configYaml write no record.
  await stack.api.call("PATCH", `/api/agents/${a.id}`, { description: "x", status: "paused" });
  await stack.api.call("PATCH", `/api/agents/${a.id}`, { configYaml: "rate_limit: 1\n" });
  t.is((await stack.api.get<ListB<Deployment>>(`/api/agents/${a.id}/history`)).body.total, 1);

  for (let i = 2; i <= 23; i++) {
    const r = await stack.api.call("PATCH", `/api/agents/${a.id}`, { configYaml: `rate_limit: ${i}\n` });
    t.is(r.status, 200);
  }
  const h = await stack.api.get<ListB<Deployment>>(`/api/agents/${a.id}/history`);
  t.is(h.body.total, 23);
  t.is(h.body.data.length, 20, "limit defaults to 20");
  t.deepEqual(h.body.data.map((d) => d.version), Array.from({ length: 20 }, (_, i) => 23 - i));
  t.is(h.body.data[0]!.configYaml, "rate_limit: 23\n");
  const tail = await stack.api.get<ListB<Deployment>>(`/api/agents/${a.id}/history?limit=5&offset=20`);
  t.deepEqual(tail.body.data.map((d) => d.version), [3, 2, 1]);
  t.is((await stack.api.get<DetailA>(`/v1/agents/${a.id}`)).body.config.rate_limit, 23);
  for (const q of ["limit=0", "limit=501", "offset=-1"]) t.is((await stack.api.get(`/api/agents/${a.id}/history?${q}`)).status, 400, q);
  t.is((await stack.api.get("/api/agents/agt_01HZZZZZZZZZZZZZZZZZZZZZZZ/history")).status, 404);
});

test("tools: listed from what ingest recorded, most recently called first, offset pagination", async (t) => {
  const a = await createAgent();
  const empty = await stack.api.get<ListB<Tool>>(`/api/agents/${a.id}/tools`);
  t.deepEqual(empty.body, { data: [], total: 0, limit: 50, offset: 0 });
  const base = Date.parse("2026-01-01T00:00:00.000Z");
  for (let i = 0; i < 7; i++) {
    await stack.cp.db.query(
      "INSERT INTO agent_tools (id, tenant_id, agent_id, tool_name, call_count, last_called_at) VALUES ($1, $2, $3, $4, $5, $6)",
      [`tool_01HX${String(i).padStart(22, "0")}`, stack.cp.tenantId, a.id, `tool_${i}`, i + 1, new Date(base + i * 60_000)],
    );
  }
  const r = await stack.api.get<ListB<Tool>>(`/api/agents/${a.id}/tools?limit=3`);
  t.is(r.status, 200);
  t.is(r.body.total, 7);
  t.is(r.body.limit, 3);
  t.deepEqual(r.body.data.map((x) => x.toolName), ["tool_6", "tool_5", "tool_4"]);
  const first = r.body.data[0]!;
  t.deepEqual(first, { id: first.id, agentId: a.id, toolName: "tool_6", callCount: 7, lastCalledAt: new Date(base + 6 * 60_000).toISOString() });
  const last = await stack.api.get<ListB<Tool>>(`/api/agents/${a.id}/tools?limit=3&offset=6`);
  t.deepEqual(last.body.data.map((x) => x.toolName), ["tool_0"]);
  for (const q of ["limit=0", "limit=501", "offset=-1", "limit=x"]) t.is((await stack.api.get(`/api/agents/${a.id}/tools?${q}`)).status, 400, q);
  t.is((await stack.api.get("/api/agents/agt_01HZZZZZZZZZZZZZZZZZZZZZZZ/tools")).status, 404);
});

test("an agent-scoped (read-only) key reads agents but cannot change them", async (t) => {
  const a = await createAgent();
  const k = await stack.api.post<{ data: { key: string } }>("/api/keys", { name: "reader", scope: "agent" });
  const reader = stack.api.withKey(k.body.data.key);
  t.is((await reader.get(`/v1/agents/${a.id}`)).status, 200);
  t.is((await reader.get(`/api/agents/${a.id}`)).status, 200);
  t.is((await reader.get(`/api/agents/${a.id}/history`)).status, 200);
  t.is((await reader.get(`/api/agents/${a.id}/tools`)).status, 200);
  t.is((await reader.call("PATCH", `/v1/agents/${a.id}`, { status: "paused" })).status, 403);
  t.is((await reader.call("PATCH", `/api/agents/${a.id}`, { description: "x" })).status, 403);
  t.is((await stack.api.get<DetailA>(`/v1/agents/${a.id}`)).body.status, "active");
  t.is((await stack.api.withKey(undefined).get(`/v1/agents/${a.id}`)).status, 401);
});

test("every agent write is audited", async (t) => {
  const a = await createAgent();
  await stack.api.call("PATCH", `/v1/agents/${a.id}`, { status: "paused" });
  await stack.api.call("PATCH", `/api/agents/${a.id}`, { configYaml: "rate_limit: 3\n" });
  const rows = await stack.cp.db.query<{ action: string; details: Record<string, unknown> }>(
    "SELECT action, details FROM audit_log WHERE target_id = $1 ORDER BY created_at, id",
    [a.id],
  );
  t.deepEqual(rows.rows.map((r) => r.action), ["agent.create", "agent.update", "agent.update"]);
  t.deepEqual(rows.rows[1]!.details.status, { from: "active", to: "paused" });
});
