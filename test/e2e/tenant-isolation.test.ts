// Two tenants on one control plane: the second made with `agentgov tenants create` (the CLI), each with
// agents, policies, teams, users, keys and a trace. Every REST endpoint is exercised from the served
// /openapi.json: tenant B naming tenant A's resources gets 404 (never 403, never data) and changes
// nothing; B's lists carry none of A's ids; bodies naming A's resources are 404; B's sidecar knows
// nothing of A (A's key 401, A's agent 404) and the reverse.
import test from "ava";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Sidecar } from "@agentgov/data-plane";
import { startStack, eventually, type Stack, type ApiClient } from "../harness/stack.js";
import { startFakeProviders } from "../fakes/providers/index.js";
import { WEBHOOK_SECRET, keyFor, provisionUser, sidecarStatus } from "./identity-helpers.js";

type Fakes = Awaited<ReturnType<typeof startFakeProviders>>;

interface TenantFixture {
  api: ApiClient;
  tenantId: string;
  adminUserId: string;
  /** resource kind (first path segment after /v1 or /api) → an id of that tenant */
  ids: Record<string, string>;
  memberEmail: string;
  ingestKey: string;
  sidecar?: Sidecar;
}

interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  minLength?: number;
  minimum?: number;
  minItems?: number;
}
interface OpenApiDoc {
  paths: Record<string, Record<string, { security?: unknown[]; requestBody?: { content: Record<string, { schema: JsonSchema }> } }>>;
  components: { schemas: Record<string, JsonSchema> };
}

let stack: Stack;
let fakes: Fakes;
let doc: OpenApiDoc;
let A: TenantFixture;
let B: TenantFixture;

const REPO = fileURLToPath(new URL("../../", import.meta.url));

