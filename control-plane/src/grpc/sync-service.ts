// Sync.Watch: a full snapshot (or a resume from the sidecar's version), then deltas as changes commit,
// with heartbeats so that a silently dropped stream is noticed.
import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { HeartbeatSchema, WatchResponseSchema, type WatchRequest, type WatchResponse } from "@agentgov/proto";
import type { Db } from "../stores/postgres/db.js";
import { changesSince, latestVersion, oldestVersion } from "../stores/postgres/sync-changes.js";
import type { SyncHub } from "../sync/hub.js";
import { buildDelta, buildSnapshot } from "../sync/snapshot.js";
import { authenticateSidecar } from "./auth.js";

export const HEARTBEAT_MS = 10_000;

export function syncHandlers(db: Db, hub: SyncHub) {
  return {
    async *watch(req: WatchRequest, ctx: HandlerContext): AsyncGenerator<WatchResponse> {
      const { tenantId } = await authenticateSidecar(db, ctx);
      let seen = hub.counter(tenantId);
      let version = Number(req.resumeFromVersion);
      const latest = await latestVersion(db, tenantId);
      const oldest = await oldestVersion(db, tenantId);
      // Resume only when every change after the sidecar's version is still held; else a full snapshot.
      const canResume = version > 0 && version <= latest && version >= oldest - 1;
      if (!canResume) {
        version = latest;
        const snapshot = await buildSnapshot(db, tenantId);
        yield create(WatchResponseSchema, { version: BigInt(version), kind: { case: "snapshot", value: snapshot } });
      }
      let lastSent = Date.now();
      while (!ctx.signal.aborted) {
        const changes = await changesSince(db, tenantId, version);
        if (changes.length > 0) {
          const delta = await buildDelta(db, tenantId, changes);
          version = changes[changes.length - 1]!.version;
          yield create(WatchResponseSchema, { version: BigInt(version), kind: { case: "delta", value: delta } });
          lastSent = Date.now();
          continue;
        }
        if (Date.now() - lastSent >= HEARTBEAT_MS) {
          yield create(WatchResponseSchema, {
            version: BigInt(version),
            kind: { case: "heartbeat", value: create(HeartbeatSchema, { serverTimeMs: BigInt(Date.now()) }) },
          });
          lastSent = Date.now();
        }
        const before = seen;
        await hub.wait(tenantId, before, Math.max(10, HEARTBEAT_MS - (Date.now() - lastSent)), ctx.signal);
        seen = hub.counter(tenantId);
      }
    },
  };
}
