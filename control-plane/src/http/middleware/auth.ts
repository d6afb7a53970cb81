// API-key authentication: Bearer key → SHA-256 → lookup by hash. Every request checks Postgres,
// so a deleted key or a deactivated user is refused on the very next request.
import type { Middleware } from "koa";
import { hashApiKey, scopeOfKey } from "../../domain/api-keys.js";
import { effectiveScopes } from "../../domain/permissions.js";
import { unauthorized } from "../../errors/app-error.js";
import type { Db } from "../../stores/postgres/db.js";
import { findActiveKeyByHash, touchKey } from "../../stores/postgres/identity-repo.js";
import type { AppState } from "../state.js";

const TOUCH_EVERY_MS = 60_000;

export function isPublicPath(path: string): boolean {
  return !(path.startsWith("/v1/") || path.startsWith("/api/")) || path === "/api/auth/webhook";
}

export function authenticate(db: Db): Middleware<AppState> {
  const lastTouched = new Map<string, number>();
  return async (ctx, next) => {
    if (isPublicPath(ctx.path)) return next();
    const header = ctx.get("authorization");
    const m = /^Bearer\s+(\S+)$/i.exec(header);
    const key = m?.[1];
    if (!key || !scopeOfKey(key)) throw unauthorized();
    const row = await findActiveKeyByHash(db, hashApiKey(key));
    if (!row) throw unauthorized();
    ctx.state.principal = {
      tenantId: row.tenant_id,
      keyId: row.key_id,
      keyScope: row.scope,
      userId: row.user_id,
      userRole: row.role,
      teamScopes: effectiveScopes(row.role, row.team_scopes),
    };
    // lastUsedAt is coalesced to at most one write a minute per key (DESIGN.md §3).
    const now = Date.now();
    if ((lastTouched.get(row.key_id) ?? 0) < now - TOUCH_EVERY_MS) {
      lastTouched.set(row.key_id, now);
      if (lastTouched.size > 100_000) lastTouched.clear();
      await touchKey(db, row.key_id);
    }
    await next();
  };
}
