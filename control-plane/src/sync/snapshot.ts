// Builds what Sync sends: a tenant's full governance state, or the delta for a list of changes.
import { create } from "@bufbuild/protobuf";
import {
  AgentSchema, AgentSpendSchema, ApiKeySchema, DeltaSchema, PolicySchema, PolicyConditionsSchema, SnapshotSchema,
  type Agent, type AgentSpend, type ApiKey, type Delta, type Policy, type Snapshot,
} from "@agentgov/proto";
import type { Queryable } from "../stores/postgres/db.js";
import { allAgents, getAgent, linkedPolicyIds, linksForAgents, type AgentRow } from "../stores/postgres/agents-repo.js";
import { getPolicy, listPolicies, type PolicyRow } from "../stores/postgres/policies-repo.js";
import type { ChangeRow } from "../stores/postgres/sync-changes.js";
import { parseAgentConfig } from "../domain/agent-config.js";

export function utcDay(d: Date = new Date()): string {
  return d.toISOString().slice(0, 10);
}

function toAgent(a: AgentRow, policyIds: string[]): Agent {
  let cfg;
  try {
    cfg = parseAgentConfig(a.config_yaml);
  } catch {
    cfg = { rate_limit: null, budget_limit_daily: null, pii_detection: true, policies: null };
  }
  return create(AgentSchema, {
    id: a.id,
    name: a.name,
    status: a.status,
    provider: a.model_provider,
    model: a.model_name,
    environment: a.environment,
    rateLimit: cfg.rate_limit ?? 0,
    budgetLimitDaily: cfg.budget_limit_daily ?? 0,
    hasBudget: cfg.budget_limit_daily !== null,
    piiDetection: cfg.pii_detection,
    policyIds,
  });
}

function toPolicy(p: PolicyRow): Policy {
  const c = p.conditions;
  return create(PolicySchema, {
    id: p.id,
    name: p.name,
    status: p.status,
    action: p.action,
    priority: p.priority,
    agentIds: p.agents,
    conditions: create(PolicyConditionsSchema, {
      direction: c.direction ?? "inbound",
      piiTypes: c.pii_types ?? [],
      injectionScoreGte: c.injection_score_gte,
      models: c.models ?? [],
      maxInputTokens: c.max_input_tokens,
      keywords: c.keywords ?? [],
      regex: c.regex,
    }),
  });
}

interface KeyRow {
  id: string;
  key_hash: string;
  scope: string;
  created_by: string;
  valid: boolean;
}

const KEY_SQL = `SELECT k.id, k.key_hash, k.scope, k.created_by, (k.deleted_at IS NULL AND u.status = 'active') AS valid
  FROM api_keys k JOIN users u ON u.id = k.created_by WHERE k.tenant_id = $1`;

const toKey = (k: KeyRow): ApiKey => create(ApiKeySchema, { id: k.id, keyHash: k.key_hash, scope: k.scope, userId: k.created_by });

async function spendRows(db: Queryable, tenantId: string, agentIds?: string[]): Promise<AgentSpend[]> {
  const day = utcDay();
  const r = agentIds
    ? await db.query<{ agent_id: string; spent_usd: number }>("SELECT agent_id, spent_usd FROM agent_spend WHERE tenant_id = $1 AND day = $2 AND agent_id = ANY($3)", [tenantId, day, agentIds])
    : await db.query<{ agent_id: string; spent_usd: number }>("SELECT agent_id, spent_usd FROM agent_spend WHERE tenant_id = $1 AND day = $2", [tenantId, day]);
  return r.rows.map((x) => create(AgentSpendSchema, { agentId: x.agent_id, day, spentUsd: x.spent_usd }));
}

export async function buildSnapshot(db: Queryable, tenantId: string): Promise<Snapshot> {
  const [agents, links, policies, keys, spend] = await Promise.all([
    allAgents(db, tenantId),
    linksForAgents(db, tenantId),
    listPolicies(db, tenantId),
    db.query<KeyRow>(KEY_SQL, [tenantId]),
    spendRows(db, tenantId),
  ]);
  return create(SnapshotSchema, {
    tenantId,
    agents: agents.map((a) => toAgent(a, links.get(a.id) ?? [])),
    policies: policies.map(toPolicy),
    keys: keys.rows.filter((k) => k.valid).map(toKey),
    spend,
  });
}

export async function buildDelta(db: Queryable, tenantId: string, changes: readonly ChangeRow[]): Promise<Delta> {
  const delta = create(DeltaSchema, {});
  const seen = new Set<string>();
  const spendAgents: string[] = [];
  for (const ch of changes) {
    const k = `${ch.kind}:${ch.entity_id}`;
    if (seen.has(k)) continue;
    seen.add(k);
    if (ch.kind === "agent") {
      const a = await getAgent(db, tenantId, ch.entity_id);
      if (a) delta.upsertAgents.push(toAgent(a, await linkedPolicyIds(db, a.id)));
      else delta.removedAgentIds.push(ch.entity_id);
    } else if (ch.kind === "policy") {
      const p = await getPolicy(db, tenantId, ch.entity_id);
      if (p) delta.upsertPolicies.push(toPolicy(p));
      else delta.removedPolicyIds.push(ch.entity_id);
    } else if (ch.kind === "key" || ch.kind === "user") {
      const column = ch.kind === "key" ? "k.id" : "k.created_by";
      const r = await db.query<KeyRow>(`${KEY_SQL} AND ${column} = $2`, [tenantId, ch.entity_id]);
      for (const key of r.rows) {
        if (key.valid) delta.upsertKeys.push(toKey(key));
        else delta.removedKeyIds.push(key.id);
      }
      if (ch.kind === "key" && r.rows.length === 0) delta.removedKeyIds.push(ch.entity_id);
    } else if (ch.kind === "spend") {
      spendAgents.push(ch.entity_id);
    }
  }
  if (spendAgents.length > 0) delta.spend.push(...(await spendRows(db, tenantId, spendAgents)));
  return delta;
}
