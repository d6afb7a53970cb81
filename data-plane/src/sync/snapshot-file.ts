// The last good governance state on disk, so a sidecar can start and enforce while the control plane
// is unreachable (fail static). Written atomically (temp file, fsync, rename) off the request path:
// `SnapshotWriter` coalesces bursts of deltas into one write of the newest state. The file's mtime is
// the last time the control plane confirmed the state (a write, or a touch on each heartbeat), so the
// snapshot's age survives a restart.
import { existsSync, readFileSync, statSync } from "node:fs";
import { mkdir, open, rename, utimes, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { SnapshotSchema, WatchResponseSchema } from "@agentgov/proto";
import { fromSnapshot, type GovernanceState } from "../state/governance-state.js";

/** The file beside the snapshot that holds the newest spend figures (SnapshotWriter.save). */
export const spendPathOf = (snapshotPath: string): string => `${snapshotPath}.spend`;

/** The state's spend figures alone, as a snapshot message (version and tenant kept, nothing else). */
function encodeSpend(s: GovernanceState): Uint8Array {
  return toBinary(
    WatchResponseSchema,
    create(WatchResponseSchema, { version: s.version, kind: { case: "snapshot", value: create(SnapshotSchema, { tenantId: s.tenantId, spend: [...s.spend.values()] }) } }),
  );
}

/**
 * The spend figures written beside the snapshot after it: each agent's figure is the later day's, or on
 * the same day the higher (figures only grow within a day; the higher errs toward refusing).
 */
function withNewerSpend(state: GovernanceState, spendPath: string): GovernanceState {
  if (!existsSync(spendPath)) return state;
  try {
    const msg = fromBinary(WatchResponseSchema, readFileSync(spendPath));
    if (msg.kind.case !== "snapshot" || msg.kind.value.tenantId !== state.tenantId) return state;
    const spend = new Map(state.spend);
    for (const x of msg.kind.value.spend) {
      const have = spend.get(x.agentId);
      if (!have || x.day > have.day || (x.day === have.day && x.spentUsd > have.spentUsd)) spend.set(x.agentId, x);
    }
    return { ...state, spend };
  } catch {
    return state; // a damaged spend file: the snapshot's figures
  }
}

export function encodeSnapshot(s: GovernanceState): Uint8Array {
  return toBinary(
    WatchResponseSchema,
    create(WatchResponseSchema, {
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
    }),
  );
}

export async function saveSnapshot(path: string, s: GovernanceState): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.tmp`;
  const fh = await open(tmp, "w", 0o600);
  try {
    await fh.write(encodeSnapshot(s));
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
}

export function loadSnapshot(path: string): { state: GovernanceState; savedAtMs: number } | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const msg = fromBinary(WatchResponseSchema, readFileSync(path));
    if (msg.kind.case !== "snapshot") return undefined;
    return { state: withNewerSpend(fromSnapshot(msg.version, msg.kind.value), spendPathOf(path)), savedAtMs: statSync(path).mtimeMs };
  } catch {
    return undefined;
  }
}

/** How long a spend-only change may wait before the snapshot file is rewritten (SnapshotWriter.save). */
export const SPEND_PERSIST_DELAY_MS = 5_000;

/**
 * Persists the newest state handed to it, one write at a time; `touch` records a confirmation without
 * rewriting. A change of agents, policies or keys is written at once (a revoked key or a new block policy
 * must hold after a restart without the control plane); a change of spend figures only (the control
 * plane sends one after each ingest batch, many per second under load) waits up to
 * SPEND_PERSIST_DELAY_MS and is written with whatever came after it: rewriting the whole state each
 * time cost the sidecar's event loop a file create, fsync and rename per batch. Meanwhile the spend
 * figures alone go at once to a small file beside it (spendPathOf; written and renamed, not synced: a
 * crash of the process cannot lose them, which is what a restart while the control plane is unreachable
 * needs — a sidecar killed within those 5 s forgot the spend acknowledged in them). Spend a restarted
 * sidecar reads from older files is corrected by the control plane's snapshot on reconnect.
 */
export class SnapshotWriter {
  private next: GovernanceState | undefined;
  private touchWanted = false;
  private running: Promise<void> | undefined;
  private deferred: NodeJS.Timeout | undefined;
  private nextSpend: GovernanceState | undefined;
  private writingSpend: Promise<void> | undefined;

  constructor(
    private readonly path: string,
    private readonly onError: (e: unknown) => void,
    private readonly spendDelayMs = SPEND_PERSIST_DELAY_MS,
  ) {}

  /** `spendOnly`: the change since the last state is spend figures only (written within spendDelayMs). */
  save(s: GovernanceState, spendOnly = false): void {
    this.next = s;
    if (spendOnly) {
      this.nextSpend = s;
      this.writingSpend ??= this.drainSpend().finally(() => (this.writingSpend = undefined));
      this.deferred ??= setTimeout(() => {
        this.deferred = undefined;
        this.kick();
      }, this.spendDelayMs);
      this.deferred.unref();
      return;
    }
    this.cancelDeferred();
    this.kick();
  }

  /** Writes the newest spend figures to the spend file, one write at a time. */
  private async drainSpend(): Promise<void> {
    const path = spendPathOf(this.path);
    while (this.nextSpend) {
      const s = this.nextSpend;
      this.nextSpend = undefined;
      try {
        await mkdir(dirname(path), { recursive: true });
        await writeFile(`${path}.tmp`, encodeSpend(s), { mode: 0o600 });
        await rename(`${path}.tmp`, path);
      } catch (e) {
        this.onError(e);
      }
    }
  }

  private cancelDeferred(): void {
    if (this.deferred) clearTimeout(this.deferred);
    this.deferred = undefined;
  }

  touch(): void {
    this.touchWanted = true;
    this.kick();
  }

  private kick(): void {
    this.running ??= this.drain().finally(() => (this.running = undefined));
  }

  private async drain(): Promise<void> {
    while (this.next || this.touchWanted) {
      this.cancelDeferred(); // the newest state is written now, deferred spend with it
      const s = this.next;
      this.next = undefined;
      const touch = this.touchWanted;
      this.touchWanted = false;
      try {
        if (s) await saveSnapshot(this.path, s);
        else if (touch && existsSync(this.path)) {
          const now = new Date();
          await utimes(this.path, now, now);
        }
      } catch (e) {
        this.onError(e);
      }
    }
  }

  /** Writes what is pending, deferred spend included, and waits for it (graceful stop). */
  async flush(): Promise<void> {
    if (this.deferred) {
      this.cancelDeferred();
      this.kick();
    }
    while (this.running || this.writingSpend) await (this.running ?? this.writingSpend);
  }
}
