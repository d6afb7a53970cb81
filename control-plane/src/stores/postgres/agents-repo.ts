// Agents, their deployment history and their policy links.
import type { Queryable } from "./db.js";

export interface AgentRow {
  id: string;
  tenant_id: string;
  name: string;
  description: string | null;
  model_provider: string;
  model_name: string;
  environment: string;
  status: "active" | "paused" | "archived";
  config_yaml: string;
  created_at: Date;
  updated_at: Date;
}

const COLS = "id, tenant_id, name, description, model_provider, model_name, environment, status, config_yaml, created_at, updated_at";

export async function insertAgent(db: Queryable, a: Omit<AgentRow, "created_at" | "updated_at" | "status">): Promise<AgentRow> {
  const r = await db.query<AgentRow>(
    `INSERT INTO agents (id, tenant_id, name, description, model_provider, model_name, environment, config_yaml)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLS}`,
    [a.id, a.tenant_id, a.name, a.description, a.model_provider, a.model_name, a.environment, a.config_yaml],
  );
  return r.rows[0]!;
}

export async function getAgent(db: Queryable, tenantId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<AgentRow | undefined> {
  const r = await db.query<AgentRow>(`SELECT ${COLS} FROM agents WHERE tenant_id = $1 AND id = $2${opts.forUpdate ? " FOR UPDATE" : ""}`, [tenantId, id]);
  return r.rows[0];
}

export type AgentPatch = Partial<Pick<AgentRow, "name" | "description" | "model_provider" | "model_name" | "environment" | "status" | "config_yaml">>;

const PATCHABLE: readonly (keyof AgentPatch)[] = ["name", "description", "model_provider", "model_name", "environment", "status", "config_yaml"];

/** Writes the given fields (and updated_at); returns the row as stored. */
export async function updateAgent(db: Queryable, tenantId: string, id: string, patch: AgentPatch): Promise<AgentRow | undefined> {
  const sets: string[] = [];
  const params: unknown[] = [tenantId, id];
  for (const k of PATCHABLE) {
    if (patch[k] === undefined) continue;
    params.push(patch[k]);
    sets.push(`${k} = $${params.length}`);
  }
  sets.push("updated_at = now()");
  const r = await db.query<AgentRow>(`UPDATE agents SET ${sets.join(", ")} WHERE tenant_id = $1 AND id = $2 RETURNING ${COLS}`, params);
  return r.rows[0];
}

export async function agentNameTaken(db: Queryable, tenantId: string, name: string, exceptId?: string): Promise<boolean> {
  const r = await db.query("SELECT 1 FROM agents WHERE tenant_id = $1 AND name = $2 AND id <> $3", [tenantId, name, exceptId ?? ""]);
  return (r.rowCount ?? 0) > 0;
}

/** Keyset page, newest first; `after` is the last (created_at ms, id) seen. */
export async function listAgentsKeyset(
  db: Queryable,
  tenantId: string,
  q: { status?: string; limit: number; after?: { t: number; id: string } },
): Promise<AgentRow[]> {
  const params: unknown[] = [tenantId];
  let where = "tenant_id = $1";
  if (q.status) {
    params.push(q.status);
    where += ` AND status = $${params.length}`;
  }
  if (q.after) {
    params.push(new Date(q.after.t), q.after.id);
    // The cursor carries milliseconds while Postgres keeps microseconds: compare and order on the
    // truncated value, so rows sharing a millisecond are split by id and never skipped or repeated.
    where += ` AND (date_trunc('milliseconds', created_at), id COLLATE "C") < ($${params.length - 1}::timestamptz, $${params.length}::text COLLATE "C")`;
  }
  params.push(q.limit);
  const r = await db.query<AgentRow>(
    `SELECT ${COLS} FROM agents WHERE ${where} ORDER BY date_trunc('milliseconds', created_at) DESC, id COLLATE "C" DESC LIMIT $${params.length}`,
    params,
  );
  return r.rows;
}

export async function listAgentsOffset(
  db: Queryable,
  tenantId: string,
  q: { environment?: string; limit: number; offset: number },
): Promise<{ rows: AgentRow[]; total: number }> {
  const params: unknown[] = [tenantId];
  let where = "tenant_id = $1";
  if (q.environment !== undefined) {
    params.push(q.environment);
    where += ` AND environment = $${params.length}`;
  }
  const total = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM agents WHERE ${where}`, params);
  const r = await db.query<AgentRow>(
    `SELECT ${COLS} FROM agents WHERE ${where} ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, q.limit, q.offset],
  );
  return { rows: r.rows, total: total.rows[0]?.n ?? 0 };
}

