// A write answers once the sidecars connected to this replica have applied what it changed. Keys,
// agents and policies reach the sidecars over Sync within milliseconds anyway; waiting for that here
// makes it an ordering the caller can rely on: after `DELETE /api/keys/:id` (or pausing an agent, or a
// new block policy) answers, the caller's next proxy call meets the new state, and after
// `POST /api/keys` the new key works at the sidecar at once. "Applied" is the sidecar's Sync.Ack (its
// new state is swapped in); a sidecar that does not ack (an older one, or one whose Acks do not reach
// this replica) counts once its stream was handed the change (SyncHub.delivered). One indexed query (the
// tenant's newest change version) plus the wait, bounded by SYNC_DELIVERY_WAIT_MS so that a stuck
// stream or a silent sidecar never holds the answer. Streams of other replicas are woken by NOTIFY and
// are not waited for; sidecars whose stream ended without a goodbye (a restart, a drop, a dead replica)
// are, until they are back and have acked, or are forgotten (sync/remembered.ts).
import type { Middleware } from "koa";
import type { Deps } from "../deps.js";
import type { AppState } from "../state.js";
import { latestVersion } from "../../stores/postgres/sync-changes.js";
import { SYNC_DELIVERY_WAIT_MS } from "../../sync/hub.js";
import { outageCause, outageOf } from "../../errors/database-unavailable.js";

const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export function awaitSyncDelivery(deps: Deps): Middleware<AppState> {
  return async (ctx, next) => {
    await next();
    const sync = deps.sync;
    const tenantId = ctx.state.principal?.tenantId;
    if (!sync || tenantId === undefined || !WRITES.has(ctx.method) || ctx.status >= 400) return;
    let version: number;
    try {
      version = await latestVersion(deps.db, tenantId);
    } catch (e) {
      // The write is committed: Postgres going away now must not turn its answer into an error (a 503
      // would have the client send it again). The Sync streams read the change once Postgres is back.
      if (outageOf(e) === undefined) throw e;
      deps.log.warn({ requestId: ctx.state.requestId, cause: outageCause(e) }, "database unavailable after a write: answering without waiting for Sync delivery");
      return;
    }
    await sync.delivered(tenantId, version, SYNC_DELIVERY_WAIT_MS);
  };
}
