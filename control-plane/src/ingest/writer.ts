// Batches traces from every Ingest stream into the trace store, in two stages:
//   1. insert: a batch leaves the queue when it holds `maxBatch` traces or its oldest trace has waited
//      `flushMs`; a failed insert is retried with capped backoff (the batch stays in memory) until the
//      store takes it — re-inserting is harmless, trace ids are idempotent;
//   2. finish: `afterInsert` (tool counts, today's spend, Sync wake-up) runs for every batch inserted
//      so far, one run at a time (so spend figures never go backwards), retried the same way.
// A write's promise resolves only after both stages, so a sidecar's trace is acknowledged only once it
// is stored and counted; until then the sidecar keeps it in its spool.
// Memory is bounded: at most `maxPending` traces are held (queued, being inserted or finished); a
// write that would exceed it waits for room, so the Ingest stream stops reading and HTTP/2 flow
// control pushes back to the sidecar. A write whose stream goes away while it waits for room is
// dropped; once admitted it is stored anyway (harmless: ids are idempotent; and at shutdown it
// means the traces already received are kept).
import { isTraceStoreError, type TraceFacts, type TraceStore, type TranscodedTrace } from "../stores/clickhouse/index.js";

export interface IngestWriterLogger {
  warn(o: object, m?: string): void;
  info(o: object, m?: string): void;
}

export interface IngestWriterOptions {
  /** Traces per insert (default 5000). */
  maxBatch?: number;
  /** Longest wait of a queued trace before its batch is inserted (default 200 ms; ≤ 1 s). */
  flushMs?: number;
  /** Traces held in memory before write() waits for room (default 20000). */
  maxPending?: number;
  /** Inserts running at once (default 1). */
  insertConcurrency?: number;
  /** Backoff cap between retries of a failed insert or finish (default 5000 ms). */
  retryMaxMs?: number;
  log?: IngestWriterLogger;
}

/** Traces the store refused for good (a value it cannot hold), by id with the reason. */
export type Refused = Map<string, string>;

/** Raised to writers whose write was dropped (stream gone) or that came during shutdown. */
export class IngestWriteError extends Error {
  constructor(
    readonly reason: "aborted" | "closing",
    message: string,
  ) {
    super(message);
    this.name = "IngestWriteError";
  }
}

export interface IngestWriterStats {
  /** Traces held now (queued + inserting + finishing). */
  held: number;
  /** Highest `held` seen. */
  heldHighWater: number;
  maxPending: number;
  /** Writes waiting for room. */
  waitingWrites: number;
  insertFailures: number;
  finishFailures: number;
}

interface Pending {
  traces: TranscodedTrace[];
  at: number;
  refused: Refused;
  resolve: (r: Refused) => void;
  reject: (e: unknown) => void;
}

interface RoomWaiter {
  n: number;
  go: () => void;
}

export class IngestWriter {
  private readonly maxBatch: number;
  private readonly flushMs: number;
  private readonly maxPending: number;
  private readonly insertConcurrency: number;
  private readonly retryMaxMs: number;
  private readonly log: IngestWriterLogger | undefined;

  private queue: Pending[] = [];
  private queuedTraces = 0;
  private held = 0;
  private heldHighWater = 0;
  private readonly roomWaiters: RoomWaiter[] = [];
  private inserting = 0;
  private timer: NodeJS.Timeout | undefined;
  private inserted: Pending[][] = [];
  private finishing = false;
  private closing = false;
  private readonly closeSignal = new AbortController();
  private idleWaiters: (() => void)[] = [];
  private insertFailures = 0;
  private finishFailures = 0;
  /** Set by a logged failure, cleared (and logged) by the next success. */
  private degraded = false;

  constructor(
    private readonly store: TraceStore,
    private readonly afterInsert: (traces: TraceFacts[]) => Promise<void>,
    options: IngestWriterOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 5000;
    this.flushMs = Math.min(1000, options.flushMs ?? 200);
    this.maxPending = Math.max(this.maxBatch, options.maxPending ?? 20000);
    this.insertConcurrency = Math.max(1, options.insertConcurrency ?? 2);
    this.retryMaxMs = options.retryMaxMs ?? 5000;
    this.log = options.log;
  }

