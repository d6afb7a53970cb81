// Keeps an agent's configYaml `policies` key equal to its explicit policy links (DESIGN.md §11):
// a change of a policy's agents rewrites the affected agents' stored configYaml and appends a deployment record.
import type { Queryable } from "../stores/postgres/db.js";
import { getAgent, insertDeployment, linkedPolicyIds } from "../stores/postgres/agents-repo.js";
import { recordChange } from "../stores/postgres/sync-changes.js";
import { withPolicies } from "./agent-config.js";
import { newId } from "./ids.js";

export async function rewriteAgentPolicyKeys(db: Queryable, tenantId: string, agentIds: readonly string[], actorUserId: string): Promise<void> {
  for (const agentId of agentIds) {
    const agent = await getAgent(db, tenantId, agentId);
    if (!agent) continue;
    const ids = await linkedPolicyIds(db, agentId);
    const yaml = withPolicies(agent.config_yaml, ids);
    if (yaml === agent.config_yaml) continue;
    await db.query("UPDATE agents SET config_yaml = $1, updated_at = now() WHERE id = $2", [yaml, agentId]);
    await insertDeployment(db, { id: newId("dep"), tenantId, agentId, configYaml: yaml, deployedBy: actorUserId });
    await recordChange(db, tenantId, "agent", agentId);
  }
}
