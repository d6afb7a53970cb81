// Strings Postgres cannot store — U+0000 and unpaired UTF-16 surrogates — in a path id, a query value or
// a JSON string at any depth are a 400 in the group's shape naming the field, on every endpoint of both
// groups, and nothing is written (before, Postgres refused them and the answer was a 500, or a lone
// surrogate was stored as U+FFFD).
import test from "ava";
import { startStack, type Stack } from "../harness/stack.js";
import { WEBHOOK_SECRET, deliverSigned, eventBody, usersByIdp } from "./identity-helpers.js";

let stack: Stack;
let agentId: string;
let policyId: string;
let teamId: string;
test.before(async () => {
  stack = await startStack({ IDP_WEBHOOK_SECRET: WEBHOOK_SECRET });
  const agent = await stack.api.post<{ data: { id: string } }>("/api/agents", { name: "nul-target" });
  agentId = agent.body.data.id;
  const policy = await stack.api.post<{ id: string }>("/v1/policies", { name: "nul-policy", action: "log", description: "kept", agents: [agentId] });
  policyId = policy.body.id;
  const team = await stack.api.post<{ data: { id: string } }>("/api/teams", { name: "nul-team" });
  teamId = team.body.data.id;
});
test.after.always(async () => {
  await stack?.stop();
});

interface ErrA {
  error: { code: string; message: string; request_id: string };
}
interface ErrB {
  error: string;
  details?: { path: string; message: string }[];
}

const NUL = "\u0000";
const LONE = "\ud800";
const LONE_LOW = "\udc00";

/** A digest of every row a REST write could touch (key rows by id only: authentication stamps last_used_at). */
async function storedState(): Promise<Record<string, string>> {
  const tables: Record<string, string> = {
    agents: "t::text", agent_deployments: "t::text", policies: "t::text", policy_agents: "t::text", teams: "t::text",
    team_members: "t::text", users: "t::text", api_keys: "t.id", audit_log: "t::text", sync_changes: "t::text", webhook_deliveries: "t::text",
  };
  const out: Record<string, string> = {};
  for (const [table, expr] of Object.entries(tables)) {
    const r = await stack.cp.db.query<{ h: string }>(`SELECT md5(coalesce(string_agg(${expr}, ',' ORDER BY ${expr}), '')) AS h FROM ${table} t`);
    out[table] = r.rows[0]!.h;
  }
  return out;
}

test.serial("group A: ids, query values and body strings with NUL or a lone surrogate are 400 bad_request naming the field", async (t) => {
  const cases: [string, string, unknown, string][] = [
    ["GET", "/v1/agents/%00", undefined, "path.agent_id"],
    ["PATCH", "/v1/agents/%00", { status: "paused" }, "path.agent_id"],
    ["GET", "/v1/policies/%00", undefined, "path.policy_id"],
    ["PATCH", "/v1/policies/%00", { name: "x" }, "path.policy_id"],
    ["DELETE", "/v1/policies/%00", undefined, "path.policy_id"],
    ["GET", "/v1/policies?agent_id=%00", undefined, "query.agent_id"],
    ["GET", "/v1/traces/%00", undefined, "path.trace_id"],
    ["GET", "/v1/traces?agent_id=a%00b", undefined, "query.agent_id"],
    ["POST", "/v1/policies", { name: "nul-agents", action: "log", agents: [NUL] }, "body.agents.0"],
    ["POST", "/v1/policies", { name: `nul-${NUL}`, action: "log", agents: [agentId] }, "body.name"],
    ["POST", "/v1/policies", { name: "nul-kw", action: "log", conditions: { keywords: ["ok", `a${NUL}b`] } }, "body.conditions.keywords.1"],
    ["POST", "/v1/policies", { name: `nul-${LONE}`, action: "log", agents: [agentId] }, "body.name"],
    ["POST", "/v1/policies", { name: "nul-models", action: "log", conditions: { models: [`gpt${LONE_LOW}`] } }, "body.conditions.models.0"],
    ["PATCH", `/v1/policies/${policyId}`, { conditions: { keywords: [LONE] } }, "body.conditions.keywords.0"],
    ["PATCH", `/v1/policies/${policyId}`, { description: LONE }, "body.description"],
    ["PATCH", `/v1/policies/${policyId}`, { description: `x${NUL}` }, "body.description"],
  ];
  const before = await storedState();
  for (const [method, path, body, field] of cases) {
    const r = await stack.api.call<ErrA>(method, path, body);
    const what = `${method} ${path} ${JSON.stringify(body)}`;
    t.is(r.status, 400, what);
    t.is(r.body.error.code, "bad_request", what);
    t.true(r.body.error.message.includes(`${field}: must not contain NUL`), `${what} → ${r.body.error.message}`);
  }
  t.deepEqual(await storedState(), before, "nothing was written");
  const kept = await stack.api.get<{ description: string; conditions: unknown }>(`/v1/policies/${policyId}`);
  t.is(kept.body.description, "kept", "a lone surrogate is refused, not stored as U+FFFD");
});

