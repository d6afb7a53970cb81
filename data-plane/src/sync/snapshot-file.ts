// The last good governance state on disk, so a sidecar can start and enforce while the control plane
// is unreachable (fail static). Written atomically: temp file, fsync, rename.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, statSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { SnapshotSchema, WatchResponseSchema } from "@agentgov/proto";
import { fromSnapshot, type GovernanceState } from "../state/governance-state.js";

export function saveSnapshot(path: string, s: GovernanceState): void {
  mkdirSync(dirname(path), { recursive: true });
  const msg = create(WatchResponseSchema, {
    version: s.version,
    kind: {
      case: "snapshot",
      value: create(SnapshotSchema, {
        tenantId: s.tenantId,
        agents: [...s.agents.values()],
        policies: [...s.policies.values()],
        keys: [...s.keysByHash.values()],
        spend: [...s.spend.values()],
      }),
    },
  });
  const bytes = toBinary(WatchResponseSchema, msg);
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, "w", 0o600);
  try {
    writeSync(fd, bytes);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

export function loadSnapshot(path: string): { state: GovernanceState; savedAtMs: number } | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const msg = fromBinary(WatchResponseSchema, readFileSync(path));
    if (msg.kind.case !== "snapshot") return undefined;
    return { state: fromSnapshot(msg.version, msg.kind.value), savedAtMs: statSync(path).mtimeMs };
  } catch {
    return undefined;
  }
}
