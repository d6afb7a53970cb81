// Serving state shared by /readyz and the gRPC health service: stores reachable, and not draining.
// On shutdown the control plane first drains (readiness fails so load balancers stop sending), then
// stops accepting, finishes in-flight work and closes its stores.
import type { Db } from "../stores/postgres/db.js";
import type { TraceStore } from "../stores/clickhouse/index.js";

export interface Readiness {
  ready: boolean;
  draining: boolean;
  postgres: boolean;
  clickhouse: boolean;
}

export class Lifecycle {
  private drainingSince: number | undefined;
  private readonly listeners = new Set<() => void>();

  get draining(): boolean {
    return this.drainingSince !== undefined;
  }

  startDraining(): void {
    if (this.drainingSince !== undefined) return;
    this.drainingSince = Date.now();
    for (const fn of [...this.listeners]) fn();
  }

  /** Calls fn when the serving state changes (draining starts); returns the unsubscribe function. */
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** How long the process has been draining (0 when it is not). */
  drainingForMs(): number {
    return this.drainingSince === undefined ? 0 : Date.now() - this.drainingSince;
  }

  /** Checks both stores (each bounded by timeoutMs) and the draining flag. */
  async readiness(db: Pick<Db, "query">, traces: Pick<TraceStore, "ping">, timeoutMs = 2000): Promise<Readiness> {
    const bounded = <T>(p: Promise<T>, fallback: T): Promise<T> =>
      Promise.race([p.catch(() => fallback), new Promise<T>((r) => setTimeout(() => r(fallback), timeoutMs).unref())]);
    const [postgres, clickhouse] = await Promise.all([
      bounded(db.query("SELECT 1").then(() => true), false),
      bounded(traces.ping(), false),
    ]);
    const draining = this.draining;
    return { ready: postgres && clickhouse && !draining, draining, postgres, clickhouse };
  }
}
