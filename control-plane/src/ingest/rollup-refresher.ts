// Keeps the trace store's hourly rollups current: every ROLLUP_REFRESH_MS (and right away again while
// a run found a full batch of stale hours) the closed hours written to since their rollup are
// recomputed. Statistics never depend on it for correctness (stale hours are read from the traces),
// only for speed; several control-plane replicas may run it at once (a recomputation is idempotent).
import type { TraceStore } from "../stores/clickhouse/index.js";
import { REFRESH_BATCH_HOURS } from "../stores/clickhouse/rollup.js";

export const ROLLUP_REFRESH_MS = 30_000;

export interface RollupRefresherLogger {
  warn(o: object, m?: string): void;
}

export class RollupRefresher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly store: Pick<TraceStore, "refreshRollups">,
    private readonly log: RollupRefresherLogger,
    private readonly intervalMs = ROLLUP_REFRESH_MS,
    private readonly batchHours = REFRESH_BATCH_HOURS,
  ) {}

  start(firstDelayMs = 5_000): void {
    this.schedule(firstDelayMs);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.run();
    }, ms);
    this.timer.unref();
  }

  private async run(): Promise<void> {
    let computed = 0;
    try {
      computed = await this.store.refreshRollups(new Date());
    } catch (e) {
      if (!this.stopped) this.log.warn({ err: e }, "refreshing trace rollups failed; statistics read the traces meanwhile");
    }
    this.schedule(computed >= this.batchHours ? 1_000 : this.intervalMs);
  }

  /** Stops the timer and waits for a run in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
