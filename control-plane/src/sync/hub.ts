// Wakes Sync streams when their tenant changes. Every replica LISTENs on one Postgres channel, so a
// change committed through any replica reaches the sidecars connected to every other replica. The
// listening connection also applies the change log's retention once an hour.
import pg from "pg";
import { SYNC_CHANNEL } from "../stores/postgres/sync-changes.js";
import { pruneChanges } from "./change-window.js";

const PRUNE_EVERY_MS = 3600_000;

export class SyncHub {
  private readonly counters = new Map<string, number>();
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

  async close(): Promise<void> {
    this.closed = true;
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    for (const set of this.waiters.values()) for (const w of [...set]) w();
    await this.client?.end().catch(() => undefined);
  }
}
