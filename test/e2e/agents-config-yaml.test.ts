// configYaml validation (issue 3): malformed YAML or wrong types for the known keys are a 400 naming the
// line or key, on create and on update, and change nothing; unknown keys are kept and returned untouched,
// except that a write with a key that looks like a misspelling of a known key is a 400 too (agents stored
// before that rule still load and sync).
import test from "ava";
import { buildSnapshot } from "../../control-plane/src/sync/snapshot.js";
import { startStack, type Stack } from "../harness/stack.js";

let stack: Stack;
test.before(async () => {
  stack = await startStack();
});
test.after.always(async () => {
  await stack?.stop();
});

interface ErrB {
  error: string;
  details?: { path: string; message: string }[];
}
let n = 0;
const name = () => `yaml-${++n}-${Date.now()}`;

async function rejects(t: import("ava").ExecutionContext, configYaml: string, expect: { key?: string; line?: number }) {
  const agentName = name();
  const r = await stack.api.post<ErrB>("/api/agents", { name: agentName, configYaml });
  t.is(r.status, 400, `create: ${JSON.stringify(configYaml)}`);
  const text = `${r.body.error} ${(r.body.details ?? []).map((d) => `${d.path} ${d.message}`).join(" ")}`;
  if (expect.key) {
    t.true((r.body.details ?? []).some((d) => d.path === `body.configYaml.${expect.key}`), `details name body.configYaml.${expect.key}: ${text}`);
    t.true(r.body.error.includes(expect.key), `message names ${expect.key}: ${r.body.error}`);
  }
  if (expect.line !== undefined) t.regex(r.body.error, new RegExp(`line ${expect.line}\\b`), `message names line ${expect.line}`);
  const list = await stack.api.get<{ data: { name: string }[] }>("/api/agents?limit=500");
  t.false(list.body.data.some((a) => a.name === agentName), "nothing was created");
  return r.body;
}

test("malformed YAML is a 400 naming the line", async (t) => {
  await rejects(t, "rate_limit: [1\n", { line: 2 });
  await rejects(t, "rate_limit: 5\nrate_limit: 6\n", { line: 2 });
  await rejects(t, "a: 1\nb:\n  - x\n - y\n", { line: 4 });
  await rejects(t, "a: b: c\n", { line: 1 });
  await rejects(t, "x: 1\n---\ny: 2\n", { line: 2 });
  await rejects(t, 'key: "unterminated\n', {});
  await rejects(t, "a: *missing\n", {});
});

test("wrong types for the known keys are a 400 naming the key and its line", async (t) => {
  const cases: [string, string, number][] = [
    ["owner: me\nrate_limit: abc\n", "rate_limit", 2],
    ["rate_limit: 0\n", "rate_limit", 1],
    ["rate_limit: -5\n", "rate_limit", 1],
    ["rate_limit: 1.5\n", "rate_limit", 1],
    ['rate_limit: "60"\n', "rate_limit", 1],
    ["rate_limit: 99999999999\n", "rate_limit", 1],
    ["a: 1\nb: 2\nbudget_limit_daily: -1\n", "budget_limit_daily", 3],
    ["budget_limit_daily: five\n", "budget_limit_daily", 1],
    ["budget_limit_daily: .inf\n", "budget_limit_daily", 1],
    ["budget_limit_daily: [1]\n", "budget_limit_daily", 1],
    ["pii_detection: yes\n", "pii_detection", 1],
    ["pii_detection: 1\n", "pii_detection", 1],
    ["policies: pol_01HZZZZZZZZZZZZZZZZZZZZZZZ\n", "policies", 1],
    ["policies: [1, 2]\n", "policies", 1],
    ["policies:\n  - not-a-policy\n", "policies", 1],
    ["policies: {a: 1}\n", "policies", 1],
  ];
  for (const [yaml, key, line] of cases) await rejects(t, yaml, { key, line });
});

