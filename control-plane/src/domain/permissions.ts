// Who may call what (DESIGN.md §3): the key's scope AND the key creator's effective team scopes.
import type { KeyScope } from "./api-keys.js";

export const TEAM_SCOPES = [
  "agents:read", "agents:write", "policies:read", "policies:write", "traces:read", "costs:read", "costs:write",
  "teams:read", "teams:write", "keys:read", "keys:write", "compliance:read", "audit:read",
] as const;
export type TeamScope = (typeof TEAM_SCOPES)[number];

export type UserRole = "admin" | "member";

export interface Principal {
  tenantId: string;
  keyId: string;
  keyScope: KeyScope;
  userId: string;
  userRole: UserRole;
  /** Union of the scopes of the user's teams, with X:write implying X:read. Admins hold every scope. */
  teamScopes: ReadonlySet<TeamScope>;
}

/**
 * The areas an `agent` key may read (it never writes). The spec gives it "read-only access to agents
 * and traces": trace statistics (`GET /api/traces/stats`, whose team scope is `costs:read`) are a read
 * of traces, so `costs` reads pass the key check too — the key's creator must still hold `costs:read`.
 */
const READ_ONLY_AREAS_FOR_AGENT_KEYS = new Set(["agents", "traces", "policies", "costs"]);

export function keyScopeAllows(scope: KeyScope, need: TeamScope): boolean {
  if (scope === "api") return true;
  if (scope === "ingest") return false; // proxy, Sync and Ingest only
  const [area, mode] = need.split(":") as [string, string];
  return mode === "read" && READ_ONLY_AREAS_FOR_AGENT_KEYS.has(area);
}

export function effectiveScopes(role: UserRole, teamScopeLists: readonly (readonly string[])[]): Set<TeamScope> {
  if (role === "admin") return new Set(TEAM_SCOPES);
  const out = new Set<TeamScope>();
  for (const list of teamScopeLists) {
    for (const s of list) {
      if (!(TEAM_SCOPES as readonly string[]).includes(s)) continue;
      out.add(s as TeamScope);
      if (s.endsWith(":write")) {
        const read = s.replace(/:write$/, ":read");
        if ((TEAM_SCOPES as readonly string[]).includes(read)) out.add(read as TeamScope);
      }
    }
  }
  return out;
}

export function allowed(p: Principal, need: TeamScope): boolean {
  return keyScopeAllows(p.keyScope, need) && p.teamScopes.has(need);
}
