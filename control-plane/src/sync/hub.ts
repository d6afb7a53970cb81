// Wakes Sync streams when their tenant changes. Every replica LISTENs on one Postgres channel, so a
// change committed through any replica reaches the sidecars connected to every other replica. The
// listening connection also applies the change log's retention once an hour, and hears the Sync Acks
// that reached another replica than the one holding their stream (SYNC_ACK_CHANNEL).
import pg from "pg";
import { SYNC_CHANNEL } from "../stores/postgres/sync-changes.js";
import { pruneChanges } from "./change-window.js";

const PRUNE_EVERY_MS = 3600_000;
/**
 * Sync Acks passed on between replicas: a sidecar's Ack normally travels on the HTTP/2 connection of its
 * Watch stream, hence to the same replica, but a proxy that balances each gRPC call on its own may send it
 * to another one. Payload: JSON [tenantId, keyId, sidecarId, version], as authenticated by the receiver.
 */
export const SYNC_ACK_CHANNEL = "agentgov_sync_acks";
/** Longest sidecar id passed on (NOTIFY payloads are limited to 8000 bytes; ours are "sc_" + a UUID). */
export const FORWARDED_SIDECAR_ID_MAX = 200;
/**
 * How long a REST write (or an identity event that changes a user) waits for this replica's Sync streams to have
 * delivered its change (SyncHub.delivered) before answering anyway: a healthy stream takes milliseconds; a
 * stuck one, or a sidecar that does not acknowledge, must not hold the caller (its sidecar then fails closed on
 * staleness, DESIGN.md §9).
 */
export const SYNC_DELIVERY_WAIT_MS = 2000;

/** Who holds a Sync stream, as the sidecar named it in its WatchRequest and as Watch authenticated it. */
export interface StreamIdentity {
  sidecarId: string;
  keyId: string;
  /** SHA-256 of the key the stream was opened with (an Ack carrying the same key is recognised without a query). */
  keyHash: string;
  /** The sidecar said it acknowledges what it applied (WatchRequest.acks_applied). */
  acksApplied: boolean;
}

/** One Sync stream of this replica, as the hub tracks what it has sent (see SyncHub.delivered). */
export interface StreamTracker {
  /**
   * Every change of the tenant numbered ≤ version has been handed to the stream. `content`: a message
   * carrying `version` was sent (a snapshot, a delta, or the heartbeat that starts a resumed stream);
   * false when the stream only moved past versions that hold nothing of its tenant.
   */
  sent(version: number, content: boolean): void;
  close(): void;
}

/** What the hub knows of one open stream. */
interface TrackedStream extends StreamIdentity {
  tenantId: string;
  /** Highest version handed to the stream. */
  sent: number;
  /** Version of the last message with content handed to it. */
  lastContent: number;
  /** Version of the sidecar's last Ack (its state now); undefined until its first Ack reached this replica. */
  acked: number | undefined;
  /**
   * A write timed out waiting for this stream's Ack (a sidecar gone silently, an Ack lost): until its next Ack, the stream counts as delivered once handed, so that it holds one write for
   * SYNC_DELIVERY_WAIT_MS, not every write.
   */
  ackOverdue: boolean;
  /** A newer stream of the same sidecar (same id and key) opened here: this one is dead and is not waited for. */
  superseded: boolean;
}

/**
 * Whether a stream has delivered `version`. A stream of a sidecar that acks (it said so, and one of its Acks
 * reached this replica) has delivered it once the sidecar *applied* it: its acked state is ≥ version, or it
 * has acked the last message sent and the stream then only moved past versions with nothing of its tenant.
 * Any other stream has delivered it once it was handed the version (an older sidecar that never acks, or
 * one whose Acks do not reach this replica, does not make every write wait SYNC_DELIVERY_WAIT_MS).
 */
function streamDelivered(s: Readonly<TrackedStream>, version: number): boolean {
  if (s.superseded) return true;
  if (!s.acksApplied || s.acked === undefined || s.ackOverdue) return s.sent >= version;
  const applied = s.acked >= s.lastContent ? Math.max(s.acked, s.sent) : s.acked;
  return applied >= version;
}

export class SyncHub {
  private readonly counters = new Map<string, number>();
  /** Per tenant, the open streams of this replica. */
  private readonly streams = new Map<string, Set<TrackedStream>>();
  /** Per sidecar id, its open streams that ack (what an Ack names). */
  private readonly acking = new Map<string, Set<TrackedStream>>();
  private readonly deliveryWaiters = new Set<{ tenantId: string; version: number; check(): void }>();
  private readonly waiters = new Map<string, Set<() => void>>();
  /** Highest version announced by NOTIFY per tenant (a stream behind it has changes still to read). */
  private readonly notified = new Map<string, number>();
  private client: pg.Client | undefined;
  private closed = false;
  private pruneTimer: NodeJS.Timeout | undefined;

