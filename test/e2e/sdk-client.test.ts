// The SDK against a running control plane: typed calls of both groups, cursor and offset iterators,
// typed errors with status/code/message/request id, 429 with Retry-After, AbortSignal, and the
// webhook helper signing a delivery the control plane accepts.
import test from "ava";
import { startStack, type Stack } from "../harness/stack.js";
import { AgentGov, AgentGovError, signWebhook, type Schemas } from "../../sdk/src/index.js";

const WEBHOOK_SECRET = "whsec_sdk_e2e_secret";
let stack: Stack;
let ag: AgentGov;
const created: string[] = [];

test.before(async () => {
  stack = await startStack({ IDP_WEBHOOK_SECRET: WEBHOOK_SECRET, API_RATE_LIMIT_PER_MINUTE: "300" });
  ag = new AgentGov({ baseUrl: stack.cp.restUrl, apiKey: stack.adminKey });
  for (let i = 0; i < 7; i++) {
    const r = await ag.post("/api/agents", { body: { name: `sdk-agent-${i}`, modelProvider: "openai", modelName: "gpt-4o-mini", environment: i % 2 ? "prod" : "dev" } });
    created.push(r.data.id);
  }
});
test.after.always(async () => {
  await stack?.stop();
});

test("typed calls of both groups return the parsed bodies", async (t) => {
  const one = await ag.get("/v1/agents/{agent_id}", { params: { path: { agent_id: created[0]! } } });
  t.is(one.id, created[0]!);
  t.is(one.provider, "openai");
  const b = await ag.get("/api/agents/{id}", { params: { path: { id: created[1]! } } });
  t.is(b.data.modelName, "gpt-4o-mini");
  t.is(typeof b.data.configYaml, "string");
  const policy = await ag.post("/v1/policies", { body: { name: "sdk block ssn", action: "block", priority: 5, conditions: { direction: "inbound", pii_types: ["ssn"] } } });
  t.regex(policy.id, /^pol_/);
  const listed = await ag.get("/v1/policies");
  t.true(listed.data.some((p) => p.id === policy.id));
  await ag.delete("/v1/policies/{policy_id}", { params: { path: { policy_id: policy.id } } });
  await t.throwsAsync(ag.get("/v1/policies/{policy_id}", { params: { path: { policy_id: policy.id } } }), { instanceOf: AgentGovError, message: /./ });
});

test("cursor pagination (group A) walks every page, newest first", async (t) => {
  const ids: string[] = [];
  const pages: unknown[] = [];
  for await (const page of ag.pages("/v1/agents", { params: { query: { limit: 2 } } })) pages.push(page.body);
  for await (const a of ag.paginate("/v1/agents", { params: { query: { limit: 2 } } })) ids.push(a.id);
  t.is(pages.length, 4);
  t.deepEqual(ids, [...created].reverse());
  const filtered: Schemas["AgentSummary"][] = [];
  for await (const a of ag.paginate("/v1/agents", { params: { query: { limit: 1, status: "active" } } })) filtered.push(a);
  t.is(filtered.length, 7);
});

test("offset pagination (group B) walks every page with filters", async (t) => {
  const names: string[] = [];
  for await (const a of ag.paginate("/api/agents", { params: { query: { limit: 3 } } })) names.push(a.name);
  t.deepEqual(names, created.map((_, i) => `sdk-agent-${i}`).reverse());
  const prod: string[] = [];
  for await (const a of ag.paginate("/api/agents", { params: { query: { limit: 2, environment: "prod" } } })) prod.push(a.id);
  t.deepEqual(prod, [created[5], created[3], created[1]]);
  const fromOffset: string[] = [];
  for await (const a of ag.paginate("/api/agents", { params: { query: { limit: 2, offset: 5 } } })) fromOffset.push(a.id);
  t.deepEqual(fromOffset, [created[1], created[0]]);
});

