// Wakes Sync streams when their tenant changes. Every replica LISTENs on one Postgres channel, so a
// change committed through any replica reaches the sidecars connected to every other replica. The
// listening connection also applies the change log's retention once an hour, and hears the Sync Acks
// that reached another replica than the one holding their stream (SYNC_ACK_CHANNEL), and the sidecars
// whose stream ended on another replica (SYNC_SIDECAR_CHANNEL).
//
// It also remembers the sidecars that were streaming and are not connected now (remembered.ts, kept in
// the sync_sidecars table by sidecar-registry.ts): right after a restart none has reconnected yet, and a
// write must wait for them too, or a key revoked then is admitted by a sidecar still on the old state.
import pg from "pg";
import { SYNC_CHANNEL } from "../stores/postgres/sync-changes.js";
import { pruneChanges } from "./change-window.js";
import { RememberedSidecars, type SidecarRef } from "./remembered.js";
import { SIDECAR_ID_MAX, SYNC_SIDECAR_CHANNEL, SidecarRegistry, parseSidecarEvents, rememberable, type SidecarEvents } from "./sidecar-registry.js";

const PRUNE_EVERY_MS = 3600_000;
/**
 * Sync Acks passed on between replicas: a sidecar's Ack normally travels on the HTTP/2 connection of its
 * Watch stream, hence to the same replica, but a proxy that balances each gRPC call on its own may send it
 * to another one. Payload: JSON [tenantId, keyId, sidecarId, version], as authenticated by the receiver.
 */
export const SYNC_ACK_CHANNEL = "agentgov_sync_acks";
/** Longest sidecar id passed on (NOTIFY payloads are limited to 8000 bytes; ours are "sc_" + a UUID). */
export const FORWARDED_SIDECAR_ID_MAX = SIDECAR_ID_MAX;
/**
 * How long a REST write (or an identity event that changes a user) waits for this replica's Sync streams to have
 * delivered its change (SyncHub.delivered) before answering anyway: a healthy stream takes milliseconds; a
 * stuck one, or a sidecar that does not acknowledge, must not hold the caller (its sidecar then fails closed on
 * staleness, DESIGN.md §9).
 */
export const SYNC_DELIVERY_WAIT_MS = 2000;
/**
 * How long a sidecar whose stream ended without a goodbye (its process killed, a network cut, a control
 * plane restarted) is waited for, from when it was last seen: it retries every ≤ 0.5 s for 30 s after
 * losing a working stream (data-plane sync/backoff.ts FAST_RECONNECT_WINDOW_MS), and the last sign of
 * life of a replica that died may be REPLICA_TOUCH_MS (10 s) older than its end. One killed for good
 * costs its tenant's writes one SYNC_DELIVERY_WAIT_MS: a write that timed out waiting for it makes it
 * overdue, and no later write waits for it until it is back (remembered.ts).
 */
export const REMEMBER_MS = 45_000;
/**
 * A new stream's Acks are also passed on to the other replicas for this long after its first one: a
 * replica whose write waits for that sidecar (it remembered it as away) learns when it is back and has
 * applied the change; a write waits at most SYNC_DELIVERY_WAIT_MS, plus a NOTIFY's way.
 */
export const ANNOUNCE_ACKS_MS = SYNC_DELIVERY_WAIT_MS + 1000;
/**
 * How often a replica reads the remembered sidecars that no live replica holds (after those at start): it
 * hears of a stream that ended on another replica at once (SYNC_SIDECAR_CHANNEL), but of a replica that
 * died only by reading (its streams' sidecars, to wait for, are the table's rows it claims). One indexed
 * query per second per replica.
 */
export const REMEMBERED_RELOAD_MS = 1000;

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
  /** The stream ends because its own key was revoked (call before close): its sidecar is not remembered. */
  revoked(): void;
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
  /** The sidecar said goodbye (it is stopping): not waited for, and not remembered once the stream ends. */
  leaving: boolean;
  /** The stream's own key was revoked: the sidecar cannot come back with it, so it is not remembered. */
  revoked: boolean;
  /** When its first Ack arrived (its Acks are announced to the other replicas for ANNOUNCE_ACKS_MS after). */
  firstAckAtMs: number | undefined;
}

/**
 * Whether a stream has delivered `version`. A stream of a sidecar that acks (it said so, and one of its Acks
 * reached this replica) has delivered it once the sidecar *applied* it: its acked state is ≥ version, or it
 * has acked the last message sent and the stream then only moved past versions with nothing of its tenant.
 * Any other stream has delivered it once it was handed the version (an older sidecar that never acks, or
 * one whose Acks do not reach this replica, does not make every write wait SYNC_DELIVERY_WAIT_MS).
 */
function streamDelivered(s: Readonly<TrackedStream>, version: number): boolean {
  if (s.superseded || s.leaving) return true;
  if (!s.acksApplied || s.acked === undefined || s.ackOverdue) return s.sent >= version;
  return appliedVersion(s) >= version;
}