test("several bad keys are all reported", async (t) => {
  const body = await rejects(t, "rate_limit: x\npii_detection: maybe\n", {});
  t.deepEqual((body.details ?? []).map((d) => d.path).sort(), ["body.configYaml.pii_detection", "body.configYaml.rate_limit"]);
  t.regex(body.error, /line 1/);
  t.regex(body.error, /line 2/);
});

test("a YAML that is not a mapping is a 400", async (t) => {
  for (const yaml of ["- a\n- b\n", "just a string\n", "42\n"]) await rejects(t, yaml, {});
});

test("details are rooted at body. like zod's, for YAML errors, known keys and unknown policies, on create and update", async (t) => {
  const paths = async (method: string, path: string, configYaml: string) =>
    ((await stack.api.call<ErrB>(method, path, method === "POST" ? { name: name(), configYaml } : { configYaml })).body.details ?? []).map((d) => d.path);
  const created = await stack.api.post<{ data: { id: string } }>("/api/agents", { name: name() });
  for (const [method, path] of [["POST", "/api/agents"], ["PATCH", `/api/agents/${created.body.data.id}`]] as const) {
    t.deepEqual(await paths(method, path, "a: [1\n"), ["body.configYaml"], `${method} syntax error`);
    t.deepEqual(await paths(method, path, "- 1\n"), ["body.configYaml"], `${method} not a mapping`);
    t.deepEqual(await paths(method, path, "rate_limit: abc\n"), ["body.configYaml.rate_limit"], `${method} known key`);
    t.deepEqual(await paths(method, path, "policies: [pol_01HZZZZZZZZZZZZZZZZZZZZZZZ]\n"), ["body.configYaml.policies"], `${method} unknown policy`);
    t.deepEqual(await paths(method, path, `x: "${"y".repeat(300 * 1024)}"\n`), ["body.configYaml"], `${method} too long (zod)`);
  }
});

test("policies naming a policy that does not exist is a 400 naming configYaml.policies", async (t) => {
  await rejects(t, "policies: [pol_01HZZZZZZZZZZZZZZZZZZZZZZZ]\n", { key: "policies" });
});

