// The walking skeleton's REST endpoints against a real control plane (Postgres + ClickHouse engine).
import test from "ava";
import { startStack, type Stack } from "../harness/stack.js";

let stack: Stack;
test.before(async () => {
  stack = await startStack();
});
test.after.always(async () => {
  await stack?.stop();
});

test("health, readiness and the OpenAPI document need no key", async (t) => {
  const base = stack.cp.restUrl;
  t.is((await fetch(`${base}/healthz`)).status, 200);
  const ready = await fetch(`${base}/readyz`);
  t.is(ready.status, 200);
  t.deepEqual(await ready.json(), { status: "ready", postgres: true, clickhouse: true });
  const doc = (await (await fetch(`${base}/openapi.json`)).json()) as { openapi: string; paths: Record<string, unknown> };
  t.is(doc.openapi, "3.1.0");
  for (const p of ["/v1/agents", "/v1/traces", "/v1/policies", "/api/agents", "/api/keys"]) t.truthy(doc.paths[p], p);
});

test("agents: create in group B, list in group A with cursor pagination", async (t) => {
  const created = await stack.api.post<{ data: Record<string, unknown> }>("/api/agents", {
    name: "support-bot",
    modelProvider: "openai",
    modelName: "gpt-4o-mini",
    environment: "production",
    configYaml: "rate_limit: 60\npii_detection: true\n",
  });
  t.is(created.status, 201);
  t.deepEqual(Object.keys(created.body.data).sort(), ["createdAt", "environment", "id", "modelName", "modelProvider", "name", "updatedAt"]);
  t.regex(String(created.body.data.id), /^agt_[0-9A-Z]{26}$/);
  const dup = await stack.api.post<{ error: string }>("/api/agents", { name: "support-bot" });
  t.is(dup.status, 409);
  t.regex(dup.body.error, /already exists/);

  for (let i = 0; i < 3; i++) t.is((await stack.api.post("/api/agents", { name: `extra-${i}` })).status, 201);
  const seen: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await stack.api.get<{ data: { id: string; name: string; total_requests: number }[]; has_more: boolean; next_cursor?: string }>(
      `/v1/agents?limit=2${cursor ? `&cursor=${cursor}` : ""}`,
    );
    t.is(page.status, 200);
    seen.push(...page.body.data.map((a) => a.name));
    t.is(page.body.has_more, page.body.next_cursor !== undefined);
    cursor = page.body.next_cursor;
  } while (cursor);
  t.deepEqual(seen, ["extra-2", "extra-1", "extra-0", "support-bot"]);
});

test("bad input gets the group's error shape and changes nothing", async (t) => {
  const a = await stack.api.get<{ error: { code: string; request_id: string } }>("/v1/agents?limit=0");
  t.is(a.status, 400);
  t.is(a.body.error.code, "bad_request");
  t.is(a.headers.get("x-request-id"), a.body.error.request_id);
  t.is((await stack.api.get("/v1/agents?limit=201")).status, 400);
  t.is((await stack.api.get("/v1/agents?cursor=garbage")).status, 400);
  const b = await stack.api.post<{ error: string; details: { path: string }[] }>("/api/agents", { name: "x", unknownField: 1 });
  t.is(b.status, 400);
  t.true(Array.isArray(b.body.details));
  const yaml = await stack.api.post<{ error: string }>("/api/agents", { name: "bad-yaml", configYaml: "rate_limit: [1\n" });
  t.is(yaml.status, 400);
  t.regex(yaml.body.error, /line/);
  const list = await stack.api.get<{ data: { name: string }[] }>("/v1/agents?limit=200");
  t.false(list.body.data.some((x) => x.name === "bad-yaml" || x.name === "x"));
  const notJson = await stack.api.call<{ error: string }>("POST", "/api/agents", "{nope", { "content-type": "application/json" });
  t.is(notJson.status, 400);
  const huge = await stack.api.call("POST", "/api/agents", JSON.stringify({ name: "h", description: "x".repeat(1024 * 1024 + 10) }));
  t.is(huge.status, 413);
});

test("authentication: no key 401, invalid key 401, agent-scoped key cannot write (403)", async (t) => {
  const anon = stack.api.withKey(undefined);
  const r = await anon.get<{ error: { code: string } }>("/v1/agents");
  t.is(r.status, 401);
  t.is(r.body.error.code, "unauthorized");
  t.is((await stack.api.withKey("svc_api_" + "a".repeat(40)).get("/v1/agents")).status, 401);
  const k = await stack.api.post<{ data: { key: string; prefix: string; scope: string } }>("/api/keys", { name: "reader", scope: "agent" });
  t.is(k.status, 201);
  t.true(k.body.data.key.startsWith("svc_agent_"));
  t.is(k.body.data.prefix, k.body.data.key.slice(0, 12));
  const reader = stack.api.withKey(k.body.data.key);
  t.is((await reader.get("/v1/agents")).status, 200);
  t.is((await reader.post("/api/agents", { name: "nope" })).status, 403);
});

test("policies: create and list; unknown agents 404; unsafe regex 400", async (t) => {
  const p = await stack.api.post<{ id: string; conditions: { pii_types: string[] } }>("/v1/policies", {
    name: "Block SSN",
    action: "block",
    priority: 1,
    conditions: { direction: "inbound", pii_types: ["ssn", "credit_card"] },
  });
  t.is(p.status, 201);
  t.regex(p.body.id, /^pol_/);
  const list = await stack.api.get<{ data: { id: string; status: string; agents: string[] }[] }>("/v1/policies");
  t.true(list.body.data.some((x) => x.id === p.body.id && x.status === "active" && x.agents.length === 0));
  t.is((await stack.api.post("/v1/policies", { name: "x", action: "block", agents: ["agt_01HZZZZZZZZZZZZZZZZZZZZZZZ"] })).status, 404);
  t.is((await stack.api.post("/v1/policies", { name: "x", action: "block", conditions: { regex: "(a+)+$" } })).status, 400);
  t.is((await stack.api.post("/v1/policies", { name: "x", action: "block", conditions: { pii_types: ["dna"] } })).status, 400);
  t.is((await stack.api.post("/v1/policies", { name: "x", action: "block", conditions: { injection_score_gte: 1.5 } })).status, 400);
});

test("traces list is empty for a new tenant and validates its filters", async (t) => {
  const r = await stack.api.get<{ data: unknown[]; has_more: boolean }>("/v1/traces");
  t.is(r.status, 200);
  t.deepEqual(r.body, { data: [], has_more: false });
  t.is((await stack.api.get("/v1/traces?since=yesterday")).status, 400);
  t.is((await stack.api.get("/v1/traces?status=weird")).status, 400);
  t.is((await stack.api.get("/v1/traces?has_pii=maybe")).status, 400);
});
