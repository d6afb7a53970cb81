// Sync.Watch: a full snapshot, or — when the sidecar sends a version this database still holds the
// changes after — a resume (a heartbeat at once, then deltas only); then deltas as changes commit, and a
// heartbeat every HEARTBEAT_MS so that a silently dropped stream is noticed by the sidecar.
//
// Versions: every message carries a version V meaning "every change of this tenant numbered ≤ V has
// been sent". Streams only read up to the settled version (sync/settled-version.ts), so a change whose
// transaction commits after a later-numbered one is never skipped, and V is always safe to resume from.
// Versions strictly increase from one delta to the next.
//
// Sync.Ack: a sidecar whose WatchRequest said `acks_applied` reports the version it serves once it has
// swapped that state in; the hub then counts the stream as delivered only once applied (sync/hub.ts,
// what REST writes wait for). The Ack names the stream by sidecar id and carries the stream's key: it
// counts only for streams opened with the same key (hence the same tenant); one that reaches a replica
// holding no such stream (a proxy balancing each call on its own) is passed on to the others by NOTIFY.
// An Ack with `leaving` is the sidecar's goodbye (it is stopping): it is forgotten rather than waited for
// until it reconnects (sync/hub.ts remembers the sidecars whose stream ended otherwise).
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { AckResponseSchema, HeartbeatSchema, WatchResponseSchema, type AckRequest, type AckResponse, type Delta, type Snapshot, type WatchRequest, type WatchResponse } from "@agentgov/proto";
import { hashApiKey } from "../domain/api-keys.js";
import type { ChangeRow } from "../stores/postgres/sync-changes.js";
import type { Db } from "../stores/postgres/db.js";
import type { StreamTracker, SyncHub } from "../sync/hub.js";
import { buildDelta, buildSnapshot } from "../sync/snapshot.js";
import { SettledVersion } from "../sync/settled-version.js";
import { SnapshotCache } from "../sync/snapshot-cache.js";
import { CHANGES_PAGE, canResume, changesBetween } from "../sync/change-window.js";
import { authenticateSidecar, bearerKey } from "./auth.js";

export const HEARTBEAT_MS = 10_000;
/** Re-check soon when NOTIFY announced a change the settled version has not reached yet. */
const BEHIND_RETRY_MS = 50;

const heartbeat = (version: number): WatchResponse =>
  create(WatchResponseSchema, {
    version: BigInt(version),
    kind: { case: "heartbeat", value: create(HeartbeatSchema, { serverTimeMs: BigInt(Date.now()) }) },
  });

export interface SyncOptions {
  onSlowSettle?: (waitedMs: number, writers: number) => void;
  /** Test seam: builds a tenant's snapshot (default: buildSnapshot on db). */
  buildSnapshot?: (tenantId: string) => Promise<Snapshot>;
  /** Test seam: receives the snapshot cache (its `builds` counts the snapshots built). */
  onSnapshotCache?: (cache: SnapshotCache) => void;
}