/** The version the sidecar of an acking stream serves, as far as its Acks tell (0 before the first). */
function appliedVersion(s: Readonly<TrackedStream>): number {
  if (s.acked === undefined) return 0;
  return s.acked >= s.lastContent ? Math.max(s.acked, s.sent) : s.acked;
}

const sameSidecar = (s: Readonly<TrackedStream>, ref: SidecarRef) => s.tenantId === ref.tenantId && s.keyId === ref.keyId && s.sidecarId === ref.sidecarId;

export interface SyncHubOptions {
  /** Clock of the remembered sidecars (tests). */
  now?: () => number;
  /** REMEMBER_MS unless told. */
  rememberMs?: number;
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
  private reloadTimer: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  /** Sidecars that were streaming and are not connected now (what writes also wait for). */
  private readonly remembered: RememberedSidecars;
  /** The table behind `remembered`; inert until start() (a hub that is not started uses no database). */
  private readonly registry: SidecarRegistry;

  constructor(private readonly connectionString: string, private readonly onError: (e: unknown) => void = () => undefined, opts: SyncHubOptions = {}) {
    this.now = opts.now ?? Date.now;
    const rememberMs = opts.rememberMs ?? REMEMBER_MS;
    this.remembered = new RememberedSidecars({ now: this.now, rememberMs, backKeepMs: SYNC_DELIVERY_WAIT_MS, reloadGraceMs: 1000 });
    // A stream that ended here after its sidecar had reconnected to another replica: nothing to wait for.
    this.registry = new SidecarRegistry(connectionString, rememberMs, onError, (ref) => {
      this.remembered.forgetAway(ref);
      this.checkDeliveries(ref.tenantId);
    });
  }

  /** Listens, and reads the sidecars to wait for (before the first write can ask: none is connected yet). */
  async start(): Promise<void> {
    await this.connect();
    await this.registry.start();
    await this.reloadRemembered();
    this.pruneTimer = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.pruneTimer.unref();
    this.reloadTimer = setInterval(() => void this.reloadRemembered(), REMEMBERED_RELOAD_MS);
    this.reloadTimer.unref();
  }

  private async prune(): Promise<void> {
    try {
      if (this.client) await pruneChanges(this.client);
      await this.registry.prune();
    } catch (e) {
      this.onError(e);
    }
  }

  /**
   * Reads the remembered sidecars no live replica holds (those of a replica that died included) and
   * forgets those the table no longer lists. Also a safety net for announcements missed (NOTIFY is not
   * heard while the listener reconnects).
   */
  private async reloadRemembered(): Promise<void> {
    if (this.closed) return;
    try {
      const since = this.remembered.mark();
      const rows = await this.registry.loadAbsent(ANNOUNCE_ACKS_MS);
      this.remembered.reload(rows, since, (ref) => this.heldHere(ref));
    } catch (e) {
      this.onError(e);
    }
  }

