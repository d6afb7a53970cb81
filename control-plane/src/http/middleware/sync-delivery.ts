// A write answers once the sidecars connected to this replica have been sent what it changed. Keys,
// agents and policies reach the sidecars over Sync within milliseconds anyway; waiting for that here
// makes it an ordering the caller can rely on: after `DELETE /api/keys/:id` (or pausing an agent, or a
// new block policy) answers, the caller's next proxy call meets the new state, and after
// `POST /api/keys` the new key works at the sidecar at once. One indexed query (the tenant's newest
// change version) plus the wait, bounded by SYNC_DELIVERY_WAIT_MS so that a stuck stream never
// holds the answer. Streams of other replicas are woken by NOTIFY and are not waited for.
import type { Middleware } from "koa";
import type { Deps } from "../deps.js";
import type { AppState } from "../state.js";
import { latestVersion } from "../../stores/postgres/sync-changes.js";
import { SYNC_DELIVERY_WAIT_MS } from "../../sync/hub.js";

const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export function awaitSyncDelivery(deps: Deps): Middleware<AppState> {
  return async (ctx, next) => {
    await next();
    const sync = deps.sync;
    const tenantId = ctx.state.principal?.tenantId;
    if (!sync || tenantId === undefined || !WRITES.has(ctx.method) || ctx.status >= 400) return;
    await sync.delivered(tenantId, await latestVersion(deps.db, tenantId), SYNC_DELIVERY_WAIT_MS);
  };
}
