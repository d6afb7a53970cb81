// One relation, two views (DESIGN.md §11): a policy's `agents` and an agent's configYaml `policies` key
// are both read from policy_agents, and every change through either side rewrites the other:
// - a configYaml with a `policies` key replaces that agent's links;
// - a change of a policy's agents rewrites the affected agents' stored configYaml `policies` key and
//   appends a deployment record (the actor as deployedBy);
// - a change that would leave an agent-scoped policy with no agent (silently making it tenant-wide) is a 409;
//   so is an agent's configYaml naming a tenant-wide policy (silently taking it from every other agent).
// Callers hold lockTenantGovernance for the whole transaction, so concurrent writers see each other's links.
import type { Queryable } from "../stores/postgres/db.js";
import { getAgent, insertDeployment, linkedPolicyIds, updateAgent } from "../stores/postgres/agents-repo.js";
import { deleteLinks, insertLinks, linkCounts, touchPolicy } from "../stores/postgres/policies-repo.js";
import { recordChange } from "../stores/postgres/sync-changes.js";
import { conflict } from "../errors/app-error.js";
import { withPolicies } from "./agent-config.js";
import { newId } from "./ids.js";

/** Serializes agent and policy writes of one tenant (taken first, before any row lock). */
export async function lockTenantGovernance(db: Queryable, tenantId: string): Promise<void> {
  await db.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`governance:${tenantId}`]);
}

function wouldOrphan(policyId: string): Error {
  return conflict(
    `policy ${policyId} would be left with no agent, which would make it apply to every agent of the tenant; ` +
      "link it to another agent first, or delete it",
  );
}

function wouldNarrow(policyId: string): Error {
  return conflict(
    `policy ${policyId} applies to every agent of the tenant; naming it in one agent's configYaml would take it ` +
      "from all the others. It applies to this agent already; to scope it, set the policy's agents",
  );
}

/**
 * Replaces an agent's policy links (its configYaml `policies` key). Returns the policies whose agents changed.
 * Naming a tenant-wide policy (no agents) is a 409, as its mirror image is: linking it would silently take
 * it from every other agent, through a write that needs only agents:write.
 */
export async function setAgentLinks(db: Queryable, tenantId: string, agentId: string, wanted: readonly string[]): Promise<string[]> {
  const current = new Set(await linkedPolicyIds(db, agentId));
  const want = new Set(wanted);
  const removed = [...current].filter((p) => !want.has(p));
  const added = [...want].filter((p) => !current.has(p));
  const counts = await linkCounts(db, tenantId, [...removed, ...added]);
  for (const p of added) if ((counts.get(p) ?? 0) === 0) throw wouldNarrow(p);
  for (const p of removed) if ((counts.get(p) ?? 0) <= 1) throw wouldOrphan(p);
  await deleteLinks(db, tenantId, removed.map((policyId) => ({ policyId, agentId })));
  await insertLinks(db, tenantId, added.map((policyId) => ({ policyId, agentId })));
  const changed = [...removed, ...added];
  for (const p of changed) {
    await touchPolicy(db, tenantId, p);
    await recordChange(db, tenantId, "policy", p);
  }
  return changed;
}

/**
 * Replaces a policy's agents and rewrites the affected agents' configYaml. `previous` are its agents before.
 * Returns the agents whose links changed.
 */
export async function setPolicyAgents(
  db: Queryable,
  tenantId: string,
  policyId: string,
  previous: readonly string[],
  wanted: readonly string[],
  actorUserId: string,
): Promise<string[]> {
  if (previous.length > 0 && wanted.length === 0) throw wouldOrphan(policyId);
  const before = new Set(previous);
  const want = new Set(wanted);
  const removed = [...before].filter((a) => !want.has(a));
  const added = [...want].filter((a) => !before.has(a));
  await deleteLinks(db, tenantId, removed.map((agentId) => ({ policyId, agentId })));
  await insertLinks(db, tenantId, added.map((agentId) => ({ policyId, agentId })));
  const affected = [...removed, ...added];
  await rewriteAgentPolicyKeys(db, tenantId, affected, actorUserId);
  return affected;
}

/**
 * Sets each agent's stored configYaml `policies` key to its current links; a changed YAML appends a
 * deployment record. Every agent given gets a Sync change (its policy ids changed).
 */
export async function rewriteAgentPolicyKeys(db: Queryable, tenantId: string, agentIds: readonly string[], actorUserId: string): Promise<void> {
  for (const agentId of [...new Set(agentIds)]) {
    const agent = await getAgent(db, tenantId, agentId, { forUpdate: true });
    if (!agent) continue;
    const yaml = withPolicies(agent.config_yaml, await linkedPolicyIds(db, agentId));
    if (yaml !== agent.config_yaml) {
      await updateAgent(db, tenantId, agentId, { config_yaml: yaml });
      await insertDeployment(db, { id: newId("dep"), tenantId, agentId, configYaml: yaml, deployedBy: actorUserId });
    }
    await recordChange(db, tenantId, "agent", agentId);
  }
}
