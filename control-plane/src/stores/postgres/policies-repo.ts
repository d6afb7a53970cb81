// Governance policies and their agent links.
import type { Queryable } from "./db.js";

export interface PolicyConditionsJson {
  direction: "inbound" | "outbound" | "both";
  pii_types?: string[];
  injection_score_gte?: number;
  models?: string[];
  max_input_tokens?: number;
  keywords?: string[];
  regex?: string;
}

export interface PolicyRow {
  id: string;
  tenant_id: string;
  name: string;
  description: string | null;
  status: "active" | "disabled";
  action: "block" | "redact" | "log";
  priority: number;
  conditions: PolicyConditionsJson;
  created_at: Date;
  updated_at: Date;
  agents: string[];
}

const SELECT = `SELECT p.id, p.tenant_id, p.name, p.description, p.status, p.action, p.priority, p.conditions, p.created_at, p.updated_at,
  COALESCE((SELECT array_agg(pa.agent_id ORDER BY pa.agent_id) FROM policy_agents pa WHERE pa.policy_id = p.id), '{}') AS agents
  FROM policies p`;

export async function insertPolicy(db: Queryable, p: Omit<PolicyRow, "created_at" | "updated_at">): Promise<void> {
  await db.query(
    `INSERT INTO policies (id, tenant_id, name, description, status, action, priority, conditions) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [p.id, p.tenant_id, p.name, p.description, p.status, p.action, p.priority, JSON.stringify(p.conditions)],
  );
  for (const agentId of p.agents) {
    await db.query("INSERT INTO policy_agents (tenant_id, policy_id, agent_id) VALUES ($1, $2, $3)", [p.tenant_id, p.id, agentId]);
  }
}

export async function getPolicy(db: Queryable, tenantId: string, id: string): Promise<PolicyRow | undefined> {
  const r = await db.query<PolicyRow>(`${SELECT} WHERE p.tenant_id = $1 AND p.id = $2`, [tenantId, id]);
  return r.rows[0];
}

export async function listPolicies(db: Queryable, tenantId: string, q: { status?: string; agentId?: string } = {}): Promise<PolicyRow[]> {
  const params: unknown[] = [tenantId];
  let where = "p.tenant_id = $1";
  if (q.status) {
    params.push(q.status);
    where += ` AND p.status = $${params.length}`;
  }
  if (q.agentId) {
    params.push(q.agentId);
    // A policy applies to an agent when linked to it, or when it is tenant-wide (no links).
    where += ` AND (EXISTS (SELECT 1 FROM policy_agents x WHERE x.policy_id = p.id AND x.agent_id = $${params.length})
               OR NOT EXISTS (SELECT 1 FROM policy_agents y WHERE y.policy_id = p.id))`;
  }
  const r = await db.query<PolicyRow>(`${SELECT} WHERE ${where} ORDER BY p.created_at DESC, p.id DESC`, params);
  return r.rows;
}

export async function existingAgentIds(db: Queryable, tenantId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const r = await db.query<{ id: string }>("SELECT id FROM agents WHERE tenant_id = $1 AND id = ANY($2)", [tenantId, ids]);
  return new Set(r.rows.map((x) => x.id));
}

export async function existingPolicyIds(db: Queryable, tenantId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const r = await db.query<{ id: string }>("SELECT id FROM policies WHERE tenant_id = $1 AND id = ANY($2)", [tenantId, ids]);
  return new Set(r.rows.map((x) => x.id));
}