  /** An encoded Trace as a row for write() (throws TraceStoreError invalid_argument for bad bytes). */
  transcode(bytes: Uint8Array): TranscodedTrace {
    return this.store.transcode(bytes);
  }

  /**
   * Resolves once the store holds `traces` and after-insert has run for them, with the traces the
   * store refused for good (normally none). Waits for room first when the writer is full. Rejects
   * with IngestWriteError when `signal` aborts while it waits for room, or at shutdown.
   */
  async write(traces: TranscodedTrace[], signal?: AbortSignal): Promise<Refused> {
    if (traces.length === 0) return new Map();
    if (this.closing) throw new IngestWriteError("closing", "the control plane is shutting down");
    await this.room(traces.length, signal);
    if (signal?.aborted) {
      this.release(traces.length);
      throw new IngestWriteError("aborted", "the stream went away");
    }
    return new Promise<Refused>((resolve, reject) => {
      const p: Pending = { traces, at: Date.now(), refused: new Map(), resolve, reject };
      this.queue.push(p);
      this.queuedTraces += traces.length;
      this.schedule();
    });
  }

  stats(): IngestWriterStats {
    return {
      held: this.held,
      heldHighWater: this.heldHighWater,
      maxPending: this.maxPending,
      waitingWrites: this.roomWaiters.length,
      insertFailures: this.insertFailures,
      finishFailures: this.finishFailures,
    };
  }