export async function allAgents(db: Queryable, tenantId: string): Promise<AgentRow[]> {
  const r = await db.query<AgentRow>(`SELECT ${COLS} FROM agents WHERE tenant_id = $1`, [tenantId]);
  return r.rows;
}

export async function insertDeployment(
  db: Queryable,
  d: { id: string; tenantId: string; agentId: string; configYaml: string; deployedBy: string },
): Promise<void> {
  await db.query(
    `INSERT INTO agent_deployments (id, tenant_id, agent_id, version, config_yaml, deployed_by)
     VALUES ($1, $2, $3, COALESCE((SELECT max(version) FROM agent_deployments WHERE agent_id = $3), 0) + 1, $4, $5)`,
    [d.id, d.tenantId, d.agentId, d.configYaml, d.deployedBy],
  );
}

export interface DeploymentRow {
  id: string;
  agent_id: string;
  version: number;
  config_yaml: string;
  deployed_by: string;
  deployed_at: Date;
}

/** Deployment history, most recent first. */
export async function listDeployments(db: Queryable, tenantId: string, agentId: string, q: { limit: number; offset: number }): Promise<{ rows: DeploymentRow[]; total: number }> {
  const [total, rows] = await Promise.all([
    db.query<{ n: number }>("SELECT count(*)::int AS n FROM agent_deployments WHERE tenant_id = $1 AND agent_id = $2", [tenantId, agentId]),
    db.query<DeploymentRow>(
      `SELECT id, agent_id, version, config_yaml, deployed_by, deployed_at FROM agent_deployments
       WHERE tenant_id = $1 AND agent_id = $2 ORDER BY version DESC LIMIT $3 OFFSET $4`,
      [tenantId, agentId, q.limit, q.offset],
    ),
  ]);
  return { rows: rows.rows, total: total.rows[0]?.n ?? 0 };
}

export interface ToolRow {
  id: string;
  agent_id: string;
  tool_name: string;
  call_count: number;
  last_called_at: Date;
}

/** Tools an agent called through the proxy, most recently called first. */
export async function listTools(db: Queryable, tenantId: string, agentId: string, q: { limit: number; offset: number }): Promise<{ rows: ToolRow[]; total: number }> {
  const [total, rows] = await Promise.all([
    db.query<{ n: number }>("SELECT count(*)::int AS n FROM agent_tools WHERE tenant_id = $1 AND agent_id = $2", [tenantId, agentId]),
    db.query<ToolRow>(
      `SELECT id, agent_id, tool_name, call_count, last_called_at FROM agent_tools
       WHERE tenant_id = $1 AND agent_id = $2 ORDER BY last_called_at DESC, id COLLATE "C" DESC LIMIT $3 OFFSET $4`,
      [tenantId, agentId, q.limit, q.offset],
    ),
  ]);
  return { rows: rows.rows, total: total.rows[0]?.n ?? 0 };
}

export async function linkedPolicyIds(db: Queryable, agentId: string): Promise<string[]> {
  const r = await db.query<{ policy_id: string }>('SELECT policy_id FROM policy_agents WHERE agent_id = $1 ORDER BY policy_id COLLATE "C"', [agentId]);
  return r.rows.map((x) => x.policy_id);
}

export async function linksForAgents(db: Queryable, tenantId: string): Promise<Map<string, string[]>> {
  const r = await db.query<{ agent_id: string; policy_id: string }>(
    'SELECT agent_id, policy_id FROM policy_agents WHERE tenant_id = $1 ORDER BY policy_id COLLATE "C"',
    [tenantId],
  );
  // One pass, appending in place (copying an agent's list on each of its links was quadratic per agent).
  const m = new Map<string, string[]>();
  for (const row of r.rows) {
    const list = m.get(row.agent_id);
    if (list) list.push(row.policy_id);
    else m.set(row.agent_id, [row.policy_id]);
  }
  return m;
}