test.serial("group B: ids, query values and body strings with NUL or a lone surrogate are 400 with details[].path naming the field", async (t) => {
  const cases: [string, string, unknown, string][] = [
    ["GET", "/api/agents/%00", undefined, "path.id"],
    ["GET", "/api/agents/a%00b/tools", undefined, "path.id"],
    ["GET", "/api/agents/%00/history", undefined, "path.id"],
    ["PATCH", "/api/agents/%00", { description: "x" }, "path.id"],
    ["GET", "/api/agents?environment=%00", undefined, "query.environment"],
    ["GET", "/api/teams/%00/members", undefined, "path.id"],
    ["PUT", "/api/teams/%00/scopes", { scopes: [] }, "path.id"],
    ["POST", "/api/teams/%00/members", { userId: "x" }, "path.id"],
    ["DELETE", "/api/teams/%00/members", { userId: "x" }, "path.id"],
    ["DELETE", "/api/keys/%00", undefined, "path.id"],
    ["GET", "/api/audit?action=%00", undefined, "query.action"],
    ["GET", "/api/audit?actorUserId=%00", undefined, "query.actorUserId"],
    ["GET", "/api/traces/%00", undefined, "path.id"],
    ["GET", "/api/traces?agentId=%00", undefined, "query.agentId"],
    ["POST", "/api/agents", { name: `nul-${NUL}` }, "body.name"],
    ["POST", "/api/agents", { name: "nul-desc", description: `d${NUL}` }, "body.description"],
    ["POST", "/api/agents", { name: "nul-env", environment: NUL }, "body.environment"],
    ["POST", "/api/agents", { name: "nul-yaml", configYaml: `x: a${NUL}b\n` }, "body.configYaml"],
    ["POST", "/api/agents", { name: `lone-${LONE}` }, "body.name"],
    ["PATCH", `/api/agents/${agentId}`, { configYaml: `note: ${LONE_LOW}\n` }, "body.configYaml"],
    ["POST", "/api/teams", { name: `nul-${NUL}` }, "body.name"],
    ["POST", "/api/keys", { name: `nul-${NUL}`, scope: "api" }, "body.name"],
    ["POST", "/api/keys", { name: "nul-user", scope: "api", userId: `a${NUL}` }, "body.userId"],
    ["POST", `/api/teams/${teamId}/members`, { userId: `a${NUL}` }, "body.userId"],
    ["POST", `/api/teams/${teamId}/members`, { email: `a${NUL}@example.com` }, "body.email"],
    ["DELETE", `/api/teams/${teamId}/members`, { email: `a${LONE}@example.com` }, "body.email"],
  ];
  const before = await storedState();
  for (const [method, path, body, field] of cases) {
    const r = await stack.api.call<ErrB>(method, path, body);
    const what = `${method} ${path} ${JSON.stringify(body)}`;
    t.is(r.status, 400, what);
    t.is(typeof r.body.error, "string", what);
    t.deepEqual(r.body.details?.map((d) => d.path), [field], what);
  }
  t.deepEqual(await storedState(), before, "nothing was written");
});

test.serial("unknown query parameters stay ignored, whatever they hold", async (t) => {
  t.is((await stack.api.get("/api/agents?unknownParam=%00")).status, 200);
  t.is((await stack.api.get("/v1/agents?other=%00")).status, 200);
});

test.serial("the identity webhook refuses a signed event holding NUL or a lone surrogate with 400, and writes nothing", async (t) => {
  const before = await storedState();
  const events = [
    { type: "user.created", userId: "idp_nul", email: "nul@example.com", displayName: `Nul${NUL}` },
    { type: "user.created", userId: `idp_lone${LONE}`, email: "lone@example.com" },
  ];
  for (const e of events) {
    const r = await deliverSigned(stack, eventBody(e));
    t.is(r.status, 400, JSON.stringify(e));
    t.regex((r.body as ErrB).error, /must not contain NUL/);
  }
  t.deepEqual(await usersByIdp(stack, "idp_nul"), []);
  t.deepEqual(await storedState(), before, "nothing was written");
});
