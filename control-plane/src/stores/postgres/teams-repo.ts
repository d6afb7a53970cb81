// Teams, their scopes and members (group B /api/teams).
import type { Queryable } from "./db.js";

export interface TeamRow {
  id: string;
  name: string;
  description: string | null;
  scopes: string[];
  member_count: number;
  created_at: Date;
}

export interface MemberRow {
  user_id: string;
  email: string;
  role: "admin" | "member";
  joined_at: Date;
}

const TEAM_SELECT = `SELECT t.id, t.name, t.description, t.scopes, t.created_at,
  (SELECT count(*)::int FROM team_members m WHERE m.team_id = t.id) AS member_count
  FROM teams t`;

export async function listTeams(db: Queryable, tenantId: string, q: { limit: number; offset: number }): Promise<{ rows: TeamRow[]; total: number }> {
  const [rows, total] = await Promise.all([
    db.query<TeamRow>(`${TEAM_SELECT} WHERE t.tenant_id = $1 ORDER BY t.created_at DESC, t.id DESC LIMIT $2 OFFSET $3`, [tenantId, q.limit, q.offset]),
    db.query<{ n: number }>("SELECT count(*)::int AS n FROM teams WHERE tenant_id = $1", [tenantId]),
  ]);
  return { rows: rows.rows, total: total.rows[0]?.n ?? 0 };
}

export async function getTeam(db: Queryable, tenantId: string, teamId: string): Promise<TeamRow | undefined> {
  const r = await db.query<TeamRow>(`${TEAM_SELECT} WHERE t.tenant_id = $1 AND t.id = $2`, [tenantId, teamId]);
  return r.rows[0];
}

/** Locks the team row for the rest of the transaction (membership and scope changes serialize on it). */
export async function lockTeam(db: Queryable, tenantId: string, teamId: string): Promise<{ id: string; scopes: string[] } | undefined> {
  const r = await db.query<{ id: string; scopes: string[] }>("SELECT id, scopes FROM teams WHERE tenant_id = $1 AND id = $2 FOR UPDATE", [tenantId, teamId]);
  return r.rows[0];
}

/** Inserts a team; undefined when the tenant already has a team of that name. */
export async function insertTeam(db: Queryable, t: { id: string; tenantId: string; name: string; description: string | null }): Promise<TeamRow | undefined> {
  const r = await db.query<TeamRow>(
    `INSERT INTO teams (id, tenant_id, name, description) VALUES ($1, $2, $3, $4)
     ON CONFLICT (tenant_id, lower(name)) DO NOTHING
     RETURNING id, name, description, scopes, created_at, 0 AS member_count`,
    [t.id, t.tenantId, t.name, t.description],
  );
  return r.rows[0];
}

export async function setTeamScopes(db: Queryable, tenantId: string, teamId: string, scopes: readonly string[]): Promise<void> {
  await db.query("UPDATE teams SET scopes = $3 WHERE tenant_id = $1 AND id = $2", [tenantId, teamId, scopes]);
}

export async function listMembers(db: Queryable, teamId: string, q: { limit: number; offset: number }): Promise<{ rows: MemberRow[]; total: number }> {
  const [rows, total] = await Promise.all([
    db.query<MemberRow>(
      `SELECT m.user_id, u.email, m.role, m.joined_at FROM team_members m JOIN users u ON u.id = m.user_id
        WHERE m.team_id = $1 ORDER BY m.joined_at DESC, m.user_id DESC LIMIT $2 OFFSET $3`,
      [teamId, q.limit, q.offset],
    ),
    db.query<{ n: number }>("SELECT count(*)::int AS n FROM team_members WHERE team_id = $1", [teamId]),
  ]);
  return { rows: rows.rows, total: total.rows[0]?.n ?? 0 };
}

/** Adds a member; undefined when the user already belongs to the team. */
export async function insertMember(
  db: Queryable,
  m: { tenantId: string; teamId: string; userId: string; role: "admin" | "member" },
): Promise<{ joined_at: Date } | undefined> {
  const r = await db.query<{ joined_at: Date }>(
    `INSERT INTO team_members (team_id, user_id, tenant_id, role) VALUES ($1, $2, $3, $4)
     ON CONFLICT (team_id, user_id) DO NOTHING RETURNING joined_at`,
    [m.teamId, m.userId, m.tenantId, m.role],
  );
  return r.rows[0];
}

export async function deleteMember(db: Queryable, tenantId: string, teamId: string, userId: string): Promise<boolean> {
  const r = await db.query("DELETE FROM team_members WHERE tenant_id = $1 AND team_id = $2 AND user_id = $3", [tenantId, teamId, userId]);
  return (r.rowCount ?? 0) > 0;
}

/**
 * The member of a team with this e-mail (case-insensitive; an active user first, then the oldest): a
 * removal by e-mail names a member, not whichever user of the tenant holds the address.
 */
export async function findMemberByEmail(db: Queryable, tenantId: string, teamId: string, email: string): Promise<string | undefined> {
  const r = await db.query<{ id: string }>(
    `SELECT u.id FROM team_members m JOIN users u ON u.id = m.user_id AND u.tenant_id = m.tenant_id
      WHERE m.tenant_id = $1 AND m.team_id = $2 AND lower(u.email) = lower($3)
      ORDER BY (u.status = 'active') DESC, u.created_at, u.id LIMIT 1`,
    [tenantId, teamId, email],
  );
  return r.rows[0]?.id;
}

/** Removes a user from every team (user.deleted); returns the team ids. */
export async function deleteMembershipsOfUser(db: Queryable, tenantId: string, userId: string): Promise<string[]> {
  const r = await db.query<{ team_id: string }>("DELETE FROM team_members WHERE tenant_id = $1 AND user_id = $2 RETURNING team_id", [tenantId, userId]);
  return r.rows.map((x) => x.team_id);
}
