// Shared by the traces-* and ingest-* tests: realistic Trace messages (ids `trc_<ULID>` minted at the
// trace's time) and an Ingest.Upload client that behaves like a sidecar's shipper: it keeps every
// trace until the control plane acknowledges or rejects it, and resends the unacknowledged ones on a
// new stream after any failure.
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  IngestService, PiiDetectionSchema, PolicyEvaluationSchema, QualityScoreSchema, SpanSchema, ToolCallSchema, TraceSchema,
  UploadRequestSchema, type Trace, type UploadRequest,
} from "@agentgov/proto";
import { newId } from "../../control-plane/src/domain/ids.js";

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

export interface TraceSpec {
  tenantId: string;
  agentId: string;
  agentName?: string;
  atMs: number;
  status?: "success" | "error" | "blocked";
  environment?: string;
  provider?: string;
  model?: string;
  latencyMs?: number;
  costUsd?: number;
  inputTokens?: number;
  outputTokens?: number;
  injectionScore?: number;
  pii?: boolean;
  sessionId?: string;
  tools?: string[];
  policiesFired?: string[];
}

/** A complete trace as a sidecar builds it (texts, spans, evaluations, PII, quality, tools). */
export function makeTrace(s: TraceSpec): Trace {
  const status = s.status ?? "success";
  const inputTokens = s.inputTokens ?? 120;
  const outputTokens = status === "blocked" ? 0 : (s.outputTokens ?? 40);
  const pIn = 0.15;
  const pOut = 0.6;
  const inputCost = (inputTokens * pIn) / 1e6;
  const outputCost = (outputTokens * pOut) / 1e6;
  const latency = s.latencyMs ?? 250;
  const prompt = s.pii ? "You are helpful.\n\nMy SSN is *********** please file it" : "You are helpful.\n\nSummarise the meeting notes";
  const blocked = status === "blocked";
  return create(TraceSchema, {
    id: newId("trc", s.atMs),
    tenantId: s.tenantId,
    agentId: s.agentId,
    agentName: s.agentName ?? "agent",
    environment: s.environment ?? "production",
    sessionId: s.sessionId,
    provider: s.provider ?? "openai",
    model: s.model ?? "gpt-4o-mini",
    status,
    timestampMs: BigInt(s.atMs),
    requestId: `req_${Math.random().toString(36).slice(2)}`,
    httpStatus: blocked ? 403 : status === "error" ? 500 : 200,
    errorCode: blocked ? "policy_violation" : status === "error" ? "upstream_error" : "",
    inputTokens,
    outputTokens,
    cachedInputTokens: 0,
    tokensEstimated: false,
    costUsd: s.costUsd ?? inputCost + outputCost,
    inputCost,
    outputCost,
    pricePerMillionInput: pIn,
    pricePerMillionOutput: pOut,
    priceVersion: "2026-11-01",
    priceMissing: false,
    latencyMs: latency,
    providerMs: blocked ? 0 : latency * 0.9,
    overheadMs: latency * 0.1,
    spans: [
      create(SpanSchema, { stage: "policy_eval", durationMs: 0.4 }),
      create(SpanSchema, { stage: "pii_scan", durationMs: 1.2 }),
      ...(blocked ? [] : [create(SpanSchema, { stage: "provider", durationMs: latency * 0.9 })]),
      create(SpanSchema, { stage: "quality_score", durationMs: 0.7 }),
    ],
    injectionScore: s.injectionScore ?? 0.05,
    piiScanEnabled: true,
    piiDetections: s.pii ? [create(PiiDetectionSchema, { entityType: "ssn", start: 28, end: 39, source: "prompt", score: 0.95 })] : [],
    policyEvaluations: [
      create(PolicyEvaluationSchema, { policyId: "pol_01JD3Z6Q4W8X9Y0Z1A2B3C4D5E", policyName: "no SSN", result: blocked ? "fail" : "pass", actionTaken: blocked ? "block" : "none" }),
    ],
    policiesFired: s.policiesFired ?? (blocked ? ["no SSN"] : []),
    policiesEvaluated: 1,
    policiesBlocked: blocked ? 1 : 0,
    qualityScores: blocked ? [] : [create(QualityScoreSchema, { scorer: "relevance", score: 0.8 })],
    toolCalls: (s.tools ?? []).map((name, i) => create(ToolCallSchema, { name, id: `call_${i}` })),
    prompt,
    completion: blocked ? "" : "The meeting agreed on the plan.",
    streamed: false,
  });
}

