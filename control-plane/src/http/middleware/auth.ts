// API-key authentication: Bearer key → SHA-256 → lookup by hash. Every request checks Postgres,
// so a deleted key or a deactivated user is refused on the very next request.
import type { Middleware } from "koa";
import { hashApiKey, scopeOfKey } from "../../domain/api-keys.js";
import { effectiveScopes } from "../../domain/permissions.js";
import { unauthorized } from "../../errors/app-error.js";
import type { Db } from "../../stores/postgres/db.js";
import { findActiveKeyByHash, touchKey } from "../../stores/postgres/identity-repo.js";
import type { AppState } from "../state.js";
import { WEBHOOK_PATH } from "../routes/api/webhook.js";

const TOUCH_EVERY_MS = 60_000;

// The router serves a path with one trailing slash as well, so the webhook is public in both spellings.
const PUBLIC_GROUP_PATHS = new Set([WEBHOOK_PATH, `${WEBHOOK_PATH}/`]);

/** Paths served without an API key. Case-sensitive, as routing is (app.ts): /API/… is no group path. */
export function isPublicPath(path: string): boolean {
  return !(path.startsWith("/v1/") || path.startsWith("/api/")) || PUBLIC_GROUP_PATHS.has(path);
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
