// Request rules shared by every REST route: a body needs Content-Type application/json (missing is
// refused like wrong, the signed webhook too); paths are case-sensitive, so case variants are unknown
// paths (404) rather than routes reached around the key check; the webhook is public with the trailing
// slash the router accepts; a method a resource does not support is 405 with Allow.
// Raw fetch throughout: these requests are outside the OpenAPI document the harness client checks against.
import test from "ava";
import { startStack, type Stack } from "../harness/stack.js";
import { WEBHOOK, WEBHOOK_SECRET, eventBody, nowSec, sign, usersByIdp } from "./identity-helpers.js";

let stack: Stack;
let agentId: string;
let teamId: string;
test.before(async () => {
  stack = await startStack({ IDP_WEBHOOK_SECRET: WEBHOOK_SECRET });
  agentId = (await stack.api.post<{ data: { id: string } }>("/api/agents", { name: "rules-target" })).body.data.id;
  teamId = (await stack.api.post<{ data: { id: string } }>("/api/teams", { name: "rules-team" })).body.data.id;
});
test.after.always(async () => {
  await stack?.stop();
});

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

/** A request with the admin key. A body given as bytes carries no Content-Type unless one is set (fetch adds one to strings). */
async function send(method: string, path: string, init: { body?: string; type?: string; key?: string | null; headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...init.headers };
  const key = init.key === undefined ? stack.adminKey : init.key;
  if (key) headers.authorization = `Bearer ${key}`;
  if (init.type !== undefined) headers["content-type"] = init.type;
  const res = await fetch(`${stack.cp.restUrl}${path}`, { method, headers, body: init.body === undefined ? undefined : Buffer.from(init.body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as unknown) : undefined };
}

const errorCodeA = (a: Answer) => (a.body as { error: { code: string; message: string } }).error;
const errorB = (a: Answer) => a.body as { error: string; details?: { path: string; message: string }[] };

test("a body without Content-Type is 400 bad_request like a wrong type, in both groups, and writes nothing", async (t) => {
  const writes: [string, string, unknown][] = [
    ["POST", "/v1/policies", { name: "no-type", action: "log" }],
    ["PATCH", `/v1/agents/${agentId}`, { status: "paused" }],
    ["POST", "/api/agents", { name: "no-type" }],
    ["PATCH", `/api/agents/${agentId}`, { description: "no-type" }],
    ["PUT", `/api/teams/${teamId}/scopes`, { scopes: ["agents:read"] }],
    ["POST", "/api/keys", { name: "no-type", scope: "api" }],
  ];
  for (const [method, path, body] of writes) {
    for (const type of [undefined, "text/plain", "application/x-www-form-urlencoded"]) {
      const r = await send(method, path, { body: JSON.stringify(body), ...(type ? { type } : {}) });
      const what = `${method} ${path} Content-Type ${type ?? "(none)"}`;
      t.is(r.status, 400, what);
      if (path.startsWith("/v1/")) {
        t.is(errorCodeA(r).code, "bad_request", what);
        t.regex(errorCodeA(r).message, /Content-Type/, what);
      } else t.regex(errorB(r).error, /Content-Type/, what);
    }
  }
  const policies = await stack.api.get<{ data: { name: string }[] }>("/v1/policies");
  t.false(policies.body.data.some((p) => p.name === "no-type"));
  const agent = await stack.api.get<{ data: { status: string; description: string | null } }>(`/api/agents/${agentId}`);
  t.like(agent.body.data, { status: "active", description: null });
  const agents = await stack.api.get<{ data: { name: string }[] }>("/api/agents?limit=500");
  t.false(agents.body.data.some((a) => a.name === "no-type"));
  const keys = await stack.api.get<{ data: { name: string }[] }>("/api/keys?limit=500");
  t.false(keys.body.data.some((k) => k.name === "no-type"));
  const team = await stack.api.get<{ data: { id: string; scopes: string[] }[] }>("/api/teams?limit=500");
  t.deepEqual(team.body.data.find((x) => x.id === teamId)?.scopes, []);
  // The same requests with the JSON type (and a +json type) go through.
  t.is((await send("PATCH", `/api/agents/${agentId}`, { body: JSON.stringify({ description: "typed" }), type: "application/json; charset=utf-8" })).status, 200);
  t.is((await send("PATCH", `/v1/agents/${agentId}`, { body: JSON.stringify({ status: "active" }), type: "application/merge-patch+json" })).status, 200);
});

test("a body in a content coding is 400 in both groups and writes nothing; identity is plain", async (t) => {
  const { gzipSync } = await import("node:zlib");
  const body = JSON.stringify({ name: "encoded", action: "log" });
  for (const [encoding, bytes] of [["gzip", gzipSync(body)], ["br", Buffer.from(body)], ["GZIP, identity", gzipSync(body)]] as const) {
    for (const path of ["/v1/policies", "/api/agents"]) {
      const res = await fetch(`${stack.cp.restUrl}${path}`, { method: "POST", headers: { authorization: `Bearer ${stack.adminKey}`, "content-type": "application/json", "content-encoding": encoding }, body: bytes });
      const answer = (await res.json()) as { error: string | { code: string; message: string } };
      t.is(res.status, 400, `${path} ${encoding}`);
      t.regex(typeof answer.error === "string" ? answer.error : answer.error.message, /Content-Encoding .* is not supported/);
    }
  }
  t.false((await stack.api.get<{ data: { name: string }[] }>("/v1/policies")).body.data.some((p) => p.name === "encoded"));
  t.false((await stack.api.get<{ data: { name: string }[] }>("/api/agents?limit=500")).body.data.some((a) => a.name === "encoded"));
  const plain = await send("POST", "/v1/policies", { body, type: "application/json", headers: { "content-encoding": "identity" } });
  t.is(plain.status, 201);
  await stack.api.call("DELETE", `/v1/policies/${(plain.body as { id: string }).id}`);
});

test("a 401 names the Bearer scheme; a key sent and refused is an invalid token", async (t) => {
  for (const path of ["/v1/agents", "/api/agents"]) {
    t.is((await send("GET", path, { key: null })).headers.get("www-authenticate"), 'Bearer realm="agentgov"', path);
    const refused = await send("GET", path, { key: "svc_api_not_a_key" });
    t.is(refused.status, 401);
    t.is(refused.headers.get("www-authenticate"), 'Bearer realm="agentgov", error="invalid_token"', path);
  }
  t.is((await send("GET", "/api/agents")).headers.get("www-authenticate"), null, "not on other answers");
});

test("an error names at most a bounded part of what was wrong: 50,000 unknown keys are not echoed back", async (t) => {
  const body: Record<string, unknown> = { name: "many-keys", action: "log" };
  for (let i = 0; i < 50_000; i++) body[`k${i}`] = 1; // ~540 KB, under the 1 MiB limit
  const r = await send("POST", "/v1/policies", { body: JSON.stringify(body), type: "application/json" });
  t.is(r.status, 400);
  t.true(JSON.stringify(r.body).length < 4096, `${JSON.stringify(r.body).length} bytes`);
  t.regex(errorCodeA(r).message, /"k0"/);
  const many = await send("POST", "/api/agents", { body: JSON.stringify({ name: 1, description: 2, modelProvider: 3, modelName: 4, environment: 5, configYaml: 6, status: 7 }), type: "application/json" });
  t.is(many.status, 400);
  t.true((errorB(many).details ?? []).length >= 2, "each problem is still named in details");
});

function signedHeader(body: string): string {
  const ts = nowSec();
  return `t=${ts},v1=${sign(WEBHOOK_SECRET, ts, body)}`;
}

test("the webhook: after a valid signature, a missing or non-JSON Content-Type is 400; a bad signature is still 403 first", async (t) => {
  const body = eventBody({ type: "user.created", userId: "idp_untyped", email: "untyped@example.com" });
  for (const type of [undefined, "text/plain", "application/x-www-form-urlencoded"]) {
    const r = await send("POST", WEBHOOK, { body, key: null, headers: { "x-idp-signature": signedHeader(body) }, ...(type ? { type } : {}) });
    t.is(r.status, 400, type ?? "(none)");
    t.regex(errorB(r).error, /Content-Type/);
  }
  const forged = await send("POST", WEBHOOK, { body, key: null, type: "text/plain", headers: { "x-idp-signature": `t=${nowSec()},v1=${"0".repeat(64)}` } });
  t.is(forged.status, 403);
  t.deepEqual(forged.body, { error: "Invalid webhook signature" });
  t.deepEqual(await usersByIdp(stack, "idp_untyped"), [], "nothing was provisioned");
  const ok = await send("POST", WEBHOOK, { body, key: null, type: "application/json", headers: { "x-idp-signature": signedHeader(body) } });
  t.is(ok.status, 200);
  t.is((await usersByIdp(stack, "idp_untyped")).length, 1);
});

test("the webhook with a trailing slash is served without an API key, as the router serves it", async (t) => {
  const body = eventBody({ type: "user.created", userId: "idp_slash", email: "slash@example.com" });
  const r = await send("POST", `${WEBHOOK}/`, { body, key: null, type: "application/json", headers: { "x-idp-signature": signedHeader(body) } });
  t.is(r.status, 200, JSON.stringify(r.body));
  t.deepEqual(r.body, { received: true });
  t.is((await usersByIdp(stack, "idp_slash")).length, 1);
  const unsigned = await send("POST", `${WEBHOOK}/`, { body, key: null, type: "application/json" });
  t.is(unsigned.status, 403, "signature checked, not an API key");
});

test("paths are case-sensitive: case variants are 404 with a valid key, never 401 or a served route", async (t) => {
  for (const path of ["/v1/AGENTS", `/v1/Agents/${agentId}`, "/v1/Policies"]) {
    const r = await send("GET", path);
    t.is(r.status, 404, path);
    t.is(errorCodeA(r).code, "not_found", path);
  }
  for (const path of ["/V1/agents", "/API/agents", "/Api/agents", "/api/AGENTS", `/API/agents/${agentId}`]) {
    const r = await send("GET", path);
    t.is(r.status, 404, path);
    t.is(typeof errorB(r).error, "string", path);
  }
  const webhookBody = eventBody({ type: "user.created", userId: "idp_case", email: "case@example.com" });
  const upper = await send("POST", "/API/auth/webhook", { body: webhookBody, key: null, type: "application/json", headers: { "x-idp-signature": signedHeader(webhookBody) } });
  t.is(upper.status, 404);
  t.deepEqual(await usersByIdp(stack, "idp_case"), []);
  t.is((await send("GET", "/v1/agents")).status, 200, "the exact path is served");
  t.is((await send("GET", "/v1/agents/")).status, 200, "one trailing slash is accepted, as before");
});

test("a method the resource does not support is 405 with Allow, in the group's shape", async (t) => {
  const groupA: [string, string, string[]][] = [
    ["PUT", `/v1/agents/${agentId}`, ["GET", "PATCH"]],
    ["DELETE", `/v1/agents/${agentId}`, ["GET", "PATCH"]],
    ["POST", "/v1/agents", ["GET"]],
    ["POST", "/v1/traces", ["GET"]],
    ["PUT", "/v1/policies", ["GET", "POST"]],
  ];
  for (const [method, path, allowed] of groupA) {
    const r = await send(method, path, method === "GET" || method === "DELETE" ? {} : { body: "{}", type: "application/json" });
    t.is(r.status, 405, `${method} ${path}`);
    const allow = (r.headers.get("allow") ?? "").split(/,\s*/);
    for (const m of allowed) t.true(allow.includes(m), `${method} ${path} Allow: ${allow.join(", ")}`);
    t.false(allow.includes(method));
    t.like(errorCodeA(r), { code: "method_not_allowed", message: `method ${method} not allowed on ${path}` });
    t.is(typeof (r.body as { error: { request_id: string } }).error.request_id, "string");
  }
  const b = await send("PUT", `/api/agents/${agentId}`, { body: "{}", type: "application/json" });
  t.is(b.status, 405);
  t.true((b.headers.get("allow") ?? "").split(/,\s*/).includes("PATCH"));
  t.deepEqual(b.body, { error: `method PUT not allowed on /api/agents/${agentId}` });
  const webhook = await send("GET", WEBHOOK, { key: null });
  t.is(webhook.status, 405);
  t.is(webhook.headers.get("allow"), "POST");
  t.is((await send("GET", "/v1/nothing-here")).status, 404, "an unknown path is still 404");
  // A method no route knows at all: 501, in the group's shape too.
  const unknownA = await send("PROPFIND", `/v1/agents/${agentId}`);
  t.is(unknownA.status, 501);
  t.like(errorCodeA(unknownA), { code: "not_implemented", message: "method PROPFIND is not supported" });
  const unknownB = await send("PROPFIND", "/api/agents");
  t.is(unknownB.status, 501);
  t.deepEqual(unknownB.body, { error: "method PROPFIND is not supported" });
  t.is((await send("PUT", `/v1/agents/${agentId}`, { key: null, body: "{}", type: "application/json" })).status, 401, "the key is checked first");
  t.is((await send("GET", `/v1/agents/${agentId}`)).status, 200, "the resource is unchanged");
});