export interface UploadOutcome {
  acked: Set<string>;
  rejected: Map<string, string>;
  /** Streams that failed and were replaced. */
  streamFailures: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Uploads `traces` over Ingest.Upload in batches (up to `inFlight` unacknowledged), resending what is
 * not acknowledged on a new stream after a failure, until every trace is acknowledged or rejected
 * (or `deadlineMs` passes, which throws).
 */
export async function uploadTraces(
  grpcUrl: string,
  key: string,
  traces: readonly Trace[],
  o: { batch?: number; inFlight?: number; deadlineMs?: number; onAck?: (ids: readonly string[]) => void } = {},
): Promise<UploadOutcome> {
  const batchSize = o.batch ?? 500;
  const maxInFlight = o.inFlight ?? 8;
  const deadline = Date.now() + (o.deadlineMs ?? 120_000);
  const client = createClient(IngestService, createGrpcTransport({ baseUrl: grpcUrl }));
  const out: UploadOutcome = { acked: new Set(), rejected: new Map(), streamFailures: 0 };
  const done = (id: string) => out.acked.has(id) || out.rejected.has(id);
  for (let attempt = 0; ; attempt++) {
    const todo = traces.filter((t) => !done(t.id));
    if (todo.length === 0) return out;
    if (Date.now() > deadline) throw new Error(`upload not finished by its deadline: ${todo.length} traces unacknowledged`);
    const batches: Trace[][] = [];
    for (let i = 0; i < todo.length; i += batchSize) batches.push(todo.slice(i, i + batchSize));
    const pending = new Set<bigint>();
    let wake: (() => void) | undefined;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), Math.max(1000, deadline - Date.now()));
    async function* requests(): AsyncGenerator<UploadRequest> {
      for (let i = 0; i < batches.length; i++) {
        while (pending.size >= maxInFlight) await new Promise<void>((r) => (wake = r));
        pending.add(BigInt(i + 1));
        yield create(UploadRequestSchema, { batchId: BigInt(i + 1), traces: batches[i] });
      }
      while (pending.size > 0) await new Promise<void>((r) => (wake = r));
    }
    try {
      for await (const res of client.upload(requests(), { headers: { authorization: `Bearer ${key}` }, signal: abort.signal })) {
        for (const id of res.ackedTraceIds) out.acked.add(id);
        for (const r of res.rejected) out.rejected.set(r.traceId, r.reason);
        o.onAck?.(res.ackedTraceIds);
        pending.delete(res.batchId);
        const w = wake;
        wake = undefined;
        w?.();
      }
    } catch {
      out.streamFailures++;
      await sleep(Math.min(2000, 100 * 2 ** Math.min(attempt, 5)));
    } finally {
      clearTimeout(timer);
      const w = wake;
      wake = undefined;
      w?.();
    }
  }
}

export interface BatchRecord {
  ids: string[];
  sentAtMs: number;
  ackAtMs?: number;
}

/**
 * A long-lived uploader like a sidecar's shipper: traces pushed at any time go out on one stream
 * (batches of up to `batch`, at most `inFlight` unacknowledged); after a stream failure every
 * unacknowledged trace is sent again on a new stream. `records` keeps when each batch was sent and
 * acknowledged.
 */
export class StreamingUploader {
  readonly acked = new Set<string>();
  readonly rejected = new Map<string, string>();
  readonly records: BatchRecord[] = [];
  streamFailures = 0;
  private readonly unsent: Trace[] = [];
  private readonly inFlight = new Map<bigint, { traces: Trace[]; record: BatchRecord }>();
  private wake: (() => void) | undefined;
  private stopped = false;
  private readonly running: Promise<void>;
  private readonly abort = new AbortController();
  private nextBatchId = 0n;
  private generation = 0;

  constructor(
    grpcUrl: string,
    private readonly key: string,
    private readonly o: { batch?: number; inFlight?: number } = {},
  ) {
    const client = createClient(IngestService, createGrpcTransport({ baseUrl: grpcUrl }));
    this.running = this.loop(client);
  }

  push(traces: readonly Trace[]): void {
    this.unsent.push(...traces);
    this.poke();
  }

  /** Resolves when every pushed trace is acknowledged or rejected. */
  async settled(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.unsent.length > 0 || this.inFlight.size > 0) {
      if (Date.now() > deadline) throw new Error(`${this.unsent.length + [...this.inFlight.values()].reduce((s, b) => s + b.traces.length, 0)} traces still unacknowledged`);
      await sleep(50);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    this.poke();
    await this.running;
  }

  /** The requests of one stream; a generator of a failed stream takes no traces any more. */
  private async *requests(generation: number, batch: number, maxInFlight: number): AsyncGenerator<UploadRequest> {
    while (!this.stopped && generation === this.generation) {
      if (this.unsent.length === 0 || this.inFlight.size >= maxInFlight) {
        await new Promise<void>((r) => {
          this.wake = r;
          setTimeout(r, 200);
        });
        continue;
      }
      const traces = this.unsent.splice(0, batch);
      const batchId = ++this.nextBatchId;
      const record: BatchRecord = { ids: traces.map((t) => t.id), sentAtMs: Date.now() };
      this.records.push(record);
      this.inFlight.set(batchId, { traces, record });
      yield create(UploadRequestSchema, { batchId, traces });
    }
  }

  private poke(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  private async loop(client: ReturnType<typeof createClient<typeof IngestService>>): Promise<void> {
    const batch = this.o.batch ?? 200;
    const maxInFlight = this.o.inFlight ?? 8;
    for (let attempt = 0; !this.stopped; attempt++) {
      if (this.unsent.length === 0) {
        await new Promise<void>((r) => {
          this.wake = r;
          setTimeout(r, 200);
        });
        continue;
      }
      const generation = ++this.generation;
      const requests = this.requests(generation, batch, maxInFlight);
      try {
        for await (const res of client.upload(requests, { headers: { authorization: `Bearer ${this.key}` }, signal: this.abort.signal })) {
          const b = this.inFlight.get(res.batchId);
          this.inFlight.delete(res.batchId);
          if (b) b.record.ackAtMs = Date.now();
          for (const id of res.ackedTraceIds) this.acked.add(id);
          for (const r of res.rejected) this.rejected.set(r.traceId, r.reason);
          this.poke();
          attempt = 0;
        }
      } catch {
        if (this.stopped) break;
        this.streamFailures++;
      }
      // Whatever was not acknowledged goes out again on the next stream.
      this.generation++;
      for (const b of this.inFlight.values()) this.unsent.unshift(...b.traces);
      this.inFlight.clear();
      await sleep(Math.min(2000, 100 * 2 ** Math.min(attempt, 5)));
    }
  }
}