export function syncHandlers(db: Db, hub: SyncHub, opts: SyncOptions = {}) {
  const settled = new SettledVersion(db, opts.onSlowSettle);
  // Streams needing a snapshot share one build per tenant, at most MAX_BUILDS at once (sync/snapshot-cache.ts).
  const snapshots = new SnapshotCache(opts.buildSnapshot ?? ((tenantId) => buildSnapshot(db, tenantId)));
  opts.onSnapshotCache?.(snapshots);
  // The streams of one tenant wake together for the same window of changes: they share one read of the
  // change log and one delta (50 sidecars cost 2 queries, not 100), which keeps revocation fast.
  const windows = new Map<string, Promise<{ changes: ChangeRow[]; delta: Delta | undefined }>>();
  const windowDelta = (tenantId: string, after: number, upTo: number) => {
    const k = `${tenantId}:${after}:${upTo}`;
    let p = windows.get(k);
    if (!p) {
      const made = (async () => {
        const changes = await changesBetween(db, tenantId, after, upTo);
        return { changes, delta: changes.length > 0 ? await buildDelta(db, tenantId, changes) : undefined };
      })();
      p = made;
      windows.set(k, made);
      const forget = () => {
        if (windows.get(k) === made) windows.delete(k);
      };
      made.then(() => setTimeout(forget, 1000).unref(), forget);
    }
    return p;
  };
  return {
    async *watch(req: WatchRequest, ctx: HandlerContext): AsyncGenerator<WatchResponse> {
      const { tenantId, keyId } = await authenticateSidecar(db, ctx);
      const keyHash = hashApiKey(bearerKey(ctx.requestHeader.get("authorization")) ?? "");
      const tracker = hub.track(tenantId, { sidecarId: req.sidecarId, keyId, keyHash, acksApplied: req.acksApplied });
      try {
        yield* stream(tenantId, keyId, req, ctx, tracker);
      } finally {
        tracker.close();
      }
    },

    async ack(req: AckRequest, ctx: HandlerContext): Promise<AckResponse> {
      // The key of an acking stream this replica holds for that sidecar was authenticated when the stream
      // opened (and the stream ends once it sends the key's removal): no query per Ack, which every
      // sidecar of the tenant sends after each write. Any other key is authenticated as Watch does it.
      const key = bearerKey(ctx.requestHeader.get("authorization"));
      const known = key && req.sidecarId !== "" ? hub.ackingStream(req.sidecarId, hashApiKey(key)) : undefined;
      const { tenantId, keyId } = known ?? (await authenticateSidecar(db, ctx));
      const version = Number(req.version);
      if (hub.ack(tenantId, keyId, req.sidecarId, version) === 0) await hub.forwardAck(db, tenantId, keyId, req.sidecarId, version);
      if (req.leaving && req.sidecarId !== "") hub.leave(tenantId, keyId, req.sidecarId);
      return create(AckResponseSchema, {});
    },
  };

  /** The stream of one sidecar; `tracker.sent(v, …)` after each message that covers version v. */
  async function* stream(tenantId: string, keyId: string, req: WatchRequest, ctx: HandlerContext, tracker: StreamTracker): AsyncGenerator<WatchResponse> {
    let seen = hub.counter(tenantId);
    let upTo = await settled.next();
    const from = Number(req.resumeFromVersion);
    let version: number;
    if (await canResume(db, from, upTo)) {
      version = from;
      yield heartbeat(version);
    } else {
      // A shared snapshot may carry a version below upTo: the loop below then sends the deltas after it.
      const shared = await snapshots.get(tenantId, upTo);
      version = shared.version;
      yield shared.message;
    }
    tracker.sent(version, true);
    let lastSent = Date.now();
    while (!ctx.signal.aborted) {
      if (upTo > version) {
        const { changes, delta } = await windowDelta(tenantId, version, upTo);
        const full = changes.length === CHANGES_PAGE;
        if (delta) {
          version = full ? changes[changes.length - 1]!.version : upTo;
          yield create(WatchResponseSchema, { version: BigInt(version), kind: { case: "delta", value: delta } });
          tracker.sent(version, true);
          lastSent = Date.now();
          // The sidecar's own key was deleted (or its user deactivated): end the stream now rather
          // than at the next reconnect; the sidecar keeps retrying and is refused until it has a valid key.
          if (delta.removedKeyIds.includes(keyId)) {
            tracker.revoked(); // it cannot come back with this key: not waited for
            throw new ConnectError("this sidecar's key was revoked", Code.Unauthenticated);
          }
          if (full) continue;
        }
        version = upTo;
        tracker.sent(version, false); // nothing of this tenant in the window: nothing to deliver up to upTo
      }
      if (Date.now() - lastSent >= HEARTBEAT_MS) {
        yield heartbeat(version);
        lastSent = Date.now();
      }
      const behind = hub.latestNotified(tenantId) > version;
      await hub.wait(tenantId, seen, behind ? BEHIND_RETRY_MS : Math.max(10, HEARTBEAT_MS - (Date.now() - lastSent)), ctx.signal);
      seen = hub.counter(tenantId);
      if (ctx.signal.aborted) break;
      upTo = await settled.next();
    }
  }
}