  constructor(private readonly connectionString: string, private readonly onError: (e: unknown) => void = () => undefined) {}

  async start(): Promise<void> {
    await this.connect();
    this.pruneTimer = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.pruneTimer.unref();
  }

  private async prune(): Promise<void> {
    try {
      if (this.client) await pruneChanges(this.client);
    } catch (e) {
      this.onError(e);
    }
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.connectionString });
    client.on("notification", (n) => {
      if (n.channel === SYNC_ACK_CHANNEL) return this.forwardedAck(n.payload);
      const [tenantId, version] = (n.payload ?? "").split(":");
      if (!tenantId) return;
      const v = Number(version);
      if (Number.isFinite(v) && v > (this.notified.get(tenantId) ?? 0)) this.notified.set(tenantId, v);
      this.bump(tenantId);
    });
    client.on("error", (e) => {
      this.onError(e);
      void this.reconnect();
    });
    await client.connect();
    await client.query(`LISTEN ${SYNC_CHANNEL}`);
    await client.query(`LISTEN ${SYNC_ACK_CHANNEL}`);
    this.client = client;
  }

  private async reconnect(): Promise<void> {
    if (this.closed) return;
    await this.client?.end().catch(() => undefined);
    this.client = undefined;
    for (let delay = 200; !this.closed; delay = Math.min(delay * 2, 5000)) {
      try {
        await this.connect();
        // Anything may have changed while we were not listening: wake every stream to re-read.
        for (const tenant of this.waiters.keys()) this.bump(tenant);
        return;
      } catch (e) {
        this.onError(e);
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  /** Marks a tenant changed (also used locally right after a commit, to save the NOTIFY round trip). */
  bump(tenantId: string): void {
    this.counters.set(tenantId, (this.counters.get(tenantId) ?? 0) + 1);
    const ws = this.waiters.get(tenantId);
    if (ws) for (const w of [...ws]) w();
  }

  latestNotified(tenantId: string): number {
    return this.notified.get(tenantId) ?? 0;
  }

  counter(tenantId: string): number {
    return this.counters.get(tenantId) ?? 0;
  }

  /** Resolves when the tenant's counter moves past `seen`, after timeoutMs, or when the signal aborts. */
  wait(tenantId: string, seen: number, timeoutMs: number, signal: AbortSignal): Promise<void> {
    if (this.counter(tenantId) !== seen || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const set = this.waiters.get(tenantId) ?? new Set();
      this.waiters.set(tenantId, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        if (set.size === 0) this.waiters.delete(tenantId);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      set.add(done);
      signal.addEventListener("abort", done);
    });
  }

  /** Registers a Sync stream of `tenantId` (call `close` when it ends). */
  track(tenantId: string, id: StreamIdentity = { sidecarId: "", keyId: "", keyHash: "", acksApplied: false }): StreamTracker {
    const streams = this.streams.get(tenantId) ?? new Set<TrackedStream>();
    this.streams.set(tenantId, streams);
    const s: TrackedStream = { ...id, tenantId, sent: 0, lastContent: 0, acked: undefined, ackOverdue: false, superseded: false };
    // A sidecar runs one Watch at a time: a new one from the same sidecar (same id, same key) means that
    // the stream it held before is dead, even if this replica has not noticed yet.
    if (id.sidecarId !== "") {
      for (const other of streams) if (other.sidecarId === id.sidecarId && other.keyId === id.keyId) other.superseded = true;
    }
    streams.add(s);
    if (id.acksApplied && id.sidecarId !== "") {
      const set = this.acking.get(id.sidecarId) ?? new Set<TrackedStream>();
      this.acking.set(id.sidecarId, set);
      set.add(s);
    }
    let closed = false;
    return {
      sent: (version, content) => {
        if (closed) return;
        if (content && version >= s.lastContent) s.lastContent = version;
        if (version <= s.sent) return;
        s.sent = version;
        this.checkDeliveries(tenantId);
      },
      close: () => {
        if (closed) return;
        closed = true;
        streams.delete(s);
        if (streams.size === 0 && this.streams.get(tenantId) === streams) this.streams.delete(tenantId);
        const set = this.acking.get(s.sidecarId);
        if (set?.delete(s) && set.size === 0) this.acking.delete(s.sidecarId);
        this.checkDeliveries(tenantId);
      },
    };
  }

  /**
   * The tenant and key of an open acking stream of `sidecarId` opened with the key hashed `keyHash`, if
   * this replica holds one. Such a stream's key was authenticated when it opened, and the stream ends as
   * soon as it sends the key's removal, so an Ack carrying that key needs no query of its own.
   */
  ackingStream(sidecarId: string, keyHash: string): { tenantId: string; keyId: string } | undefined {
    for (const s of this.acking.get(sidecarId) ?? []) if (s.keyHash === keyHash) return { tenantId: s.tenantId, keyId: s.keyId };
    return undefined;
  }

  /**
   * A sidecar acknowledged that it serves the state of `version`: recorded on its acking streams of this
   * replica opened by the same tenant and key; returns how many. An Ack naming a stream of another key or
   * tenant changes nothing. A sidecar has one Ack in flight at a time, so its Acks arrive in order and the
   * last one is its state (a snapshot may move it back); one passed on by another replica (`forwarded`)
   * may arrive after a later one, and only ever moves it forward.
   */
  ack(tenantId: string, keyId: string, sidecarId: string, version: number, forwarded = false): number {
    let n = 0;
    for (const s of this.acking.get(sidecarId) ?? []) {
      if (s.tenantId !== tenantId || s.keyId !== keyId) continue;
      if (forwarded && s.acked !== undefined && s.acked >= version) continue;
      s.acked = version;
      s.ackOverdue = false;
      n++;
    }
    if (n > 0) this.checkDeliveries(tenantId);
    return n;
  }

  /** An Ack another replica received for a stream it does not hold (see SYNC_ACK_CHANNEL). */
  private forwardedAck(payload: string | undefined): void {
    try {
      const [tenantId, keyId, sidecarId, version] = JSON.parse(payload ?? "") as unknown[];
      if (typeof tenantId === "string" && typeof keyId === "string" && typeof sidecarId === "string" && typeof version === "number") this.ack(tenantId, keyId, sidecarId, version, true);
    } catch {
      /* not ours */
    }
  }

  /**
   * Passes an Ack this replica holds no stream for on to the other replicas (the stream it names may be
   * held by one of them). `db` is any connection that may NOTIFY.
   */
  async forwardAck(db: { query(text: string, values: unknown[]): Promise<unknown> }, tenantId: string, keyId: string, sidecarId: string, version: number): Promise<void> {
    if (sidecarId === "" || sidecarId.length > FORWARDED_SIDECAR_ID_MAX) return;
    await db.query("SELECT pg_notify($1, $2)", [SYNC_ACK_CHANNEL, JSON.stringify([tenantId, keyId, sidecarId, version])]);
  }

  /**
   * Wakes the tenant's streams and resolves true once every Sync stream of this replica for the tenant
   * has delivered `version` (streamDelivered: applied, for a sidecar that acks; else handed) or has
   * closed, false after `timeoutMs`. What writes and revocations wait for before they answer, so that a
   * key deleted or a user deactivated is refused by the sidecars from the caller's next request on, not
   * some milliseconds later. Streams held by other replicas are woken by NOTIFY and are not waited for.
   */
  delivered(tenantId: string, version: number, timeoutMs: number): Promise<boolean> {
    const done = () => {
      for (const s of this.streams.get(tenantId) ?? []) if (!streamDelivered(s, version)) return false;
      return true;
    };
    this.bump(tenantId);
    if (done()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        tenantId,
        version,
        check: () => {
          if (done()) finish(true);
        },
      };
      const finish = (ok: boolean) => {
        clearTimeout(timer);
        this.deliveryWaiters.delete(waiter);
        if (!ok) {
          // Streams handed the version that did not ack it in time: the handed rule until their next Ack.
          let marked = false;
          for (const s of this.streams.get(tenantId) ?? []) {
            if (streamDelivered(s, version) || s.acked === undefined || s.sent < version) continue;
            s.ackOverdue = true;
            marked = true;
          }
          if (marked) this.checkDeliveries(tenantId);
        }
        resolve(ok);
      };
      const timer = setTimeout(() => finish(false), timeoutMs);
      this.deliveryWaiters.add(waiter);
    });
  }

  private checkDeliveries(tenantId: string): void {
    for (const w of [...this.deliveryWaiters]) if (w.tenantId === tenantId) w.check();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    for (const set of this.waiters.values()) for (const w of [...set]) w();
    await this.client?.end().catch(() => undefined);
  }
}
