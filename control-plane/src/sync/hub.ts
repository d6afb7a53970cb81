// Wakes Sync streams when their tenant changes. Every replica LISTENs on one Postgres channel, so a
// change committed through any replica reaches the sidecars connected to every other replica. The
// listening connection also applies the change log's retention once an hour.
import pg from "pg";
import { SYNC_CHANNEL } from "../stores/postgres/sync-changes.js";
import { pruneChanges } from "./change-window.js";

const PRUNE_EVERY_MS = 3600_000;
/**
 * How long a REST write (or an identity event that changes a user) waits for this replica's Sync streams to have
 * sent its change before answering anyway: a healthy stream takes milliseconds; a stuck one must not hold the
 * caller (its sidecar then fails closed on staleness, DESIGN.md §9).
 */
export const SYNC_DELIVERY_WAIT_MS = 2000;

/** One Sync stream of this replica, as the hub tracks what it has sent (see SyncHub.delivered). */
export interface StreamTracker {
  /** Every change of the tenant numbered ≤ version has been handed to the stream. */
  sent(version: number): void;
  close(): void;
}

export class SyncHub {
  private readonly counters = new Map<string, number>();
  /** Per tenant, the version each open stream of this replica has sent. */
  private readonly streams = new Map<string, Map<StreamTracker, number>>();
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
  track(tenantId: string): StreamTracker {
    const streams = this.streams.get(tenantId) ?? new Map<StreamTracker, number>();
    this.streams.set(tenantId, streams);
    const tracker: StreamTracker = {
      sent: (version) => {
        if (version <= (streams.get(tracker) ?? 0)) return;
        streams.set(tracker, version);
        this.checkDeliveries(tenantId);
      },
      close: () => {
        streams.delete(tracker);
        if (streams.size === 0 && this.streams.get(tenantId) === streams) this.streams.delete(tenantId);
        this.checkDeliveries(tenantId);
      },
    };
    streams.set(tracker, 0);
    return tracker;
  }

  /**
   * Wakes the tenant's streams and resolves true once every Sync stream of this replica for the tenant
   * has sent `version` (or has closed), false after `timeoutMs`. What revocations wait for before they
   * answer, so that a key deleted or a user deactivated is refused by the sidecars from the caller's
   * next request on, not some milliseconds later. Streams held by other replicas are woken by NOTIFY
   * and are not waited for.
   */
  delivered(tenantId: string, version: number, timeoutMs: number): Promise<boolean> {
    const done = () => [...(this.streams.get(tenantId)?.values() ?? [])].every((v) => v >= version);
    this.bump(tenantId);
    if (done()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        tenantId,
        version,
        check: () => {
          if (!done()) return;
          finish(true);
        },
      };
      const finish = (ok: boolean) => {
        clearTimeout(timer);
        this.deliveryWaiters.delete(waiter);
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
