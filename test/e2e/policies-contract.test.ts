// Contract of the policy endpoints (DESIGN.md §6): create, read, list with filters, PATCH (top-level merge,
// conditions replaced whole), DELETE 204, strict validation naming the field, scopes.
import test from "ava";
import { startStack, type Stack } from "../harness/stack.js";

let stack: Stack;
test.before(async () => {
  stack = await startStack();
});
test.after.always(async () => {
  await stack?.stop();
});

interface Policy {
  id: string;
  name: string;
  description: string | null;
  status: string;
  action: string;
  priority: number;
  conditions: Record<string, unknown>;
  agents: string[];
  created_at: string;
  updated_at: string;
}
interface ErrA {
  error: { code: string; message: string; request_id: string };
}
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
let n = 0;

async function policy(body: Record<string, unknown> = {}): Promise<Policy> {
  const r = await stack.api.post<Policy>("/v1/policies", { name: `p-${++n}`, action: "block", ...body });
  if (r.status !== 201) throw new Error(`create policy: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}
async function agent(): Promise<string> {
  const r = await stack.api.post<{ data: { id: string } }>("/api/agents", { name: `a-${++n}-${Date.now()}` });
  return r.body.data.id;
}

test("POST /v1/policies: 201 with the unwrapped policy and its defaults", async (t) => {
  const r = await stack.api.post<Policy>("/v1/policies", {
    name: "Block SSN",
    action: "block",
    priority: 1,
    conditions: { direction: "inbound", pii_types: ["ssn", "credit_card"] },
  });
  t.is(r.status, 201);
  t.deepEqual(Object.keys(r.body).sort(), ["action", "agents", "conditions", "created_at", "description", "id", "name", "priority", "status", "updated_at"]);
  t.regex(r.body.id, /^pol_[0-9A-Z]{26}$/);
  t.is(r.body.status, "active");
  t.is(r.body.description, null);
  t.deepEqual(r.body.conditions, { direction: "inbound", pii_types: ["ssn", "credit_card"] });
  t.deepEqual(r.body.agents, []);
  t.regex(r.body.created_at, ISO);
  t.regex(r.body.updated_at, ISO);
  const minimal = await policy({ action: "log" });
  t.is(minimal.priority, 100);
  t.deepEqual(minimal.conditions, { direction: "inbound" });
  const full = await policy({
    description: "everything",
    status: "disabled",
    action: "redact",
    priority: -5,
    conditions: { direction: "both", pii_types: ["email"], injection_score_gte: 0.7, models: ["gpt-4o"], max_input_tokens: 4000, keywords: ["secret"], regex: "\\bproject-[a-z]+\\b" },
  });
  t.is(full.status, "disabled");
  t.is(full.description, "everything");
  t.deepEqual(full.conditions, { direction: "both", pii_types: ["email"], injection_score_gte: 0.7, models: ["gpt-4o"], max_input_tokens: 4000, keywords: ["secret"], regex: "\\bproject-[a-z]+\\b" });
});

test("strict validation: a 400 bad_request naming the field", async (t) => {
  const cases: [Record<string, unknown>, string][] = [
    [{ action: "block", conditions: { pii_types: ["dna"] } }, "conditions.pii_types"],
    [{ action: "block", conditions: { unknown_key: 1 } }, "conditions"],
    [{ action: "block", conditions: { injection_score_gte: 1.5 } }, "conditions.injection_score_gte"],
    [{ action: "block", conditions: { injection_score_gte: -0.1 } }, "conditions.injection_score_gte"],
    [{ action: "block", conditions: { regex: "(a+)+$" } }, "conditions.regex"],
    [{ action: "block", conditions: { regex: "(x|xy)*z" } }, "conditions.regex"],
    [{ action: "block", conditions: { regex: "(\\w+)\\1" } }, "conditions.regex"],
    [{ action: "block", conditions: { regex: "(?=a)b" } }, "conditions.regex"],
    [{ action: "block", conditions: { regex: "([a-z]*)*" } }, "conditions.regex"],
    [{ action: "block", conditions: { regex: "[" } }, "conditions.regex"],
    [{ action: "block", conditions: { direction: "sideways" } }, "conditions.direction"],
    [{ action: "block", conditions: { max_input_tokens: 0 } }, "conditions.max_input_tokens"],
    [{ action: "block", conditions: { keywords: [""] } }, "conditions.keywords"],
    // An empty list would match every request (the sidecar reads it as "no condition").
    [{ action: "block", conditions: { pii_types: [] } }, "conditions.pii_types"],
    [{ action: "block", conditions: { keywords: [] } }, "conditions.keywords"],
    [{ action: "block", conditions: { models: "gpt-4o" } }, "conditions.models"],
    [{ action: "deny" }, "action"],
    [{}, "action"],
    [{ action: "block", status: "paused" }, "status"],
    [{ action: "block", priority: 1.5 }, "priority"],
    [{ action: "block", agents: "agt_x" }, "agents"],
    [{ action: "block", extra: true }, "body"],
  ];
  for (const [body, field] of cases) {
    const r = await stack.api.post<ErrA>("/v1/policies", { name: "invalid", ...body });
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error.code, "bad_request");
    t.true(r.body.error.message.includes(field), `${JSON.stringify(body)} → ${r.body.error.message}`);
  }
  t.is((await stack.api.post("/v1/policies", { action: "block" })).status, 400, "name is required");
  const list = await stack.api.get<{ data: Policy[] }>("/v1/policies");
  t.false(list.body.data.some((p) => p.name === "invalid"), "nothing was created");
  t.deepEqual((await policy({ action: "log", conditions: { models: [] } })).conditions, { direction: "inbound", models: [] }, "an empty models list stays allowed");
});

test("costly regexes: a 400 bad_request naming the repetition or program-size limit", async (t) => {
  for (const [regex, limit] of [["[^\\n]{1000}%", "exceeds the limit of 100"], ["[a-z]{10,1000}q", "exceeds the limit of 100"], [".".repeat(300), "the limit is 250"]] as const) {
    const r = await stack.api.post<ErrA>("/v1/policies", { name: "costly", action: "block", conditions: { regex } });
    t.is(r.status, 400, regex);
    t.is(r.body.error.code, "bad_request");
    t.true(r.body.error.message.includes("conditions.regex") && r.body.error.message.includes(limit), r.body.error.message);
  }
  t.is((await stack.api.post("/v1/policies", { name: "bounded", action: "log", conditions: { regex: "sk-[A-Za-z0-9]{48}" } })).status, 201);
});

test("the OpenAPI document asks for at least one pii_type and keyword", async (t) => {
  const doc = (await (await fetch(`${stack.cp.restUrl}/openapi.json`)).json()) as { components: { schemas: Record<string, { properties: Record<string, { minItems?: number }> }> } };
  const conditions = doc.components.schemas.PolicyConditions!.properties;
  t.is(conditions.pii_types?.minItems, 1);
  t.is(conditions.keywords?.minItems, 1);
  t.is(conditions.models?.minItems, undefined);
});

test("GET /v1/policies/{id}: the policy; unknown 404", async (t) => {
  const p = await policy({ conditions: { keywords: ["x"] } });
  const r = await stack.api.get<Policy>(`/v1/policies/${p.id}`);
  t.is(r.status, 200);
  t.deepEqual(r.body, p);
  const missing = await stack.api.get<ErrA>("/v1/policies/pol_01HZZZZZZZZZZZZZZZZZZZZZZZ");
  t.is(missing.status, 404);
  t.is(missing.body.error.code, "not_found");
});

test("GET /v1/policies: {data}, newest first, status and agent_id filters", async (t) => {
  const a1 = await agent();
  const a2 = await agent();
  const wide = await policy();
  const only1 = await policy({ agents: [a1] });
  const only2 = await policy({ agents: [a2], status: "disabled" });
  const all = await stack.api.get<{ data: Policy[] }>("/v1/policies");
  t.is(all.status, 200);
  t.deepEqual(Object.keys(all.body), ["data"]);
  const ids = all.body.data.map((p) => p.id);
  t.true(ids.indexOf(only2.id) < ids.indexOf(only1.id) && ids.indexOf(only1.id) < ids.indexOf(wide.id), "newest first");
  const disabled = await stack.api.get<{ data: Policy[] }>("/v1/policies?status=disabled");
  t.true(disabled.body.data.every((p) => p.status === "disabled"));
  t.true(disabled.body.data.some((p) => p.id === only2.id));
  const active = await stack.api.get<{ data: Policy[] }>("/v1/policies?status=active");
  t.false(active.body.data.some((p) => p.id === only2.id));
  const for1 = (await stack.api.get<{ data: Policy[] }>(`/v1/policies?agent_id=${a1}`)).body.data.map((p) => p.id);
  t.true(for1.includes(wide.id), "tenant-wide policies apply to every agent");
  t.true(for1.includes(only1.id));
  t.false(for1.includes(only2.id));
  const for2active = (await stack.api.get<{ data: Policy[] }>(`/v1/policies?agent_id=${a2}&status=active`)).body.data.map((p) => p.id);
  t.false(for2active.includes(only2.id));
  t.false(for2active.includes(only1.id));
  t.is((await stack.api.get("/v1/policies?status=on")).status, 400);
  t.is((await stack.api.get("/v1/policies?agent_id=agt_01HZZZZZZZZZZZZZZZZZZZZZZZ")).status, 404);
});

test("PATCH /v1/policies/{id}: top-level fields merge, conditions are replaced whole", async (t) => {
  const p = await policy({ description: "d", priority: 5, conditions: { direction: "both", pii_types: ["ssn"], keywords: ["a"] } });
  const r = await stack.api.call<Policy>("PATCH", `/v1/policies/${p.id}`, { priority: 2, status: "disabled" });
  t.is(r.status, 200);
  t.is(r.body.priority, 2);
  t.is(r.body.status, "disabled");
  t.is(r.body.name, p.name);
  t.is(r.body.description, "d");
  t.is(r.body.action, "block");
  t.deepEqual(r.body.conditions, p.conditions);
  t.is(r.body.created_at, p.created_at);
  t.true(Date.parse(r.body.updated_at) >= Date.parse(p.updated_at));
  const c = await stack.api.call<Policy>("PATCH", `/v1/policies/${p.id}`, { conditions: { keywords: ["b"] } });
  t.deepEqual(c.body.conditions, { direction: "inbound", keywords: ["b"] }, "conditions replaced whole (direction back to its default)");
  const d = await stack.api.call<Policy>("PATCH", `/v1/policies/${p.id}`, { description: null, action: "log", name: "renamed" });
  t.is(d.body.description, null);
  t.is(d.body.action, "log");
  t.is(d.body.name, "renamed");
  t.deepEqual((await stack.api.get<Policy>(`/v1/policies/${p.id}`)).body, d.body);
  const same = await stack.api.call<Policy>("PATCH", `/v1/policies/${p.id}`, {});
  t.is(same.status, 200);
  t.deepEqual(same.body, d.body);
  for (const body of [{ conditions: { pii_types: ["dna"] } }, { conditions: { pii_types: [] } }, { conditions: { keywords: [] } }, { conditions: { regex: "(a*)*b" } }, { priority: "high" }, { id: "pol_x" }, { created_at: "2020-01-01T00:00:00Z" }]) {
    const bad = await stack.api.call<ErrA>("PATCH", `/v1/policies/${p.id}`, body);
    t.is(bad.status, 400, JSON.stringify(body));
  }
  t.deepEqual((await stack.api.get<Policy>(`/v1/policies/${p.id}`)).body, d.body, "failed patches change nothing");
  t.is((await stack.api.call("PATCH", "/v1/policies/pol_01HZZZZZZZZZZZZZZZZZZZZZZZ", { priority: 1 })).status, 404);
});

test("a PATCH that changes nothing writes nothing: updated_at kept, no audit entry, nothing sent to the sidecars", async (t) => {
  const a = await agent();
  const p = await policy({ priority: 5, agents: [a], conditions: { direction: "both", keywords: ["x", "y"], injection_score_gte: 0.7 } });
  // Other tests run beside this one: count only this policy's and its agent's changes.
  const version = async () => (await stack.cp.db.query<{ v: number }>("SELECT coalesce(max(version), 0)::int AS v FROM sync_changes WHERE entity_id = ANY($1)", [[p.id, a]])).rows[0]!.v;
  const audits = async () => (await stack.cp.db.query("SELECT 1 FROM audit_log WHERE target_id = $1", [p.id])).rows.length;
  const [v0, n0] = [await version(), await audits()];
  for (const body of [{ priority: 5 }, { description: null }, { name: p.name, action: "block", status: "active" }, { agents: [a, a] }, { conditions: { injection_score_gte: 0.7, keywords: ["x", "y"], direction: "both" } }]) {
    const r = await stack.api.call<Policy>("PATCH", `/v1/policies/${p.id}`, body);
    t.is(r.status, 200);
    t.deepEqual(r.body, p, JSON.stringify(body));
  }
  t.is(await version(), v0);
  t.is(await audits(), n0);
  const changed = await stack.api.call<Policy>("PATCH", `/v1/policies/${p.id}`, { priority: 5, conditions: { direction: "both", keywords: ["x"] } });
  t.deepEqual(changed.body.conditions, { direction: "both", keywords: ["x"] });
  t.is(changed.body.priority, 5);
  const audit = await stack.cp.db.query<{ details: { changed: string[] } }>("SELECT details FROM audit_log WHERE target_id = $1 AND action = 'policy.update'", [p.id]);
  t.deepEqual(audit.rows.map((r) => r.details.changed), [["conditions"]], "the audit names what changed");
  t.true((await version()) > v0);
});

test("DELETE /v1/policies/{id}: 204 without a body, then 404", async (t) => {
  const p = await policy();
  const r = await stack.api.call<unknown>("DELETE", `/v1/policies/${p.id}`);
  t.is(r.status, 204);
  t.is(r.body, undefined);
  t.is((await stack.api.get(`/v1/policies/${p.id}`)).status, 404);
  t.is((await stack.api.call("DELETE", `/v1/policies/${p.id}`)).status, 404);
  t.false((await stack.api.get<{ data: Policy[] }>("/v1/policies")).body.data.some((x) => x.id === p.id));
});

test("scopes: an agent key reads policies but cannot write them; no key is 401", async (t) => {
  const p = await policy();
  const k = await stack.api.post<{ data: { key: string } }>("/api/keys", { name: "policy reader", scope: "agent" });
  const reader = stack.api.withKey(k.body.data.key);
  t.is((await reader.get("/v1/policies")).status, 200);
  t.is((await reader.get(`/v1/policies/${p.id}`)).status, 200);
  t.is((await reader.post("/v1/policies", { name: "x", action: "block" })).status, 403);
  t.is((await reader.call("PATCH", `/v1/policies/${p.id}`, { priority: 1 })).status, 403);
  t.is((await reader.call("DELETE", `/v1/policies/${p.id}`)).status, 403);
  const ingest = await stack.api.post<{ data: { key: string } }>("/api/keys", { name: "ingest", scope: "ingest" });
  t.is((await stack.api.withKey(ingest.body.data.key).get("/v1/policies")).status, 403);
  t.is((await stack.api.withKey(undefined).call("DELETE", `/v1/policies/${p.id}`)).status, 401);
  t.is((await stack.api.get(`/v1/policies/${p.id}`)).status, 200, "still there");
});

test("every policy write is audited and recorded for Sync", async (t) => {
  const before = (await stack.cp.db.query<{ v: number }>("SELECT coalesce(max(version), 0)::int AS v FROM sync_changes")).rows[0]!.v;
  const p = await policy();
  await stack.api.call("PATCH", `/v1/policies/${p.id}`, { priority: 3 });
  await stack.api.call("DELETE", `/v1/policies/${p.id}`);
  const audit = await stack.cp.db.query<{ action: string }>("SELECT action FROM audit_log WHERE target_id = $1 ORDER BY created_at, id", [p.id]);
  t.deepEqual(audit.rows.map((r) => r.action), ["policy.create", "policy.update", "policy.delete"]);
  const changes = await stack.cp.db.query<{ kind: string }>("SELECT kind FROM sync_changes WHERE entity_id = $1 AND version > $2", [p.id, before]);
  t.is(changes.rows.length, 3);
  t.true(changes.rows.every((r) => r.kind === "policy"));
});
