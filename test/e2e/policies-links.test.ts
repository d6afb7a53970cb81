// An agent's config.policies and a policy's agents are two views of one relation (DESIGN.md §11): every
// change through either side shows in both, in the agents' stored configYaml `policies` key and in their
// deployment history; a change that would leave an agent-scoped policy with no agent is a 409.
import test from "ava";
import { hashApiKey } from "@agentgov/control-plane";
import { parseAgentConfig } from "../../control-plane/src/domain/agent-config.js";
import { startStack, type Stack } from "../harness/stack.js";

let stack: Stack;
let adminUser: string;
test.before(async () => {
  stack = await startStack();
  adminUser = (await stack.cp.db.query<{ id: string }>("SELECT created_by AS id FROM api_keys WHERE key_hash = $1", [hashApiKey(stack.adminKey)])).rows[0]!.id;
});
test.after.always(async () => {
  await stack?.stop();
});

interface Policy {
  id: string;
  agents: string[];
}
interface Deployment {
  version: number;
  configYaml: string;
  deployedBy: string;
}
let n = 0;

async function agent(configYaml?: string): Promise<string> {
  const r = await stack.api.post<{ data: { id: string } }>("/api/agents", { name: `links-${++n}-${Date.now()}`, ...(configYaml !== undefined ? { configYaml } : {}) });
  if (r.status !== 201) throw new Error(`agent: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data.id;
}
async function policy(agents: string[] = [], extra: Record<string, unknown> = {}): Promise<string> {
  const r = await stack.api.post<Policy>("/v1/policies", { name: `p-${++n}`, action: "log", agents, ...extra });
  if (r.status !== 201) throw new Error(`policy: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.id;
}
const sorted = (xs: readonly string[]) => [...xs].sort();

async function configPolicies(agentId: string): Promise<string[]> {
  return (await stack.api.get<{ config: { policies: string[] } }>(`/v1/agents/${agentId}`)).body.config.policies;
}
async function yamlOf(agentId: string): Promise<string> {
  return (await stack.api.get<{ data: { configYaml: string } }>(`/api/agents/${agentId}`)).body.data.configYaml;
}
async function history(agentId: string): Promise<Deployment[]> {
  return (await stack.api.get<{ data: Deployment[] }>(`/api/agents/${agentId}/history?limit=500`)).body.data;
}
async function policyAgents(policyId: string): Promise<string[]> {
  return (await stack.api.get<Policy>(`/v1/policies/${policyId}`)).body.agents;
}

/** Both views agree for every agent and policy of the tenant, and each stored YAML's policies key matches. */
async function assertViewsAgree(t: import("ava").ExecutionContext, label: string): Promise<void> {
  const policies = (await stack.api.get<{ data: Policy[] }>("/v1/policies")).body.data;
  const agents = (await stack.api.get<{ data: { id: string }[] }>("/api/agents?limit=500")).body.data;
  for (const a of agents) {
    const fromPolicies = sorted(policies.filter((p) => p.agents.includes(a.id)).map((p) => p.id));
    t.deepEqual(sorted(await configPolicies(a.id)), fromPolicies, `${label}: config.policies of ${a.id}`);
    const yamlKey = parseAgentConfig(await yamlOf(a.id)).policies;
    if (yamlKey !== null || fromPolicies.length > 0) t.deepEqual(sorted(yamlKey ?? []), fromPolicies, `${label}: configYaml policies key of ${a.id}`);
    const scoped = (await stack.api.get<{ data: Policy[] }>(`/v1/policies?agent_id=${a.id}`)).body.data.map((p) => p.id);
    for (const p of policies) t.is(scoped.includes(p.id), p.agents.length === 0 || p.agents.includes(a.id), `${label}: ?agent_id=${a.id} lists ${p.id}`);
  }
}

test.serial("a policy's agents show in each agent's config.policies, configYaml and history", async (t) => {
  const a = await agent("rate_limit: 5 # keep me\nowner: me\n");
  const b = await agent();
  const p = await policy([a, b]);
  t.deepEqual(sorted(await policyAgents(p)), sorted([a, b]));
  t.deepEqual(await configPolicies(a), [p]);
  t.deepEqual(await configPolicies(b), [p]);
  t.is(await yamlOf(a), `rate_limit: 5 # keep me\nowner: me\npolicies: [${p}]\n`, "only the policies key is added; the rest is untouched");
  const h = await history(a);
  t.deepEqual(h.map((d) => d.version), [2, 1]);
  t.is(h[0]!.deployedBy, adminUser);
  t.is(h[0]!.configYaml, await yamlOf(a));
  const wide = await policy([]);
  t.false((await configPolicies(a)).includes(wide), "tenant-wide policies appear in no agent's config.policies");
  await assertViewsAgree(t, "after create");
});

test.serial("an agent's configYaml policies key replaces its links", async (t) => {
  const a = await agent();
  const b = await agent();
  const p1 = await policy([a, b]);
  const p2 = await policy([b]);
  const r = await stack.api.call<{ data: { configYaml: string } }>("PATCH", `/api/agents/${a}`, { configYaml: `rate_limit: 9\npolicies: [${p2}]\n` });
  t.is(r.status, 200);
  t.is(r.body.data.configYaml, `rate_limit: 9\npolicies: [${p2}]\n`);
  t.deepEqual(await policyAgents(p1), [b]);
  t.deepEqual(sorted(await policyAgents(p2)), sorted([a, b]));
  t.deepEqual(await configPolicies(a), [p2]);
  await assertViewsAgree(t, "after agent patch");

  // A YAML without the key leaves the links as they are (and the stored YAML names them).
  const kept = await stack.api.call<{ data: { configYaml: string } }>("PATCH", `/api/agents/${a}`, { configYaml: "rate_limit: 10\n" });
  t.is(kept.status, 200);
  t.deepEqual(await configPolicies(a), [p2]);
  t.is(kept.body.data.configYaml, `rate_limit: 10\npolicies: [${p2}]\n`);
  await assertViewsAgree(t, "after patch without the key");

  // Listing a tenant-wide policy would take it from every other agent (with agents:write only): 409, nothing changes.
  const wide = await policy([]);
  const create = await stack.api.call<{ error: string }>("POST", "/api/agents", { name: `narrowing-${wide}`, configYaml: `policies: [${wide}]\n` });
  t.is(create.status, 409);
  t.regex(create.body.error, new RegExp(`${wide} applies to every agent`));
  const listed = await stack.api.call<{ data: { name: string }[] }>("GET", "/api/agents?limit=500");
  t.false(listed.body.data.some((x) => x.name === `narrowing-${wide}`), "the agent was not created");
  const patch = await stack.api.call("PATCH", `/api/agents/${a}`, { configYaml: `policies: [${p2}, ${wide}]\n` });
  t.is(patch.status, 409);
  t.deepEqual(await policyAgents(wide), [], "still tenant-wide");
  t.deepEqual(await configPolicies(a), [p2]);
  await assertViewsAgree(t, "after the refused narrowing");
});

test.serial("leaving an agent-scoped policy with no agent is a 409 and changes nothing", async (t) => {
  const a = await agent();
  const p = await policy([a]);
  const yamlBefore = await yamlOf(a);
  const versionsBefore = (await history(a)).length;

  const viaAgent = await stack.api.call<{ error: string }>("PATCH", `/api/agents/${a}`, { configYaml: "policies: []\n" });
  t.is(viaAgent.status, 409);
  t.regex(viaAgent.body.error, new RegExp(p));
  const viaAgentOther = await stack.api.call("PATCH", `/api/agents/${a}`, { configYaml: "rate_limit: 3\npolicies:\n" });
  t.is(viaAgentOther.status, 409);
  const viaPolicy = await stack.api.call<{ error: { code: string } }>("PATCH", `/v1/policies/${p}`, { agents: [] });
  t.is(viaPolicy.status, 409);
  t.is(viaPolicy.body.error.code, "conflict");

  t.deepEqual(await policyAgents(p), [a]);
  t.is(await yamlOf(a), yamlBefore);
  t.is((await history(a)).length, versionsBefore);
  // Moving it to another agent in one step is fine.
  const b = await agent();
  const moved = await stack.api.call<Policy>("PATCH", `/v1/policies/${p}`, { agents: [b] });
  t.is(moved.status, 200);
  t.deepEqual(moved.body.agents, [b]);
  t.deepEqual(await configPolicies(a), []);
  t.deepEqual(await configPolicies(b), [p]);
  await assertViewsAgree(t, "after move");
});

test.serial("PATCH of a policy's agents rewrites exactly the affected agents, with deployment records by the actor", async (t) => {
  const a = await agent();
  const b = await agent();
  const c = await agent("owner: c\n");
  const p = await policy([a, b]);
  const before = { a: (await history(a)).length, b: (await history(b)).length, c: (await history(c)).length };
  const r = await stack.api.call<Policy>("PATCH", `/v1/policies/${p}`, { agents: [b, c, c] });
  t.is(r.status, 200);
  t.deepEqual(sorted(r.body.agents), sorted([b, c]));
  t.is((await history(a)).length, before.a + 1, "a lost the policy");
  t.is((await history(b)).length, before.b, "b is unaffected");
  t.is((await history(c)).length, before.c + 1, "c gained the policy");
  const newest = (await history(c))[0]!;
  t.is(newest.deployedBy, adminUser);
  t.is(newest.configYaml, `owner: c\npolicies: [${p}]\n`);
  t.is(await yamlOf(a), "policies: []\n");
  t.is((await stack.api.call("PATCH", `/v1/policies/${p}`, { agents: ["agt_01HZZZZZZZZZZZZZZZZZZZZZZZ"] })).status, 404);
  t.deepEqual(sorted(await policyAgents(p)), sorted([b, c]), "a 404 changes nothing");
  await assertViewsAgree(t, "after policy patch");
});

test.serial("deleting a policy removes it from its agents' config", async (t) => {
  const a = await agent();
  const p = await policy([a]);
  const other = await policy([a]);
  t.deepEqual(sorted(await configPolicies(a)), sorted([p, other]));
  t.is((await stack.api.call("DELETE", `/v1/policies/${p}`)).status, 204);
  t.deepEqual(await configPolicies(a), [other]);
  t.deepEqual(parseAgentConfig(await yamlOf(a)).policies, [other]);
  t.is((await history(a))[0]!.deployedBy, adminUser);
  await assertViewsAgree(t, "after delete");
});

test.serial("creating a policy for an unknown agent is a 404 and creates nothing", async (t) => {
  const a = await agent();
  const count = (await stack.api.get<{ data: Policy[] }>("/v1/policies")).body.data.length;
  const r = await stack.api.post<{ error: { code: string } }>("/v1/policies", { name: "x", action: "block", agents: [a, "agt_01HZZZZZZZZZZZZZZZZZZZZZZZ"] });
  t.is(r.status, 404);
  t.is((await stack.api.get<{ data: Policy[] }>("/v1/policies")).body.data.length, count);
  t.deepEqual(await configPolicies(a), []);
  t.is((await history(a)).length, 1);
});

test.serial("concurrent link changes from both sides keep the views in agreement", async (t) => {
  const agents = await Promise.all(Array.from({ length: 4 }, () => agent()));
  const policies = await Promise.all(Array.from({ length: 4 }, (_, i) => policy([agents[i]!])));
  const ops: Promise<unknown>[] = [];
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 4; i++) {
      ops.push(stack.api.call("PATCH", `/v1/policies/${policies[i]}`, { agents: [agents[i]!, agents[(i + round + 1) % 4]!] }));
      ops.push(stack.api.call("PATCH", `/api/agents/${agents[i]}`, { configYaml: `rate_limit: ${round + 1}\npolicies: [${policies[i]}, ${policies[(i + 1) % 4]}]\n` }));
    }
  }
  const results = (await Promise.all(ops)) as { status: number }[];
  t.true(results.every((r) => r.status === 200 || r.status === 409), results.map((r) => r.status).join(","));
  await assertViewsAgree(t, "after concurrent changes");
});