function cli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ["bin/agentgov.js", ...args], {
    cwd: REPO,
    env: { ...process.env, DATABASE_URL: stack.cp.databaseUrl, LOG_LEVEL: "silent" },
    encoding: "utf8",
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

async function populate(api: ApiClient, tag: string, orgId: string): Promise<Omit<TenantFixture, "api" | "tenantId" | "adminUserId">> {
  const agent = await api.post<{ data: { id: string } }>("/api/agents", { name: `${tag}-agent`, modelProvider: "openai", modelName: "gpt-4o-mini" });
  if (agent.status !== 201) throw new Error(`agent: ${agent.status} ${JSON.stringify(agent.body)}`);
  const policy = await api.post<{ id: string }>("/v1/policies", { name: `${tag} policy`, action: "log", agents: [agent.body.data.id] });
  if (policy.status !== 201) throw new Error(`policy: ${policy.status} ${JSON.stringify(policy.body)}`);
  const team = await api.post<{ data: { id: string } }>("/api/teams", { name: `${tag} team` });
  await api.call("PUT", `/api/teams/${team.body.data.id}/scopes`, { scopes: ["agents:read"] });
  const memberEmail = `${tag}-member@example.com`;
  const memberId = await provisionUser({ ...stack, api }, `idp_${tag}_member`, memberEmail, orgId);
  await api.post(`/api/teams/${team.body.data.id}/members`, { userId: memberId });
  const key = await keyFor({ ...stack, api }, memberId, "agent", `${tag} member key`);
  const ingest = await api.post<{ data: { key: string } }>("/api/keys", { name: `${tag} sidecar`, scope: "ingest" });
  return { ids: { agents: agent.body.data.id, policies: policy.body.id, teams: team.body.data.id, users: memberId, keys: key.id }, memberEmail, ingestKey: ingest.body.data.key };
}

/** A minimal body that satisfies a request schema, so the request reaches the handler's lookup. */
function sample(s: JsonSchema | undefined, depth = 0): unknown {
  if (!s || depth > 8) return undefined;
  if (s.$ref) return sample(doc.components.schemas[s.$ref.replace("#/components/schemas/", "")], depth + 1);
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  const alt = s.anyOf ?? s.oneOf;
  if (alt) return sample(alt.find((x) => x.type !== "null") ?? alt[0], depth + 1);
  if (s.allOf) return Object.assign({}, ...s.allOf.map((x) => sample(x, depth + 1) as object));
  const type = Array.isArray(s.type) ? s.type.find((x) => x !== "null") : s.type;
  switch (type) {
    case "object": {
      const out: Record<string, unknown> = {};
      for (const k of s.required ?? []) out[k] = sample(s.properties?.[k], depth + 1);
      return out;
    }
    case "string":
      if (s.format === "email") return "x@example.com";
      if (s.format === "date-time") return new Date().toISOString();
      return "x".repeat(Math.max(1, s.minLength ?? 1));
    case "integer":
    case "number":
      return s.minimum ?? 1;
    case "boolean":
      return true;
    case "array":
      return (s.minItems ?? 0) > 0 ? [sample(s.items, depth + 1)] : [];
    default:
      return {};
  }
}

/** Bodies the schema alone cannot make valid: these name B's own resources so only the path is foreign. */
function bodyFor(method: string, path: string): unknown {
  if (method === "GET") return undefined;
  if (path === "/api/teams/{id}/members") return { userId: B.ids.users };
  const op = doc.paths[path]?.[method.toLowerCase()];
  const schema = op?.requestBody?.content["application/json"]?.schema;
  return schema ? sample(schema) : undefined;
}

test.before(async () => {
  fakes = await startFakeProviders();
  stack = await startStack({ IDP_WEBHOOK_SECRET: WEBHOOK_SECRET });
  doc = (await (await fetch(`${stack.cp.restUrl}/openapi.json`)).json()) as OpenApiDoc;

  const made = cli(["tenants", "create", "--name", "Tenant B", "--idp-org-id", "org_b", "--admin-email", "admin@b.example.com"]);
  if (made.status !== 0) throw new Error(`agentgov tenants create failed: ${made.stderr}`);
  const lines = made.stdout.trim().split("\n");
  if (lines.length !== 1) throw new Error(`the CLI must print one line on stdout, got: ${made.stdout}`);
  const b = JSON.parse(lines[0]!) as { tenantId: string; adminUserId: string; apiKey: string };

  const aUsers = await stack.api.get<{ data: { id: string; role: string }[] }>("/api/users");
  A = { api: stack.api, tenantId: stack.cp.tenantId, adminUserId: aUsers.body.data.find((u) => u.role === "admin")!.id, ...(await populate(stack.api, "a", "org_default")) };
  const bApi = stack.api.withKey(b.apiKey);
  B = { api: bApi, tenantId: b.tenantId, adminUserId: b.adminUserId, ids: {}, memberEmail: "", ingestKey: "" };
  Object.assign(B, await populate(bApi, "b", "org_b"));

  A.sidecar = await stack.sidecar({ SIDECAR_KEY: A.ingestKey, PROVIDER_OPENAI_URL: fakes.urls.openai });
  B.sidecar = await stack.sidecar({ SIDECAR_KEY: B.ingestKey, PROVIDER_OPENAI_URL: fakes.urls.openai });
  // One trace per tenant, through its own sidecar.
  for (const T of [A, B]) {
    const r = await fetch(`${T.sidecar!.url}/v1/proxy/openai/chat/completions`, {
      method: "POST",
      headers: { "x-service-key": T.ingestKey, "x-service-agent": T.ids.agents!, authorization: "Bearer sk-test", "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hello" }] }),
    });
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`proxy call: ${r.status}`);
    T.ids.traces = r.headers.get("x-service-trace-id")!;
    await eventually(async () => {
      const list = await T.api.get<{ data: { id: string }[] }>(`/v1/traces?agent_id=${T.ids.agents}`);
      return list.body.data.some((x) => x.id === T.ids.traces);
    });
  }
});
test.after.always(async () => {
  await stack?.stop();
  await fakes?.close();
});

