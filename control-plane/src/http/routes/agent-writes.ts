// The agent writes both REST groups share: create and update, with configYaml validation, policy links,
// deployment history, audit and the Sync change in one transaction.
import type { Db, Queryable } from "../../stores/postgres/db.js";
import type { Principal } from "../../domain/permissions.js";
import type { Ctx } from "../route.js";
import { actorOf } from "../actor.js";
import { parseAgentConfig, withPolicies, type AgentConfig } from "../../domain/agent-config.js";
import { checkTransition, type AgentStatus } from "../../domain/agent-status.js";
import { lockTenantGovernance, setAgentLinks } from "../../domain/policy-links.js";
import { newId } from "../../domain/ids.js";
import { AppError, badRequest, conflict, notFound } from "../../errors/app-error.js";
import {
  agentNameTaken, getAgent, insertAgent, insertDeployment, linkedPolicyIds, updateAgent, type AgentPatch, type AgentRow,
} from "../../stores/postgres/agents-repo.js";
import { existingPolicyIds } from "../../stores/postgres/policies-repo.js";
import { appendAudit } from "../../stores/postgres/audit-repo.js";
import { recordChange } from "../../stores/postgres/sync-changes.js";

export interface AgentFields {
  name?: string;
  description?: string | null;
  modelProvider?: string;
  modelName?: string;
  environment?: string;
  configYaml?: string;
  status?: AgentStatus;
}

/**
 * The configYaml of a request body, validated; a key that looks like a misspelling of a known key is
 * refused too (new writes only: stored YAML is read as is). The domain names keys from the YAML (`configYaml.rate_limit`);
 * here they are rooted at `body.` like every other validation detail of a body (`body.configYaml`).
 */
function parseBodyConfig(configYaml: string): AgentConfig {
  try {
    return parseAgentConfig(configYaml, { refuseNearMisses: true });
  } catch (e) {
    if (e instanceof AppError) throw new AppError(e.code, e.message, e.details.map((d) => ({ ...d, path: `body.${d.path}` })));
    throw e;
  }
}

async function checkPolicyIds(db: Queryable, tenantId: string, cfg: AgentConfig): Promise<void> {
  const ids = cfg.policies ?? [];
  const known = await existingPolicyIds(db, tenantId, ids);
  const missing = ids.filter((p) => !known.has(p));
  if (missing.length > 0) {
    throw badRequest(`configYaml.policies names unknown policies: ${missing.join(", ")}`, [
      { path: "body.configYaml.policies", message: `unknown policy ids: ${missing.join(", ")}` },
    ]);
  }
}

export async function createAgent(db: Db, ctx: Ctx, principal: Principal, f: AgentFields & { name: string }): Promise<AgentRow> {
  const configYaml = f.configYaml ?? "";
  const config = parseBodyConfig(configYaml);
  return db.tx(async (c) => {
    const tenantId = principal.tenantId;
    await lockTenantGovernance(c, tenantId);
    if (await agentNameTaken(c, tenantId, f.name)) throw conflict(`an agent named "${f.name}" already exists`);
    await checkPolicyIds(c, tenantId, config);
    const agent = await insertAgent(c, {
      id: newId("agt"),
      tenant_id: tenantId,
      name: f.name,
      description: f.description ?? null,
      model_provider: f.modelProvider ?? "",
      model_name: f.modelName ?? "",
      environment: f.environment ?? "",
      config_yaml: configYaml,
    });
    if (config.policies !== null) await setAgentLinks(c, tenantId, agent.id, config.policies);
    await insertDeployment(c, { id: newId("dep"), tenantId, agentId: agent.id, configYaml, deployedBy: principal.userId });
    await appendAudit(c, { ...actorOf(ctx, principal), action: "agent.create", targetType: "agent", targetId: agent.id, details: { name: agent.name } });
    await recordChange(c, tenantId, "agent", agent.id);
    return agent;
  });
}

/** Applies the given fields; unchanged values are not written. Returns the agent as stored. */
export async function updateAgentFields(db: Db, ctx: Ctx, principal: Principal, agentId: string, f: AgentFields): Promise<AgentRow> {
  const config = f.configYaml !== undefined ? parseBodyConfig(f.configYaml) : undefined;
  return db.tx(async (c) => {
    const tenantId = principal.tenantId;
    await lockTenantGovernance(c, tenantId);
    const agent = await getAgent(c, tenantId, agentId, { forUpdate: true });
    if (!agent) throw notFound(`agent ${agentId}`);
    const patch: AgentPatch = {};
    if (f.status !== undefined && f.status !== agent.status) {
      checkTransition(agent.id, agent.status, f.status);
      patch.status = f.status;
    }
    if (f.name !== undefined && f.name !== agent.name) {
      if (await agentNameTaken(c, tenantId, f.name, agent.id)) throw conflict(`an agent named "${f.name}" already exists`);
      patch.name = f.name;
    }
    if (f.description !== undefined && f.description !== agent.description) patch.description = f.description;
    if (f.modelProvider !== undefined && f.modelProvider !== agent.model_provider) patch.model_provider = f.modelProvider;
    if (f.modelName !== undefined && f.modelName !== agent.model_name) patch.model_name = f.modelName;
    if (f.environment !== undefined && f.environment !== agent.environment) patch.environment = f.environment;
    let linksChanged: string[] = [];
    if (f.configYaml !== undefined && config) {
      let yaml = f.configYaml;
      if (config.policies !== null) {
        await checkPolicyIds(c, tenantId, config);
        linksChanged = await setAgentLinks(c, tenantId, agent.id, config.policies);
      } else {
        // No policies key: the links stay; the stored YAML names them so that it stays the whole truth.
        const links = await linkedPolicyIds(c, agent.id);
        if (links.length > 0) yaml = withPolicies(yaml, links);
      }
      if (yaml !== agent.config_yaml) {
        patch.config_yaml = yaml;
        await insertDeployment(c, { id: newId("dep"), tenantId, agentId: agent.id, configYaml: yaml, deployedBy: principal.userId });
      }
    }
    const changed = Object.keys(patch);
    if (changed.length === 0 && linksChanged.length === 0) return agent;
    const row = (await updateAgent(c, tenantId, agent.id, patch)) ?? agent;
    const details: Record<string, unknown> = { changed };
    if (patch.status) details.status = { from: agent.status, to: patch.status };
    if (linksChanged.length > 0) details.policiesChanged = linksChanged;
    await appendAudit(c, { ...actorOf(ctx, principal), action: "agent.update", targetType: "agent", targetId: agent.id, details });
    await recordChange(c, tenantId, "agent", agent.id);
    return row;
  });
}
