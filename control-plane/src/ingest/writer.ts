// Batches traces from every Ingest stream into the trace store: a flush when the batch is full or
// FLUSH_MS after its first trace. A caller's promise resolves only once the store has its traces,
// and rejects when the store fails, so the sidecar keeps them in its spool (back-pressure, no loss).
import type { Trace } from "@agentgov/proto";
import type { TraceStore } from "../stores/clickhouse/index.js";

interface Pending {
  traces: Trace[];
  resolve: () => void;
  reject: (e: unknown) => void;
}

export class IngestWriter {
  private queue: Pending[] = [];
  private queued = 0;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: TraceStore,
    private readonly afterInsert: (traces: Trace[]) => Promise<void>,
    private readonly maxBatch = 5000,
    private readonly flushMs = 200,
  ) {}

  write(traces: Trace[]): Promise<void> {
    if (traces.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.queue.push({ traces, resolve, reject });
      this.queued += traces.length;
      if (this.queued >= this.maxBatch) this.flushSoon(0);
      else this.flushSoon(this.flushMs);
    });
  }

  private flushSoon(ms: number): void {
    if (ms === 0) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = undefined;
      this.flushing = this.flushing.then(() => this.flush());
      return;
    }
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.flushing = this.flushing.then(() => this.flush());
    }, ms);
  }

  private async flush(): Promise<void> {
    const batch = this.queue;
    this.queue = [];
    this.queued = 0;
    if (batch.length === 0) return;
    const traces = batch.flatMap((p) => p.traces);
    try {
      await this.store.insert(traces);
      await this.afterInsert(traces);
      for (const p of batch) p.resolve();
    } catch (e) {
      for (const p of batch) p.reject(e);
    }
  }

  async drain(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.flushing = this.flushing.then(() => this.flush());
    await this.flushing;
  }
}
