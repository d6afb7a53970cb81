// Ships traces to the control plane over Ingest (bidi stream): batches go out, and a trace leaves the
// queue only when the control plane acknowledges it (or rejects it for good). On any stream failure
// every unacknowledged trace is sent again; trace ids make redelivery idempotent.
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { IngestService, UploadRequestSchema, type Trace, type UploadRequest } from "@agentgov/proto";
import type { TraceQueue } from "./queue.js";

const BATCH = 500;
const MAX_IN_FLIGHT_BATCHES = 8;

export interface ShipperEvents {
  onError(e: unknown): void;
  onRejected(traceId: string, reason: string): void;
}

export class TraceShipper {
  private readonly client: Client<typeof IngestService>;
  private readonly abort = new AbortController();
  private running: Promise<void> | undefined;
  private wake: (() => void) | undefined;

  constructor(
    transport: Transport,
    private readonly key: string,
    private readonly queue: TraceQueue,
    private readonly events: ShipperEvents,
  ) {
    this.client = createClient(IngestService, transport);
    queue.onAppend(() => this.wake?.());
  }

  start(): void {
    this.running ??= this.loop();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((r) => {
      const t = setTimeout(() => {
        this.wake = undefined;
        r();
      }, ms);
      this.wake = () => {
        clearTimeout(t);
        this.wake = undefined;
        r();
      };
    });
  }

  private async loop(): Promise<void> {
    let attempt = 0;
    while (!this.abort.signal.aborted) {
      if (this.queue.size() === 0) {
        await this.sleep(1000);
        continue;
      }
      try {
        await this.session();
        attempt = 0;
      } catch (e) {
        if (this.abort.signal.aborted) break;
        this.events.onError(e);
        attempt++;
        const base = Math.min(5000, 100 * 2 ** Math.min(attempt, 6));
        await new Promise((r) => setTimeout(r, base / 2 + Math.random() * (base / 2)));
      }
    }
  }

  /** One Ingest stream: sends what is queued, and ends once everything sent is acknowledged and the queue is empty. */
  private async session(): Promise<void> {
    const inFlight = new Map<bigint, Trace[]>();
    const sent = new Set<string>();
    let batchId = 0n;
    let finished = false;
    let wakeSender: (() => void) | undefined;
    const self = this;

    async function* requests(): AsyncGenerator<UploadRequest> {
      while (!finished && !self.abort.signal.aborted) {
        if (inFlight.size >= MAX_IN_FLIGHT_BATCHES) {
          await new Promise<void>((r) => (wakeSender = r));
          continue;
        }
        const next = self.queue.peek(BATCH, sent);
        if (next.length === 0) {
          if (inFlight.size === 0) return;
          await new Promise<void>((r) => (wakeSender = r));
          continue;
        }
        batchId++;
        for (const t of next) sent.add(t.id);
        inFlight.set(batchId, next);
        yield create(UploadRequestSchema, { batchId, traces: next });
      }
    }

    const responses = this.client.upload(requests(), { headers: { authorization: `Bearer ${this.key}` }, signal: this.abort.signal });
    try {
      for await (const res of responses) {
        inFlight.delete(res.batchId);
        const done = [...res.ackedTraceIds, ...res.rejected.map((r) => r.traceId)];
        for (const r of res.rejected) this.events.onRejected(r.traceId, r.reason);
        await this.queue.remove(done);
        for (const id of done) sent.delete(id);
        wakeSender?.();
      }
    } finally {
      finished = true;
      wakeSender?.();
    }
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.wake?.();
    await this.running;
  }
}