  /** Whether this replica holds an open acking stream of the sidecar. */
  private heldHere(ref: SidecarRef): boolean {
    for (const s of this.acking.get(ref.sidecarId) ?? []) if (sameSidecar(s, ref) && !s.superseded && !s.leaving) return true;
    return false;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.connectionString });
    client.on("notification", (n) => {
      if (n.channel === SYNC_ACK_CHANNEL) return this.forwardedAck(n.payload);
      if (n.channel === SYNC_SIDECAR_CHANNEL) return this.sidecarEvents(parseSidecarEvents(n.payload));
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
    // The name other replicas see this one alive by (sidecar-registry.ts): set here, whatever the URL says.
    await client.query("SELECT set_config('application_name', $1, false)", [this.registry.replica]);
    await client.query(`LISTEN ${SYNC_CHANNEL}`);
    await client.query(`LISTEN ${SYNC_ACK_CHANNEL}`);
    await client.query(`LISTEN ${SYNC_SIDECAR_CHANNEL}`);
    this.client = client;
  }

  private async reconnect(): Promise<void> {
    if (this.closed) return;
    await this.client?.end().catch(() => undefined);
    this.client = undefined;
    for (let delay = 200; !this.closed; delay = Math.min(delay * 2, 5000)) {
      try {
        await this.connect();
        // Anything may have changed while we were not listening: wake every stream to re-read, and read
        // the remembered sidecars again (streams that ended elsewhere meanwhile were not heard).
        for (const tenant of this.waiters.keys()) this.bump(tenant);
        void this.reloadRemembered();
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
    const s: TrackedStream = { ...id, tenantId, sent: 0, lastContent: 0, acked: undefined, ackOverdue: false, superseded: false, leaving: false, revoked: false, firstAckAtMs: undefined };
    const ref: SidecarRef = { tenantId, keyId: id.keyId, sidecarId: id.sidecarId };
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
      if (rememberable(id.sidecarId)) this.registry.opened(ref);
    } else if (this.remembered.forget(ref)) {
      // Back without Acks (it will never ack what writes wait for): an ordinary stream from now on.
      this.checkDeliveries(tenantId);
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
      revoked: () => {
        s.revoked = true;
      },
      close: () => {
        if (closed) return;
        closed = true;
        streams.delete(s);
        if (streams.size === 0 && this.streams.get(tenantId) === streams) this.streams.delete(tenantId);
        const set = this.acking.get(s.sidecarId);
        if (set?.delete(s) && set.size === 0) this.acking.delete(s.sidecarId);
        if (id.acksApplied && rememberable(id.sidecarId)) this.streamEnded(s, ref);
        this.checkDeliveries(tenantId);
      },
    };
  }

  /**
   * An acking stream of this replica ended. Without a goodbye the sidecar is remembered as away (writes
   * wait for it until it is back, within their limit), here, in the table and by the other replicas; a
   * superseded stream's sidecar is still here; one that left, or whose key was revoked, is forgotten.
   */
  private streamEnded(s: Readonly<TrackedStream>, ref: SidecarRef): void {
    if (s.superseded) return;
    if (s.revoked) {
      this.remembered.forget(ref);
      this.registry.gone(ref);
      return;
    }
    if (s.leaving) return; // leave() forgot it already
    const applied = appliedVersion(s);
    this.remembered.lost(ref, applied);
    this.registry.dropped(ref, applied);
  }

  /**
   * The sidecar said goodbye (Ack with `leaving`: it is stopping): its streams here are not waited for, and
   * it is forgotten by every replica rather than waited for until it reconnects (it will not).
   */
  leave(tenantId: string, keyId: string, sidecarId: string): void {
    const ref: SidecarRef = { tenantId, keyId, sidecarId };
    this.markLeaving(ref);
    this.remembered.forget(ref);
    this.registry.gone(ref);
    this.checkDeliveries(tenantId);
  }

  private markLeaving(ref: SidecarRef): void {
    for (const s of this.acking.get(ref.sidecarId) ?? []) if (sameSidecar(s, ref)) s.leaving = true;
  }

  /** Streams that ended, or sidecars forgotten, on another replica (SYNC_SIDECAR_CHANNEL). */
  private sidecarEvents(events: SidecarEvents | undefined): void {
    if (!events || events.r === this.registry.replica) return;
    const tenants = new Set<string>();
    for (const ev of events.e) {
      const ref: SidecarRef = { tenantId: ev[1], keyId: ev[2], sidecarId: ev[3] };
      if (ev[0] === "gone") {
        this.markLeaving(ref);
        this.remembered.forget(ref);
        tenants.add(ref.tenantId);
      } else if (!this.heldHere(ref)) {
        // Unless it reconnected here already.
        this.remembered.lost(ref, ev[4]);
      }
    }
    for (const t of tenants) this.checkDeliveries(t);
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
    const ref: SidecarRef = { tenantId, keyId, sidecarId };
    let n = 0;
    let announce = false;
    for (const s of this.acking.get(sidecarId) ?? []) {
      if (s.tenantId !== tenantId || s.keyId !== keyId) continue;
      if (forwarded && s.acked !== undefined && s.acked >= version) continue;
      s.acked = version;
      s.ackOverdue = false;
      s.firstAckAtMs ??= this.now();
      if (!forwarded && this.now() - s.firstAckAtMs < ANNOUNCE_ACKS_MS) announce = true;
      n++;
    }
    // A sidecar remembered as away is back (here, or on the replica that passed its Ack on).
    const back = this.remembered.acked(ref, version);
    if (n > 0 || back) this.checkDeliveries(tenantId);
    // A stream that just opened here may be what another replica's write waits for.
    if (announce) this.registry.announceAck(SYNC_ACK_CHANNEL, ref, version).catch(this.onError);
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
   * closed, and every remembered sidecar of the tenant that is away (its stream ended without a goodbye,
   * here or on another replica, or it has not reconnected since this replica started) is back and has
   * applied it or has been forgotten; false after `timeoutMs`. What writes and revocations wait for before
   * they answer, so that a key deleted or a user deactivated is refused by the sidecars from the caller's
   * next request on, not some milliseconds later, nor once a sidecar reconnecting after a restart has
   * caught up. Streams held by other replicas are woken by NOTIFY and are not waited for (but a remembered
   * sidecar reconnecting there is: its new stream's Acks are announced).
   */
  delivered(tenantId: string, version: number, timeoutMs: number): Promise<boolean> {
    const since = this.remembered.mark();
    const done = () => {
      for (const s of this.streams.get(tenantId) ?? []) if (!streamDelivered(s, version)) return false;
      return !this.remembered.holds(tenantId, version, since);
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
          // Remembered sidecars still away are overdue: the next writes do not wait for them.
          this.remembered.timedOut(tenantId, version, since);
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

  /** The remembered sidecars of a tenant not back yet (tests, diagnostics). */
  awaitedSidecars(tenantId: string): SidecarRef[] {
    return this.remembered.absent(tenantId);
  }

  /** The name this replica's listener has in Postgres (tests). */
  get replica(): string {
    return this.registry.replica;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    if (this.reloadTimer) clearInterval(this.reloadTimer);
    for (const set of this.waiters.values()) for (const w of [...set]) w();
    // The streams that ended (a graceful stop ends them all) are written before the listener goes: the
    // next replica to start finds them dropped, seen now.
    await this.registry.close().catch(this.onError);
    await this.client?.end().catch(() => undefined);
  }
}
