// Sync.Watch client: applies the snapshot and deltas (each one replaces the whole immutable state, so a
// request sees the old or the new policy set, never a mix), persists the state off the request path,
// reconnects with jittered backoff and resumes from its version (the server answers a resume with deltas
// only, or with a snapshot when it no longer holds the changes). A dead connection is noticed by HTTP/2
// PINGs on the transport (10 s interval, 5 s timeout) and, as a backstop, by a stream that stays silent
// for STALL_MS although the server sends a heartbeat every 10 s — once it has sent its first message: the
// first one (a snapshot, which a busy control plane may take minutes to build for a large tenant, or a
// resume's heartbeat) may take FIRST_MESSAGE_MS (a 30 s limit made a fleet reconnect forever while the
// snapshots it asked for took longer; audit, session 17). The PINGs still notice a dead connection meanwhile.
import { Code, ConnectError, createClient, type Client, type Transport } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { SyncService, WatchRequestSchema, type Delta } from "@agentgov/proto";
import { applyDelta, fromSnapshot, type GovernanceState } from "../state/governance-state.js";
import { SnapshotWriter } from "./snapshot-file.js";
import { abortableSleep, backoffMs } from "./backoff.js";

export const STALL_MS = 30_000;
/** Longest wait for a stream's first message (the control plane's statement timeout is 5 min). */
export const FIRST_MESSAGE_MS = 300_000;

export interface SyncEvents {
  onState(s: GovernanceState): void;
  onConnected(connected: boolean): void;
  onError(e: unknown): void;
}

export interface SyncStats {
  connected: boolean;
  version: bigint;
  /** Last message from the control plane (snapshot, delta or heartbeat), or the persisted snapshot's time; 0 = never. */
  lastContactMs: number;
  snapshots: number;
  deltas: number;
  heartbeats: number;
  /** Streams opened after the first one. */
  reconnects: number;
}

/** A typed abort reason for a silent stream. */
export class SyncStallError extends Error {
  constructor(ms = STALL_MS) {
    super(`sync stream silent for ${ms / 1000} s`);
    this.name = "SyncStallError";
  }
}

export interface SyncClientOptions {
  /** Time of the persisted snapshot the state came from (0 when none). */
  persistedAtMs?: number;
  stallMs?: number;
  /** Longest wait for a stream's first message (default FIRST_MESSAGE_MS, never below stallMs). */
  firstMessageMs?: number;
}

export class SyncClient {
  private readonly client: Client<typeof SyncService>;
  private readonly abort = new AbortController();
  private readonly writer: SnapshotWriter;
  private running: Promise<void> | undefined;
  private readyResolve: (() => void) | undefined;
  private readonly counters: SyncStats;
  private readonly stallMs: number;
  private readonly firstMessageMs: number;
  /** Resolves once the control plane has answered (snapshot, delta or heartbeat). */
  readonly firstSync: Promise<void>;

  constructor(
    transport: Transport,
    private readonly key: string,
    private state: GovernanceState,
    snapshotPath: string,
    private readonly events: SyncEvents,
    private readonly sidecarId: string,
    opts: SyncClientOptions = {},
  ) {
    this.client = createClient(SyncService, transport);
    this.firstSync = new Promise((r) => (this.readyResolve = r));
    this.writer = new SnapshotWriter(snapshotPath, (e) => events.onError(e));
    this.stallMs = opts.stallMs ?? STALL_MS;
    this.firstMessageMs = Math.max(this.stallMs, opts.firstMessageMs ?? FIRST_MESSAGE_MS);
    this.counters = { connected: false, version: state.version, lastContactMs: opts.persistedAtMs ?? 0, snapshots: 0, deltas: 0, heartbeats: 0, reconnects: 0 };
  }

  start(): void {
    this.running ??= this.loop();
  }

  stats(): SyncStats {
    return { ...this.counters, version: this.state.version };
  }

  private setConnected(c: boolean): void {
    if (this.counters.connected === c) return;
    this.counters.connected = c;
    this.events.onConnected(c);
  }

  private async loop(): Promise<void> {
    let attempt = 0;
    let streams = 0;
    while (!this.abort.signal.aborted) {
      if (streams++ > 0) this.counters.reconnects++;
      const streamAbort = new AbortController();
      const onStop = () => streamAbort.abort();
      this.abort.signal.addEventListener("abort", onStop);
      let stall: NodeJS.Timeout | undefined;
      const arm = (ms: number) => {
        if (stall) clearTimeout(stall);
        stall = setTimeout(() => streamAbort.abort(new SyncStallError(ms)), ms);
      };
      try {
        arm(this.firstMessageMs);
        const stream = this.client.watch(create(WatchRequestSchema, { resumeFromVersion: this.state.version, sidecarId: this.sidecarId }), {
          signal: streamAbort.signal,
          headers: { authorization: `Bearer ${this.key}` },
        });
        for await (const msg of stream) {
          arm(this.stallMs);
          this.counters.lastContactMs = Date.now();
          this.setConnected(true);
          attempt = 0;
          if (msg.kind.case === "snapshot") {
            this.counters.snapshots++;
            this.publish(fromSnapshot(msg.version, msg.kind.value));
          } else if (msg.kind.case === "delta") {
            this.counters.deltas++;
            this.publish(applyDelta(this.state, msg.version, msg.kind.value), isSpendOnly(msg.kind.value));
          } else {
            this.counters.heartbeats++;
            // A heartbeat's version says every change up to it has been sent on this stream.
            // Nothing changed but the version: its persistence may wait like spend (resuming from an older one re-sends no change).
            if (msg.version > this.state.version && this.state.tenantId !== "") this.publish({ ...this.state, version: msg.version }, true);
            else this.writer.touch();
          }
          this.readyResolve?.();
        }
      } catch (e) {
        if (!this.abort.signal.aborted) {
          this.events.onError(e);
          if (e instanceof ConnectError && (e.code === Code.Unauthenticated || e.code === Code.PermissionDenied)) this.ownKeyRefused();
        }
      } finally {
        if (stall) clearTimeout(stall);
        this.abort.signal.removeEventListener("abort", onStop);
      }
      if (this.abort.signal.aborted) break;
      this.setConnected(false);
      attempt++;
      await abortableSleep(backoffMs(attempt), this.abort.signal);
    }
  }

  /**
   * The control plane refused this sidecar's own key (deleted, its user deactivated, a scope that may not
   * sync): the sidecar can no longer learn revocations, so serving its last snapshot (fail static, meant
   * for an unreachable control plane) would let keys revoked from now on through. Every key is dropped
   * (each proxied call gets 401, saying why) and the version reset, so that a key made valid again
   * (its user reactivated) gets a whole snapshot on the next stream, with the keys as they are then.
   */
  private ownKeyRefused(): void {
    if (this.state.ownKeyRevoked === true) return;
    this.publish({ ...this.state, keysByHash: new Map(), version: 0n, ownKeyRevoked: true });
  }

  private publish(s: GovernanceState, spendOnly = false): void {
    this.state = s;
    this.events.onState(s);
    this.writer.save(s, spendOnly);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
    this.setConnected(false);
    await this.writer.flush();
  }
}

/** A delta that changes spend figures and nothing else (its persistence may wait: SnapshotWriter). */
function isSpendOnly(d: Delta): boolean {
  return d.upsertAgents.length + d.removedAgentIds.length + d.upsertPolicies.length + d.removedPolicyIds.length + d.upsertKeys.length + d.removedKeyIds.length === 0;
}
