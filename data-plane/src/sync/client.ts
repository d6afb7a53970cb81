// Sync.Watch client: applies the snapshot and deltas (each one replaces the whole immutable state, so a
// request sees the old or the new policy set, never a mix), persists the state off the request path,
// reconnects with jittered backoff and resumes from its version (the server answers a resume with deltas
// only, or with a snapshot when it no longer holds the changes). A dead connection is noticed by HTTP/2
// PINGs on the transport (10 s interval, 5 s timeout) and, as a backstop, by a stream that stays silent
// for STALL_MS although the server sends a heartbeat every 10 s — once it has sent its first message: the
// first one (a snapshot, which a busy control plane may take minutes to build for a large tenant, or a
// resume's heartbeat) may take FIRST_MESSAGE_MS (a 30 s limit made a fleet reconnect forever while the
// snapshots it asked for took longer; audit, session 17). The PINGs still notice a dead connection meanwhile.
// Once a message's state is swapped in (onState returned: the proxy serves it from its next call on), the
// version is acknowledged with Sync.Ack, off the stream (ack-sender.ts): a REST write on the control plane
// answers once the sidecars that ack have applied its change. On stop, the sidecar says goodbye (an Ack
// with `leaving`) before its stream ends: the control plane remembers the sidecars whose stream ended
// otherwise and makes writes wait, within their limit, for them to reconnect; one that stopped must be
// forgotten at once rather than waited for.
import { Code, ConnectError, createClient, type Client, type Transport } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { AckRequestSchema, SyncService, WatchRequestSchema, type AgentSpend, type Delta } from "@agentgov/proto";
import { applyDelta, fromSnapshot, type GovernanceState } from "../state/governance-state.js";
import { SnapshotWriter } from "./snapshot-file.js";
import { abortableSleep, syncReconnectMs } from "./backoff.js";
import { AckSender } from "./ack-sender.js";

export const STALL_MS = 30_000;
/** Longest wait for a stream's first message (the control plane's statement timeout is 5 min). */
export const FIRST_MESSAGE_MS = 300_000;
/** An Ack answered later than this is of no use (a write waits at most 2 s for it). */
export const ACK_TIMEOUT_MS = 2000;
/** Longest a stopping sidecar waits for its goodbye to be answered (a control plane away must not hold the stop). */
export const GOODBYE_TIMEOUT_MS = 1000;