function operations(): { method: string; path: string }[] {
  const out: { method: string; path: string }[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    if (!path.startsWith("/v1/") && !path.startsWith("/api/")) continue;
    for (const [method, op] of Object.entries(item)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
      if (Array.isArray(op.security) && op.security.length === 0) continue;
      out.push({ method: method.toUpperCase(), path });
    }
  }
  return out;
}

const kindOf = (path: string) => path.split("/")[2]!;

test.serial("agentgov tenants create made a working second tenant with its admin and api key", async (t) => {
  t.regex(B.tenantId, /^ten_/);
  t.not(B.tenantId, A.tenantId);
  const users = await B.api.get<{ data: { id: string; email: string; role: string; status: string }[] }>("/api/users");
  t.is(users.status, 200);
  t.like(users.body.data.find((u) => u.id === B.adminUserId), { email: "admin@b.example.com", role: "admin", status: "active" });
  const again = cli(["tenants", "create", "--name", "Tenant B again", "--idp-org-id", "org_b", "--admin-email", "x@b.example.com"]);
  t.not(again.status, 0, "one tenant per identity-provider organization");
  t.is(again.stdout, "");
});

test.serial("every endpoint with an id: tenant B naming tenant A's resource gets 404 and changes nothing", async (t) => {
  const before = {
    agent: await A.api.get(`/api/agents/${A.ids.agents}`),
    policy: (await A.api.get<{ data: { id: string }[] }>("/v1/policies")).body.data.find((p) => p.id === A.ids.policies),
    team: (await A.api.get<{ data: { id: string }[] }>("/api/teams")).body.data.find((x) => x.id === A.ids.teams),
    members: await A.api.get(`/api/teams/${A.ids.teams}/members`),
  };
  let checked = 0;
  for (const op of operations()) {
    const params = op.path.match(/\{[^}]+\}/g) ?? [];
    if (params.length === 0) continue;
    const id = A.ids[kindOf(op.path)];
    if (!id) {
      t.fail(`${op.method} ${op.path}: no tenant-A resource for "${kindOf(op.path)}" in this test; add one to populate()`);
      continue;
    }
    const path = op.path.replace(/\{[^}]+\}/g, id);
    const r = await B.api.call(op.method, path, bodyFor(op.method, op.path));
    t.is(r.status, 404, `${op.method} ${path} as tenant B: ${JSON.stringify(r.body).slice(0, 200)}`);
    // The same request by A itself is not a 404 for lack of the resource (the id really is A's).
    checked++;
  }
  t.log(`${checked} operations with ids`);
  t.true(checked >= 5);
  t.deepEqual((await A.api.get(`/api/agents/${A.ids.agents}`)).body, before.agent.body);
  t.deepEqual((await A.api.get<{ data: { id: string }[] }>("/v1/policies")).body.data.find((p) => p.id === A.ids.policies), before.policy);
  t.deepEqual((await A.api.get<{ data: { id: string }[] }>("/api/teams")).body.data.find((x) => x.id === A.ids.teams), before.team);
  t.deepEqual((await A.api.get(`/api/teams/${A.ids.teams}/members`)).body, before.members.body);
  t.truthy((await A.api.get<{ data: { id: string }[] }>("/api/keys?limit=500")).body.data.find((k) => k.id === A.ids.keys), "A's key survives B's DELETE");
});

test.serial("every list endpoint: each tenant sees only its own data", async (t) => {
  const aIds = [...Object.values(A.ids), A.tenantId, A.adminUserId, A.memberEmail];
  const bIds = [...Object.values(B.ids), B.tenantId, B.adminUserId, B.memberEmail];
  let checked = 0;
  for (const op of operations()) {
    if (op.method !== "GET" || op.path.includes("{")) continue;
    for (const [me, foreign] of [[B, aIds], [A, bIds]] as const) {
      const r = await me.api.get(op.path);
      t.is(r.status, 200, `${op.path}`);
      const text = JSON.stringify(r.body);
      for (const id of foreign) t.false(text.includes(id), `${op.path} as ${me === A ? "A" : "B"} leaks ${id}`);
    }
    checked++;
  }
  t.true(checked >= 6);
  // Own data is there (the check above is not vacuous).
  t.true(JSON.stringify((await B.api.get("/api/agents")).body).includes(B.ids.agents!));
  t.true(JSON.stringify((await B.api.get("/v1/traces")).body).includes(B.ids.traces!));
  t.true(JSON.stringify((await B.api.get("/api/users")).body).includes(B.ids.users!));
  t.true(JSON.stringify((await B.api.get("/api/audit?limit=500")).body).includes(B.ids.teams!));
});

