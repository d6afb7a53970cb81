// The queue of traces not yet acknowledged by the control plane, as the shipper and the proxy see it.
// The implementation is the durable on-disk spool (spool.ts).
import type { QualityScore, Span, Trace } from "@agentgov/proto";

export interface SpoolStats {
  /** Traces appended and not yet acknowledged (nor dropped). */
  depth: number;
  /** Bytes the spool holds on disk (segment files, acknowledged records included until compaction). */
  bytes: number;
  maxBytes: number;
  /** Age of the oldest unacknowledged trace (by its timestamp), 0 when empty. */
  oldestAgeMs: number;
  segments: number;
  /** Highest `depth` / `bytes` seen since the process started. */
  highWaterDepth: number;
  highWaterBytes: number;
  appendedTotal: number;
  ackedTotal: number;
  /** Unacknowledged traces dropped because the spool was full (oldest first). */
  droppedTotal: number;
  /** Traces replayed from disk at start. */
  replayedTotal: number;
  /** Damaged bytes moved to the quarantine directory, and how many damaged ranges they were. */
  quarantinedBytes: number;
  quarantinedRanges: number;
  /** Failed writes, fsyncs or segment creations (the traces stay in memory and are still shipped). */
  writeErrors: number;
  /** The most recent append could not be written, or the most recent group commit failed (until a later one succeeds). */
  unwritable: boolean;
  /** The error that made the spool unwritable ("" while it is not). */
  lastError: string;
  /** Traces kept in memory only (not safe on disk) until the control plane acknowledges them, and their bytes (at most the spool's cache size). */
  memoryOnly: number;
  memoryOnlyBytes: number;
  /** Group commits (one fdatasync each, covering every record written since the previous one). */
  commits: number;
}

/** A spooled trace as the shipper sends it: its id and the encoded governance.v1.Trace exactly as spooled. */
export interface SpooledTrace {
  id: string;
  /** `toBinary(TraceSchema, trace)` as written to the spool; may be a view of the spool's buffers: do not modify. */
  payload: Uint8Array;
}

/** Fields added to a spooled trace after its answer has left (its quality scores and their span). */
export interface TraceAmendment {
  qualityScores: QualityScore[];
  spans: Span[];
}

export interface TraceQueue {
  /**
   * Spools a trace. Returns null when it is already as safe as the spool was asked to make it before
   * an answer leaves (written to the OS: survives a crash of the process), else a promise that resolves
   * once it is (fdatasync'd: survives a crash of the machine) — or, when the spool could not make it
   * so (a failed write or fsync), once the control plane has acknowledged it. Never rejects; may never
   * resolve (a trace dropped before its acknowledgement), so a waiter needs its own time limit.
   */
  append(t: Trace): Promise<void> | null;
  /**
   * Adds fields to the trace `id` appended in the same turn of the event loop (before the shipper can
   * have taken it): they travel with it, and survive a restart as a record written after it. As safe
   * as a page-cache write, never waited for; a trace already acknowledged or dropped is not amended.
   */
  amend(id: string, fields: TraceAmendment): void;
  /** Up to `n` traces that are synced to disk, oldest first, skipping ids in `exclude`, at most about `maxBytes` encoded. */
  peek(n: number, exclude: ReadonlySet<string>, maxBytes?: number): Promise<SpooledTrace[]>;
  /** The control plane acknowledged (or rejected for good) these traces: forget them. */
  remove(ids: readonly string[]): Promise<void>;
  /** Unacknowledged traces. */
  size(): number;
  /** Called when traces become ready to ship. */
  onAppend(fn: () => void): void;
  stats(): SpoolStats;
  close(): Promise<void>;
}