  /** Flushes everything held now (no waiting for full batches); a failure now rejects instead of retrying. */
  async drain(): Promise<void> {
    this.closing = true;
    this.closeSignal.abort();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const w of this.roomWaiters.splice(0)) w.go();
    this.schedule();
    if (this.held > 0) await new Promise<void>((r) => this.idleWaiters.push(r));
  }

  /** Waits until `n` more traces fit (a write larger than the whole bound goes in alone). */
  private room(n: number, signal?: AbortSignal): Promise<void> {
    const fits = () => this.held === 0 || this.held + n <= this.maxPending;
    if (this.roomWaiters.length === 0 && fits()) return this.take(n);
    if (signal?.aborted) return Promise.reject(new IngestWriteError("aborted", "the stream went away"));
    return new Promise<void>((resolve, reject) => {
      const waiter: RoomWaiter = {
        n,
        go: () => {
          signal?.removeEventListener("abort", onAbort);
          if (this.closing) reject(new IngestWriteError("closing", "the control plane is shutting down"));
          else resolve(this.take(n));
        },
      };
      const onAbort = () => {
        const i = this.roomWaiters.indexOf(waiter);
        if (i >= 0) this.roomWaiters.splice(i, 1);
        reject(new IngestWriteError("aborted", "the stream went away"));
        this.admitWaiters();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.roomWaiters.push(waiter);
    });
  }

  private take(n: number): Promise<void> {
    this.held += n;
    this.heldHighWater = Math.max(this.heldHighWater, this.held);
    return Promise.resolve();
  }

  private release(n: number): void {
    this.held -= n;
    this.admitWaiters();
    if (this.held === 0) for (const r of this.idleWaiters.splice(0)) r();
  }

  /** Lets waiting writes in, in arrival order, while they fit. */
  private admitWaiters(): void {
    for (;;) {
      const w = this.roomWaiters[0];
      if (!w || !(this.held === 0 || this.held + w.n <= this.maxPending)) return;
      this.roomWaiters.shift();
      w.go();
    }
  }

  private ready(): boolean {
    const head = this.queue[0];
    if (!head) return false;
    return this.closing || this.queuedTraces >= this.maxBatch || Date.now() - head.at >= this.flushMs;
  }

  /** Starts inserts while batches are ready and slots are free; otherwise arms the flush timer. */
  private schedule(): void {
    while (this.inserting < this.insertConcurrency && this.ready()) {
      const batch = this.takeBatch();
      this.inserting++;
      void this.insert(batch).finally(() => {
        this.inserting--;
        this.schedule();
      });
    }
    const head = this.queue[0];
    if (head && !this.timer && this.inserting < this.insertConcurrency) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.schedule();
      }, Math.max(0, this.flushMs - (Date.now() - head.at)));
    }
  }

  /** Whole writes from the queue's head, up to maxBatch traces (at least one write). */
  private takeBatch(): Pending[] {
    const batch: Pending[] = [];
    let n = 0;
    while (this.queue.length > 0) {
      const p = this.queue[0]!;
      if (batch.length > 0 && n + p.traces.length > this.maxBatch) break;
      this.queue.shift();
      batch.push(p);
      n += p.traces.length;
    }
    this.queuedTraces -= n;
    return batch;
  }

  private async insert(batch: Pending[]): Promise<void> {
    const traces = batch.flatMap((p) => p.traces);
    for (let attempt = 1; ; attempt++) {
      try {
        await this.store.insertTranscoded(traces);
        break;
      } catch (e) {
        try {
          if (isTraceStoreError(e) && e.code === "invalid_argument") {
            // A value the store cannot hold (the ingest service checks for what it knows): store the
            // others one by one and refuse the culprits for good, so one bad trace cannot block ingest.
            await this.isolate(batch);
            break;
          }
          this.insertFailures++;
          if (this.closing) throw e;
        } catch (fatal) {
          this.fail(batch, fatal);
          return;
        }
        this.logFailure("insert", attempt, traces.length, e);
        await this.backoff(attempt);
      }
    }
    this.inserted.push(batch);
    void this.finish();
  }

  private async isolate(batch: Pending[]): Promise<void> {
    for (const p of batch) {
      for (const t of p.traces) {
        for (let attempt = 1; ; attempt++) {
          try {
            await this.store.insertTranscoded([t]);
            break;
          } catch (e) {
            if (isTraceStoreError(e) && e.code === "invalid_argument") {
              p.refused.set(t.facts.id, `the trace store refused it: ${e.message}`);
              break;
            }
            if (this.closing) throw e;
            await this.backoff(attempt);
          }
        }
      }
    }
  }

  private async finish(): Promise<void> {
    if (this.finishing) return;
    this.finishing = true;
    try {
      while (this.inserted.length > 0) {
        const group = this.inserted.splice(0).flat();
        const traces = group.flatMap((p) =>
          (p.refused.size === 0 ? p.traces : p.traces.filter((t) => !p.refused.has(t.facts.id))).map((t) => t.facts),
        );
        let failed: unknown;
        for (let attempt = 1; ; attempt++) {
          try {
            if (traces.length > 0) await this.afterInsert(traces);
            break;
          } catch (e) {
            this.finishFailures++;
            if (this.closing) {
              failed = e;
              break;
            }
            this.logFailure("after-insert", attempt, traces.length, e);
            await this.backoff(attempt);
          }
        }
        if (failed !== undefined) this.fail(group, failed);
        else {
          if (this.degraded) {
            this.degraded = false;
            this.log?.info({ traces: traces.length, held: this.held }, "ingest recovered: batches are stored again");
          }
          for (const p of group) {
            p.resolve(p.refused);
            this.release(p.traces.length);
          }
        }
      }
    } finally {
      this.finishing = false;
    }
  }

  private fail(batch: Pending[], e: unknown): void {
    for (const p of batch) {
      p.reject(e);
      this.release(p.traces.length);
    }
  }

  private logFailure(stage: string, attempt: number, traces: number, e: unknown): void {
    // First failure, then every 10th, so an outage is visible without flooding the log.
    this.degraded = true;
    if (attempt === 1 || attempt % 10 === 0) {
      this.log?.warn({ err: e, stage, attempt, traces, held: this.held }, `ingest ${stage} failed; retrying (the sidecars keep the traces until acknowledged)`);
    }
  }

  private backoff(attempt: number): Promise<void> {
    const base = Math.min(this.retryMaxMs, 100 * 2 ** Math.min(attempt - 1, 10));
    const ms = base / 2 + Math.random() * (base / 2);
    const signal = this.closeSignal.signal;
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const done = () => {
        clearTimeout(t);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const t = setTimeout(done, ms);
      signal.addEventListener("abort", done);
    });
  }
}