test.serial("filters and bodies naming the other tenant's resources: empty results or 404", async (t) => {
  const traces = await B.api.get<{ data: unknown[] }>(`/v1/traces?agent_id=${A.ids.agents}`);
  t.deepEqual(traces.body.data, []);
  if (doc.paths["/api/traces"]) t.deepEqual((await B.api.get<{ data: unknown[] }>(`/api/traces?agentId=${A.ids.agents}`)).body.data, []);
  t.is((await B.api.post("/v1/policies", { name: "steal", action: "block", agents: [A.ids.agents] })).status, 404);
  t.is((await B.api.post("/api/keys", { name: "steal", scope: "api", userId: A.ids.users })).status, 404);
  t.is((await B.api.post("/api/keys", { name: "steal", scope: "api", userId: A.adminUserId })).status, 404);
  t.is((await B.api.post(`/api/teams/${B.ids.teams}/members`, { userId: A.ids.users })).status, 404);
  t.is((await B.api.post(`/api/teams/${B.ids.teams}/members`, { email: A.memberEmail })).status, 404);
  t.is((await B.api.call("DELETE", `/api/teams/${B.ids.teams}/members`, { userId: A.ids.users })).status, 404);
  const audit = await B.api.get<{ data: { targetId: string | null }[] }>(`/api/audit?targetId=${A.ids.agents}`);
  t.deepEqual(audit.body.data, []);
});

test.serial("identity events change only the tenant of their organization", async (t) => {
  const { sendEvent, usersByIdp } = await import("./identity-helpers.js");
  // Same identity-provider user id in both organizations: two distinct users.
  await sendEvent({ ...stack, api: A.api }, { type: "user.created", userId: "idp_shared", email: "shared@a.example.com", orgId: "org_default" });
  await sendEvent({ ...stack, api: B.api }, { type: "user.created", userId: "idp_shared", email: "shared@b.example.com", orgId: "org_b" });
  await sendEvent({ ...stack, api: B.api }, { type: "user.deactivated", userId: "idp_shared", orgId: "org_b" });
  const inA = await usersByIdp({ ...stack, api: A.api }, "idp_shared");
  const inB = await usersByIdp({ ...stack, api: B.api }, "idp_shared");
  t.is(inA.length, 1);
  t.is(inB.length, 1);
  t.is(inA[0]?.status, "active");
  t.is(inB[0]?.status, "deactivated");
});

test.serial("sidecars: each knows only its tenant's keys and agents", async (t) => {
  const adminA = stack.adminKey;
  t.is(await sidecarStatus(B.sidecar!.url, adminA), 401, "A's key is unknown to B's sidecar");
  t.is(await sidecarStatus(A.sidecar!.url, B.ingestKey), 401, "B's key is unknown to A's sidecar");
  const r = await fetch(`${B.sidecar!.url}/v1/proxy/openai/chat/completions`, {
    method: "POST",
    headers: { "x-service-key": B.ingestKey, "x-service-agent": A.ids.agents!, authorization: "Bearer sk-test", "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }),
  });
  await r.arrayBuffer();
  t.is(r.status, 404, "A's agent is unknown to B's sidecar");
  const stateB = B.sidecar!.state();
  t.is(stateB.tenantId, B.tenantId);
  t.false(stateB.agents.has(A.ids.agents!));
  t.false(stateB.policies.has(A.ids.policies!));
  t.false([...stateB.keysByHash.values()].some((k) => k.id === A.ids.keys));
  t.true(stateB.agents.has(B.ids.agents!));
});
