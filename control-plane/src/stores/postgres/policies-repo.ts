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
  COALESCE((SELECT array_agg(pa.agent_id ORDER BY pa.agent_id COLLATE "C") FROM policy_agents pa WHERE pa.policy_id = p.id), '{}') AS agents
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
  const r = await db.query<PolicyRow>(`${SELECT} WHERE ${where} ORDER BY p.created_at DESC, p.id COLLATE "C" DESC`, params);
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

export type PolicyPatch = Partial<Pick<PolicyRow, "name" | "description" | "status" | "action" | "priority" | "conditions">>;

/** Writes the given top-level fields (conditions replaced whole) and updated_at. */
export async function updatePolicy(db: Queryable, tenantId: string, id: string, patch: PolicyPatch): Promise<void> {
  const sets: string[] = [];
  const params: unknown[] = [tenantId, id];
  for (const k of ["name", "description", "status", "action", "priority"] as const) {
    if (patch[k] === undefined) continue;
    params.push(patch[k]);
    sets.push(`${k} = $${params.length}`);
  }
  if (patch.conditions !== undefined) {
    params.push(JSON.stringify(patch.conditions));
    sets.push(`conditions = $${params.length}::jsonb`);
  }
  sets.push("updated_at = now()");
  await db.query(`UPDATE policies SET ${sets.join(", ")} WHERE tenant_id = $1 AND id = $2`, params);
}

export async function touchPolicy(db: Queryable, tenantId: string, id: string): Promise<void> {
  await db.query("UPDATE policies SET updated_at = now() WHERE tenant_id = $1 AND id = $2", [tenantId, id]);
}

/** Deletes a policy and its agent links; true when it existed. */
export async function deletePolicy(db: Queryable, tenantId: string, id: string): Promise<boolean> {
  const r = await db.query("DELETE FROM policies WHERE tenant_id = $1 AND id = $2", [tenantId, id]);
  return (r.rowCount ?? 0) > 0;
}

export async function insertLinks(db: Queryable, tenantId: string, pairs: readonly { policyId: string; agentId: string }[]): Promise<void> {
  if (pairs.length === 0) return;
  await db.query(
    "INSERT INTO policy_agents (tenant_id, policy_id, agent_id) SELECT $1, unnest($2::text[]), unnest($3::text[]) ON CONFLICT DO NOTHING",
    [tenantId, pairs.map((p) => p.policyId), pairs.map((p) => p.agentId)],
  );
}

export async function deleteLinks(db: Queryable, tenantId: string, pairs: readonly { policyId: string; agentId: string }[]): Promise<void> {
  if (pairs.length === 0) return;
  await db.query(
    "DELETE FROM policy_agents WHERE tenant_id = $1 AND (policy_id, agent_id) IN (SELECT unnest($2::text[]), unnest($3::text[]))",
    [tenantId, pairs.map((p) => p.policyId), pairs.map((p) => p.agentId)],
  );
}

/** Number of agents linked to each of the given policies (0 for tenant-wide ones). */
export async function linkCounts(db: Queryable, tenantId: string, policyIds: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>(policyIds.map((id) => [id, 0]));
  if (policyIds.length === 0) return out;
  const r = await db.query<{ policy_id: string; n: number }>(
    "SELECT policy_id, count(*)::int AS n FROM policy_agents WHERE tenant_id = $1 AND policy_id = ANY($2) GROUP BY policy_id",
    [tenantId, policyIds],
  );
  for (const row of r.rows) out.set(row.policy_id, row.n);
  return out;
}
