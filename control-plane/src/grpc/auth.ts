// Authenticates a sidecar on the gRPC services: Bearer key of scope ingest or api, creator active.
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { hashApiKey, scopeOfKey } from "../domain/api-keys.js";
import type { Db } from "../stores/postgres/db.js";
import { findActiveKeyByHash, touchKey } from "../stores/postgres/identity-repo.js";

export interface SidecarPrincipal {
  tenantId: string;
  keyId: string;
}

/** The key of a well-formed `Bearer svc_…` authorization header, else undefined (no database involved). */
export function bearerKey(authorization: string | null | undefined): string | undefined {
  const key = /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1];
  return key && scopeOfKey(key) ? key : undefined;
}

export async function authenticateSidecar(db: Db, ctx: HandlerContext): Promise<SidecarPrincipal> {
  const key = bearerKey(ctx.requestHeader.get("authorization"));
  if (!key) throw new ConnectError("missing or invalid API key", Code.Unauthenticated);
  const row = await findActiveKeyByHash(db, hashApiKey(key));
  if (!row) throw new ConnectError("missing or invalid API key", Code.Unauthenticated);
  if (row.scope !== "ingest" && row.scope !== "api") throw new ConnectError("key scope may not sync or ingest", Code.PermissionDenied);
  await touchKey(db, row.key_id);
  return { tenantId: row.tenant_id, keyId: row.key_id };
}