export interface SyncEvents {
  onState(s: GovernanceState): void;
  onConnected(connected: boolean): void;
  onError(e: unknown): void;
  /** An Ack failed (dropped: the control plane restarting, or one without Ack); worth a debug line at most. */
  onAckError?(e: unknown): void;
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
  /** Acknowledge applied versions (WatchRequest.acks_applied, Sync.Ack); default true. */
  acks?: boolean;
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
  private readonly acksApplied: boolean;
  private readonly acks: AckSender;
  /** A stream of this process delivered messages: the control plane may remember this sidecar (say goodbye on stop). */
  private streamed = false;
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
    this.acksApplied = opts.acks ?? true;
    this.acks = new AckSender(
      async (version) => {
        await this.client.ack(create(AckRequestSchema, { sidecarId: this.sidecarId, version }), {
          signal: this.abort.signal,
          timeoutMs: ACK_TIMEOUT_MS,
          headers: { authorization: `Bearer ${this.key}` },
        });
      },
      (e) => events.onAckError?.(e),
    );
  }

  start(): void {
    this.running ??= this.loop();
  }

  stats(): SyncStats {
    return { ...this.counters, version: this.state.version };
  }

  /** Sync.Ack calls answered, and failed (dropped). */
  ackStats(): { sent: number; failed: number } {
    return { sent: this.acks.sent, failed: this.acks.failed };
  }

  private setConnected(c: boolean): void {
    if (this.counters.connected === c) return;
    this.counters.connected = c;
    this.events.onConnected(c);
  }

  private async loop(): Promise<void> {
    let attempt = 0;
    let streams = 0;
    /** When the last stream that had delivered messages ended (fast reconnects for a while after). */
    let lostAtMs: number | undefined;
    while (!this.abort.signal.aborted) {
      if (streams++ > 0) this.counters.reconnects++;
      let delivered = false;
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
        const stream = this.client.watch(create(WatchRequestSchema, { resumeFromVersion: this.state.version, sidecarId: this.sidecarId, acksApplied: this.acksApplied }), {
          signal: streamAbort.signal,
          headers: { authorization: `Bearer ${this.key}` },
        });
        this.acks.newStream();
        let first = true;
        for await (const msg of stream) {
          arm(this.stallMs);
          const before = this.state.version;
          this.counters.lastContactMs = Date.now();
          this.setConnected(true);
          attempt = 0;
          delivered = true;
          this.streamed = true;
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
          // The state is swapped in: acknowledge it (a snapshot or delta; a heartbeat when it moved the
          // version; the stream's first message in any case, so that the control plane learns at once that
          // this stream's acks reach it).
          if (this.acksApplied && (first || msg.kind.case !== "heartbeat" || this.state.version !== before)) this.acks.ack(this.state.version);
          first = false;
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
      if (delivered) lostAtMs = Date.now();
      attempt++;
      await abortableSleep(syncReconnectMs(attempt, lostAtMs === undefined ? undefined : Date.now() - lostAtMs), this.abort.signal);
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

  /**
   * Spend figures an Ingest acknowledgement carried (each includes the traces just acknowledged, which
   * leave the spool): raised in the state and persisted as a Sync spend change is (the spend file at
   * once), so that a sidecar killed before Sync delivers them restarts with that spend even while the
   * control plane is unreachable. A figure never lowers one of the same day nor replaces a later day's.
   */
  raiseSpend(figures: readonly AgentSpend[]): void {
    if (this.state.tenantId === "" || figures.length === 0) return;
    let next: Map<string, AgentSpend> | undefined;
    for (const f of figures) {
      if (!Number.isFinite(f.spentUsd)) continue;
      const cur = (next ?? this.state.spend).get(f.agentId);
      if (cur && (cur.day > f.day || (cur.day === f.day && cur.spentUsd >= f.spentUsd))) continue;
      next ??= new Map(this.state.spend);
      next.set(f.agentId, f);
    }
    if (next) this.publish({ ...this.state, spend: next }, true);
  }

  /**
   * Tells the control plane that this sidecar is stopping, while its stream is still open, so that writes
   * do not wait for it to reconnect. Only a sidecar that acks is waited for, hence only it says goodbye;
   * one never connected is not remembered. A goodbye that fails (the control plane away, an older one
   * answers it as an ordinary Ack) costs writes of the tenant at most their time limit for a while.
   */
  private async sayGoodbye(): Promise<void> {
    if (!this.acksApplied || !this.streamed || this.abort.signal.aborted) return;
    try {
      await this.client.ack(create(AckRequestSchema, { sidecarId: this.sidecarId, version: this.state.version, leaving: true }), {
        timeoutMs: GOODBYE_TIMEOUT_MS,
        headers: { authorization: `Bearer ${this.key}` },
      });
    } catch (e) {
      this.events.onAckError?.(e);
    }
  }

  private publish(s: GovernanceState, spendOnly = false): void {
    this.state = s;
    this.events.onState(s);
    this.writer.save(s, spendOnly);
  }

  async stop(): Promise<void> {
    await this.sayGoodbye();
    this.abort.abort();
    this.acks.clear();
    await this.running;
    this.setConnected(false);
    await this.writer.flush();
  }
}

/** A delta that changes spend figures and nothing else (its persistence may wait: SnapshotWriter). */
function isSpendOnly(d: Delta): boolean {
  return d.upsertAgents.length + d.removedAgentIds.length + d.upsertPolicies.length + d.removedPolicyIds.length + d.upsertKeys.length + d.removedKeyIds.length === 0;
}