test("alias expansion bombs are refused", async (t) => {
  const bomb = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
  for (let i = 1; i < 9; i++) bomb.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10).fill(`*${String.fromCharCode(96 + i)}`).join(", ")}]`);
  await rejects(t, `${bomb.join("\n")}\n`, {});
});

test("unknown keys, comments and layout are kept and returned untouched", async (t) => {
  const yaml = [
    "# support bot configuration",
    "rate_limit: 60   # requests per minute",
    "budget_limit_daily: 12.5",
    "pii_detection: true",
    "owner: team-payments",
    "routing:",
    "  fallback: [gpt-4o-mini, claude-3-5-haiku]",
    "  weights: {primary: 0.8, secondary: 0.2}",
    "defaults: &d",
    "  temperature: 0.2",
    "override:",
    "  <<: *d",
    "notes: |",
    "  multi-line",
    "  text",
    "",
  ].join("\n");
  const created = await stack.api.post<{ data: { id: string } }>("/api/agents", { name: name(), configYaml: yaml });
  t.is(created.status, 201);
  const id = created.body.data.id;
  const read = await stack.api.get<{ data: { configYaml: string } }>(`/api/agents/${id}`);
  t.is(read.body.data.configYaml, yaml);
  const detail = await stack.api.get<{ config: Record<string, unknown> }>(`/v1/agents/${id}`);
  t.deepEqual(detail.body.config, { rate_limit: 60, budget_limit_daily: 12.5, pii_detection: true, policies: [] });
  const history = await stack.api.get<{ data: { configYaml: string }[] }>(`/api/agents/${id}/history`);
  t.is(history.body.data[0]!.configYaml, yaml);
});

test("empty, comment-only and null values mean the defaults", async (t) => {
  for (const yaml of ["", "# nothing yet\n", "rate_limit:\nbudget_limit_daily: ~\npii_detection:\n", "{}\n"]) {
    const r = await stack.api.post<{ data: { id: string } }>("/api/agents", { name: name(), configYaml: yaml });
    t.is(r.status, 201, JSON.stringify(yaml));
    const d = await stack.api.get<{ config: Record<string, unknown> }>(`/v1/agents/${r.body.data.id}`);
    t.deepEqual(d.body.config, { rate_limit: null, budget_limit_daily: null, pii_detection: true, policies: [] }, JSON.stringify(yaml));
  }
});

test("an invalid configYaml in PATCH is a 400 and changes nothing", async (t) => {
  const good = "rate_limit: 10\n";
  const created = await stack.api.post<{ data: { id: string } }>("/api/agents", { name: name(), configYaml: good });
  const id = created.body.data.id;
  for (const bad of ["rate_limit: [\n", "rate_limit: ten\n", "pii_detection: 0\n"]) {
    const r = await stack.api.call<ErrB>("PATCH", `/api/agents/${id}`, { configYaml: bad, description: "should not stick" });
    t.is(r.status, 400, bad);
  }
  const read = await stack.api.get<{ data: { configYaml: string; description: string | null } }>(`/api/agents/${id}`);
  t.is(read.body.data.configYaml, good);
  t.is(read.body.data.description, null);
  t.is((await stack.api.get<{ total: number }>(`/api/agents/${id}/history`)).body.total, 1);
  const ok = await stack.api.call<{ data: { configYaml: string } }>("PATCH", `/api/agents/${id}`, { configYaml: "rate_limit: 20\nextra: [a]\n" });
  t.is(ok.status, 200);
  t.is(ok.body.data.configYaml, "rate_limit: 20\nextra: [a]\n");
  t.is((await stack.api.get<{ config: { rate_limit: number } }>(`/v1/agents/${id}`)).body.config.rate_limit, 20);
});

test("a configYaml over 256 KiB is a 400", async (t) => {
  const r = await stack.api.post<ErrB>("/api/agents", { name: name(), configYaml: `notes: "${"x".repeat(256 * 1024)}"\n` });
  t.is(r.status, 400);
});

const KNOWN = "(known keys: rate_limit, budget_limit_daily, pii_detection, policies)";

/** What a refused write must leave alone: the tenant's audit log and Sync changes. */
async function tenantState() {
  const audit = (await stack.api.get<{ total: number }>("/api/audit?limit=1")).body.total;
  const sync = (await stack.cp.db.query<{ v: string | null }>("SELECT max(version)::text AS v FROM sync_changes WHERE tenant_id = $1", [stack.cp.tenantId])).rows[0]!.v;
  return { audit, sync };
}

test.serial("a misspelt known key is a 400 on create naming the key, its line and the key meant, and creates nothing", async (t) => {
  const before = await tenantState();
  const agentName = name();
  const r = await stack.api.post<ErrB>("/api/agents", { name: agentName, configYaml: "rate_limit: 60\nbudget_limit_dayly: 5\n" });
  const message = `unknown key "budget_limit_dayly" (line 2); did you mean budget_limit_daily? ${KNOWN}`;
  t.is(r.status, 400);
  t.deepEqual(r.body, { error: `invalid configYaml: ${message}`, details: [{ path: "body.configYaml.budget_limit_dayly", message }] });
  const cases: [string, string, string, number][] = [
    ["Budget_Limit_Daily: 0.000001\n", "Budget_Limit_Daily", "budget_limit_daily", 1],
    ["owner: me\nratelimit: 1\n", "ratelimit", "rate_limit", 2],
    ["rate-limit: 1\n", "rate-limit", "rate_limit", 1],
    ["pii_detecton: false\n", "pii_detecton", "pii_detection", 1],
    ["policy: []\n", "policy", "policies", 1],
  ];
  for (const [yaml, key, meant, line] of cases) {
    const body = await rejects(t, yaml, { key, line });
    t.true(body.error.includes(`did you mean ${meant}?`), body.error);
  }
  const merge = await rejects(t, "base: &b {budget_limit_daily: 0.000001}\n<<: *b\n", { key: "<<", line: 2 });
  t.true(merge.error.includes("write budget_limit_daily at the top level"), merge.error);
  t.deepEqual(await tenantState(), before, "no audit entry, no Sync change");
});

test.serial("a misspelt known key in PATCH is a 400 and changes nothing: YAML, other fields, history, audit, Sync", async (t) => {
  const good = "rate_limit: 10\n";
  const id = (await stack.api.post<{ data: { id: string } }>("/api/agents", { name: name(), configYaml: good })).body.data.id;
  const before = await tenantState();
  const r = await stack.api.call<ErrB>("PATCH", `/api/agents/${id}`, { configYaml: "rate_limit: 10\nbudget_limit_dayly: 5\n", description: "should not stick" });
  const message = `unknown key "budget_limit_dayly" (line 2); did you mean budget_limit_daily? ${KNOWN}`;
  t.is(r.status, 400);
  t.deepEqual(r.body, { error: `invalid configYaml: ${message}`, details: [{ path: "body.configYaml.budget_limit_dayly", message }] });
  const read = await stack.api.get<{ data: { configYaml: string; description: string | null } }>(`/api/agents/${id}`);
  t.is(read.body.data.configYaml, good);
  t.is(read.body.data.description, null);
  t.is((await stack.api.get<{ total: number }>(`/api/agents/${id}/history`)).body.total, 1);
  t.deepEqual(await tenantState(), before, "no audit entry, no Sync change");
  // Free-form keys that are not near misses stay accepted.
  const ok = await stack.api.call<{ data: { configYaml: string } }>("PATCH", `/api/agents/${id}`, { configYaml: "rate_limit: 20\nmodel: gpt-4o-mini\ntemperature: 0.2\nbudget: team\n" });
  t.is(ok.status, 200);
});

test.serial("an agent stored with a misspelt key (before the rule) still loads, syncs, takes policy links and other writes", async (t) => {
  const id = (await stack.api.post<{ data: { id: string } }>("/api/agents", { name: name(), configYaml: "rate_limit: 7\n" })).body.data.id;
  const stored = "rate_limit: 7\nbudget_limit_dayly: 5\n";
  await stack.cp.db.query("UPDATE agents SET config_yaml = $1 WHERE id = $2", [stored, id]);
  t.is((await stack.api.get<{ data: { configYaml: string } }>(`/api/agents/${id}`)).body.data.configYaml, stored);
  t.deepEqual((await stack.api.get<{ config: Record<string, unknown> }>(`/v1/agents/${id}`)).body.config, { rate_limit: 7, budget_limit_daily: null, pii_detection: true, policies: [] });
  const synced = async () => (await buildSnapshot(stack.cp.db, stack.cp.tenantId)).agents.find((a) => a.id === id);
  t.like(await synced(), { rateLimit: 7, hasBudget: false, piiDetection: true });
  // Writes that do not carry a new configYaml still work.
  t.is((await stack.api.call("PATCH", `/api/agents/${id}`, { description: "still editable" })).status, 200);
  t.is((await stack.api.call("PATCH", `/v1/agents/${id}`, { status: "paused" })).status, 200);
  // A policy naming the agent rewrites only the policies key of the stored YAML.
  const p = await stack.api.post<{ id: string }>("/v1/policies", { name: `p-${name()}`, action: "log", agents: [id] });
  t.is(p.status, 201);
  t.is((await stack.api.get<{ data: { configYaml: string } }>(`/api/agents/${id}`)).body.data.configYaml, `${stored}policies: [${p.body.id}]\n`);
  t.like(await synced(), { rateLimit: 7, status: "paused", policyIds: [p.body.id] });
  const history = await stack.api.get<{ data: { configYaml: string }[] }>(`/api/agents/${id}/history`);
  t.is(history.body.data[0]!.configYaml, `${stored}policies: [${p.body.id}]\n`);
  // Sending the stored YAML back is a new write: refused, naming the key.
  const again = await stack.api.call<ErrB>("PATCH", `/api/agents/${id}`, { configYaml: stored });
  t.is(again.status, 400);
  t.deepEqual(again.body.details?.map((d) => d.path), ["body.configYaml.budget_limit_dayly"]);
});