test("typed errors: status, code, message and the request id, for both groups", async (t) => {
  const a = await t.throwsAsync(ag.get("/v1/agents/{agent_id}", { params: { path: { agent_id: "agt_01HZZZZZZZZZZZZZZZZZZZZZZZ" } }, headers: { "x-request-id": "sdk-req-404" } }), { instanceOf: AgentGovError });
  t.is(a?.status, 404);
  t.is(a?.code, "not_found");
  t.is(a?.requestId, "sdk-req-404");
  t.truthy(a?.message);

  const b = await t.throwsAsync(ag.post("/api/agents", { body: { name: "" } }), { instanceOf: AgentGovError });
  t.is(b?.status, 400);
  t.is(b?.code, "bad_request");
  t.regex(b?.requestId ?? "", /./);
  t.true((b?.details.length ?? 0) > 0);
  t.true(b?.details.some((d) => d.path.startsWith("body.name")));

  const dup = await t.throwsAsync(ag.post("/api/agents", { body: { name: "sdk-agent-0" } }), { instanceOf: AgentGovError });
  t.is(dup?.status, 409);
  t.is(dup?.code, "conflict");

  const bad = new AgentGov({ baseUrl: stack.cp.restUrl, apiKey: "svc_api_notavalidkeynotavalidkeynotavalid" });
  const u = await t.throwsAsync(bad.get("/v1/agents"), { instanceOf: AgentGovError });
  t.is(u?.status, 401);
  t.is(u?.code, "unauthorized");
});

test("a 429 carries Retry-After; a client that will not wait that long surfaces it at once", async (t) => {
  const key = await ag.post("/api/keys", { body: { name: "sdk limited", scope: "api" } });
  const limited = new AgentGov({ baseUrl: stack.cp.restUrl, apiKey: key.data.key, retry: { maxRetryAfterMs: 500 } });
  let error: unknown;
  for (let i = 0; i <= 300 && !error; i++) await limited.get("/v1/policies").catch((e: unknown) => (error = e));
  t.true(error instanceof AgentGovError);
  const e = error as AgentGovError;
  t.is(e.status, 429);
  t.is(e.code, "rate_limit_exceeded");
  t.true((e.retryAfterSeconds ?? 0) >= 1);
  t.regex(e.message, /retry in \d+ s/);
});

test("AbortSignal cancels a call", async (t) => {
  await t.throwsAsync(ag.get("/v1/agents", { signal: AbortSignal.abort() }), { any: true, name: "AbortError" });
});

test("the raw client returns {data, error, response} instead of throwing", async (t) => {
  const r = await ag.raw.GET("/api/agents/{id}", { params: { path: { id: "agt_01HZZZZZZZZZZZZZZZZZZZZZZZ" } } });
  t.is(r.response.status, 404);
  t.is(r.data, undefined);
  t.is(typeof r.error?.error, "string");
});

test("webhook helper: a signed delivery is accepted by the control plane, a tampered one is refused", async (t) => {
  const event = { type: "user.created", createdAt: new Date().toISOString(), data: { userId: "idp_user_sdk_1", email: "sdk-user@example.com", displayName: "SDK User", orgId: "org_default" } };
  const payload = JSON.stringify(event);
  const header = await signWebhook({ payload, secret: WEBHOOK_SECRET });
  const ok = await fetch(`${stack.cp.restUrl}/api/auth/webhook`, { method: "POST", headers: { "content-type": "application/json", "X-Idp-Signature": header }, body: payload });
  t.is(ok.status, 200);
  t.like(await ok.json(), { received: true });
  const users = await ag.get("/api/users");
  t.true(users.data.some((u) => u.email === "sdk-user@example.com"));
  const tampered = await fetch(`${stack.cp.restUrl}/api/auth/webhook`, { method: "POST", headers: { "content-type": "application/json", "X-Idp-Signature": header }, body: payload.replace("SDK User", "Evil User") });
  t.is(tampered.status, 403);
  t.deepEqual(await tampered.json(), { error: "Invalid webhook signature" });
});
