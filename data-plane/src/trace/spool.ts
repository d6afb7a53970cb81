// The durable trace spool: every trace is written to an on-disk segment (framed and checksummed,
// spool-format.ts) the moment it is appended — one write(2) into the page cache, so a crash of the
// process (kill -9, OOM kill) cannot lose it — and made durable against a crash of the machine by
// fdatasync group commits (one fdatasync for everything written since the previous one, at most one
// per `syncIntervalMs`) before it may be shipped; it is forgotten only when the control plane
// acknowledges it. `append` resolves at the level the caller asked for (`resolveOn`): written, or synced.
//
// Layout under `dir`: `seg-<seq>.log` (records, append-only, one active segment at a time),
// `seg-<seq>.acks` (ids acknowledged from that segment; written without fsync: a lost ack only means a
// redelivery, which trace ids make idempotent), `quarantine/` (damaged bytes found at replay, one file
// per damaged range), `LOCK` (the owning process: pid, start time, boot id; lock-holder.ts).
// Compaction: a sealed segment whose every trace is acknowledged is deleted with its ack file.
// At start every segment is scanned: good records not acknowledged are replayed, damaged ranges are
// copied to quarantine/ and skipped. An amendment (fields added to a trace after its answer left: its
// quality scores) is its own record, written after the trace's; it travels with the trace (its bytes
// appended to the trace's encoding) and is replayed onto it. When the spool would exceed `maxBytes`, whole sealed segments are
// dropped oldest first (counted and logged as errors); appends never wait for room.
// When a record cannot be written (disk full, I/O error) or, with resolveOn "fsync", its fdatasync fails,
// the trace is kept in memory and shipped from there, and its append resolves only once the control
// plane acknowledges it (the response gate holds the answer until then, bounded by its own limit). Writes
// are not tried again for WRITE_RETRY_MS after a failure (the traces of that second are kept in memory
// at once, and a broken segment is replaced at most once per second, not once per trace); traces kept in
// memory only are at most `cacheBytes`, oldest dropped first (counted, logged).
import { close as closeCb, closeSync, existsSync, fdatasync, mkdirSync, open as openCb, unlink as unlinkCb, openSync, readdirSync, readFileSync, statSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import { create, TraceSchema, type Trace } from "@agentgov/proto";
import type { SpooledTrace, SpoolStats, TraceAmendment, TraceQueue } from "./queue.js";
import { amendmentParts, concatOwn, decodeRecord, encodeRecord, HEADER_BYTES, scanRecords, sealRecord, traceKeyFields } from "./spool-format.js";
import { encodeTrace } from "./trace-encoding.js";
import { releaseLockFile, takeLockFile } from "./lock-holder.js";

const fdatasyncAsync = promisify(fdatasync);
const openAsync = promisify(openCb);
const closeAsync = promisify(closeCb);
const unlinkAsync = promisify(unlinkCb);

export const DEFAULT_SPOOL_MAX_BYTES = 1024 * 1024 * 1024;
const MAX_SEGMENT_BYTES = 64 * 1024 * 1024;
const MIN_SEGMENT_BYTES = 64 * 1024;
const DEFAULT_CACHE_BYTES = 32 * 1024 * 1024;
const ROTATE_ACKED_BYTES = 1024 * 1024;
/** After a failed write or fsync, no write is tried (nor a broken segment replaced) for this long. */
export const WRITE_RETRY_MS = 1000;
/**
 * Amendment records wait at most this long for the next trace's write(2), which carries them: a write(2)
 * on this VM costs 13–40 µs of the event loop, and under load the next trace comes within a millisecond,
 * so an answered call costs one write instead of two. Idle, they are written on their own after this.
 */
export const AMENDMENT_WRITE_DELAY_MS = 20;
/** Drops of memory-only traces are logged at most this often. */
const DROP_LOG_MS = 1000;
const SEGMENT_FILE = /^seg-(\d{12})\.log$/;
/**
 * An amendment is encoded as a Trace holding only the id and the added fields: this one message, whose
 * id and amended fields are set, encoded and cleared again in one synchronous call. Spreading a blank
 * Trace into a new object per amendment cost ~8 µs (the copy of some forty fields), four times the
 * encoding itself.
 */
const AMENDMENT: Trace = create(TraceSchema);
const ACKS_FILE = /^seg-(\d{12})\.acks$/;

export interface SpoolLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface SpoolOptions {
  dir: string;
  maxBytes?: number;
  /** Segment size; default maxBytes/16 within [64 KiB, 64 MiB], so that a drop when full frees 1/16 of the spool. */
  segmentBytes?: number;
  /** Encoded traces (record bytes) kept in memory for shipping; the rest are read back from disk. */
  cacheBytes?: number;
  /**
   * What `append` waits for: "write" — the record is in the operating system's page cache (survives a
   * crash of the process; `append` returns null, there is nothing to wait for) — or "fsync" (default) —
   * its group commit's fdatasync returned (survives a crash of the machine).
   */
  resolveOn?: "write" | "fsync";
  /** Least time between the starts of two fdatasyncs (group commit window); 0 = as soon as the previous one ends. */
  syncIntervalMs?: number;
  /**
   * Opens a new segment file for writing (default: creates it, `wx`, mode 0600). Tests pass one that
   * returns a descriptor whose writes or fsyncs really fail (/dev/full: ENOSPC; /dev/null: no fdatasync)
   * to drive the failure paths through the real system calls.
   */
  openSegmentFile?: (path: string) => number;
  log: SpoolLog;
}

/** Another live process owns the spool directory. */
export class SpoolLockedError extends Error {
  constructor(readonly dir: string, readonly pid: number) {
    super(`trace spool ${dir} is in use by process ${pid}; two sidecars cannot share a DATA_DIR`);
    this.name = "SpoolLockedError";
  }
}

interface Segment {
  seq: number;
  path: string;
  acksPath: string;
  /** Bytes assigned in the file (written or waiting in the commit queue). */
  size: number;
  /** Entries of this segment still in the index. */
  live: number;
  /** Records written and not yet covered by a finished fdatasync (the file stays open until 0). */
  unsynced: number;
  sealed: boolean;
  writeFd: number | undefined;
  dirSynced: boolean;
  /** A write failed part-way or an fdatasync failed: the segment takes no more records. */
  broken: boolean;
  /** An fdatasync failed: nothing in this segment is trusted to be synced (never synced again). */
  syncFailed: boolean;
  deleted: boolean;
  readFh: Promise<FileHandle> | undefined;
  ackFh: Promise<FileHandle> | undefined;
  ackChain: Promise<void>;
}

interface Entry {
  id: string;
  seg: Segment;
  /** -1: never written (the write failed); kept in memory only. */
  offset: number;
  length: number;
  ts: number;
  /** The encoded trace, cached (a view of the record buffer, which is never modified after sealRecord). */
  payload: Uint8Array | undefined;
  /** Encoded fields amended after the trace was appended (always in memory: a few hundred bytes), shipped after its payload. */
  extra: Uint8Array | undefined;
  /** Synced to disk, or kept in memory only after a failed write or fsync: either way it may be shipped. */
  ready: boolean;
  /** Not safe at the level appends resolve at (its write, or with "fsync" its fdatasync, failed): the payload is the only copy that counts. */
  memoryOnly: boolean;
  /** Resolves the append's promise: at the group commit ("fsync"), or at the acknowledgement of a memory-only trace. */
  safe: (() => void) | undefined;
}

const segName = (seq: number) => `seg-${String(seq).padStart(12, "0")}`;

function encodeAmendment(id: string, fields: TraceAmendment): Buffer {
  AMENDMENT.id = id;
  AMENDMENT.qualityScores = fields.qualityScores;
  AMENDMENT.spans = fields.spans;
  try {
    return sealRecord(encodeTrace(AMENDMENT, HEADER_BYTES), "amendment");
  } finally {
    AMENDMENT.id = "";
    AMENDMENT.qualityScores = [];
    AMENDMENT.spans = [];
  }
}

export class DurableSpool implements TraceQueue {
  private readonly index = new Map<string, Entry>();
  private readonly segments: Segment[] = [];
  private active!: Segment;
  /** Written, waiting for the next fdatasync (in order), and the appends waiting for it ("fsync" mode). */
  private unsynced: Entry[] = [];
  /** Amendment records not written yet (the next append's write carries them; see AMENDMENT_WRITE_DELAY_MS). */
  private pendingAmendments: Buffer[] = [];
  private amendmentTimer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> | undefined;
  private syncTimeout: NodeJS.Timeout | undefined;
  private syncImmediate: NodeJS.Immediate | undefined;
  private lastSyncStartMs = Number.NEGATIVE_INFINITY;
  /** flush() is waiting: the next fdatasync starts without the group commit window. */
  private urgent = false;
  private readonly resolveOn: "write" | "fsync";
  private readonly syncIntervalMs: number;
  private readonly listeners: (() => void)[] = [];
  private cachedBytes = 0;
  private closed = false;
  /** The next segment's file, created ahead of its rotation. */
  private spare: { seq: number; fd: number; path: string } | undefined;
  private spareOpening = false;
  private readonly pendingFileOps = new Set<Promise<void>>();
  private readonly maxBytes: number;
  private readonly segmentBytes: number;
  private readonly cacheBytes: number;
  private readonly quarantineDir: string;
  private readonly lockPath: string;
  private readonly openSegmentFile: (path: string) => number;
  /** Traces kept in memory only (oldest first), and their record bytes (bounded by cacheBytes). */
  private readonly memoryOnly = new Set<Entry>();
  private memoryOnlyBytes = 0;
  /** After a failure, appends keep their traces in memory without trying to write until `retryAt` (performance.now()). */
  private retryPending = false;
  private retryAt = 0;
  /** When a broken active segment was last replaced (at most once per WRITE_RETRY_MS). */
  private lastFailoverAt = Number.NEGATIVE_INFINITY;
  /** The most recent append could not be written / the most recent group commit failed (cleared by a later success). */
  private writeFailing = false;
  private syncFailing = false;
  private lastError = "";
  /** Appends kept in memory since writing last failed (for the recovery log line). */
  private failedAppends = 0;
  private unloggedDrops = 0;
  private lastDropLogAt = Number.NEGATIVE_INFINITY;
  private readonly counters = {
    highWaterDepth: 0,
    highWaterBytes: 0,
    appendedTotal: 0,
    ackedTotal: 0,
    droppedTotal: 0,
    replayedTotal: 0,
    quarantinedBytes: 0,
    quarantinedRanges: 0,
    writeErrors: 0,
    commits: 0,
  };

  private constructor(private readonly opts: SpoolOptions) {
    this.maxBytes = opts.maxBytes ?? DEFAULT_SPOOL_MAX_BYTES;
    this.segmentBytes = opts.segmentBytes ?? Math.min(MAX_SEGMENT_BYTES, Math.max(MIN_SEGMENT_BYTES, Math.floor(this.maxBytes / 16)));
    this.cacheBytes = opts.cacheBytes ?? DEFAULT_CACHE_BYTES;
    this.resolveOn = opts.resolveOn ?? "fsync";
    this.syncIntervalMs = opts.syncIntervalMs ?? 0;
    this.quarantineDir = join(opts.dir, "quarantine");
    this.lockPath = join(opts.dir, "LOCK");
    this.openSegmentFile = opts.openSegmentFile ?? ((path) => openSync(path, "wx", 0o600));
  }

  /** Opens (or creates) the spool in `opts.dir`, replaying what was not acknowledged. */
  static async open(opts: SpoolOptions): Promise<DurableSpool> {
    const s = new DurableSpool(opts);
    s.lock();
    s.replay();
    s.active = s.newSegment(s.nextSeq());
    await s.syncDir();
    s.active.dirSynced = true;
    return s;
  }

  private lock(): void {
    mkdirSync(this.opts.dir, { recursive: true, mode: 0o700 });
    const holder = takeLockFile(this.lockPath);
    if (holder) throw new SpoolLockedError(this.opts.dir, holder.pid);
  }

  private nextSeq(): number {
    return (this.segments.at(-1)?.seq ?? 0) + 1;
  }

  private makeSegment(seq: number, size: number): Segment {
    const base = join(this.opts.dir, segName(seq));
    return {
      seq,
      path: `${base}.log`,
      acksPath: `${base}.acks`,
      size,
      live: 0,
      unsynced: 0,
      sealed: true,
      writeFd: undefined,
      dirSynced: true,
      broken: false,
      syncFailed: false,
      deleted: false,
      readFh: undefined,
      ackFh: undefined,
      ackChain: Promise.resolve(),
    };
  }

  private newSegment(seq: number): Segment {
    const seg = this.makeSegment(seq, 0);
    // The file made ready in the background since the last rotation, if any (creating a file costs
    // ~1 ms of the event loop on ext4); else created here.
    const spare = this.spare;
    this.spare = undefined;
    if (spare && spare.seq === seq) seg.writeFd = spare.fd;
    else {
      if (spare) this.discardSpare(spare);
      seg.writeFd = this.openSegmentFile(seg.path);
    }
    seg.sealed = false;
    seg.dirSynced = false;
    this.segments.push(seg);
    this.prepareSpare(seq + 1);
    return seg;
  }

  /** Creates the next segment's file off the event loop, for the next rotation to take. */
  private prepareSpare(seq: number): void {
    if (this.spareOpening || this.closed) return;
    this.spareOpening = true;
    const path = `${join(this.opts.dir, segName(seq))}.log`;
    const opening = this.opts.openSegmentFile ? Promise.resolve(path).then(this.opts.openSegmentFile) : openAsync(path, "wx", 0o600);
    opening.then(
      (fd) => {
        this.spareOpening = false;
        const spare = { seq, fd, path };
        if (this.closed || this.spare || this.active.seq + 1 !== seq) this.discardSpare(spare);
        else this.spare = spare;
      },
      (e: unknown) => {
        this.spareOpening = false;
        this.opts.log.warn({ err: String(e), path }, "trace spool: could not prepare the next segment (it is created at rotation)");
      },
    );
  }

  private discardSpare(spare: { fd: number; path: string }): void {
    this.background(
      (async () => {
        await closeAsync(spare.fd);
        await unlinkAsync(spare.path);
      })(),
    );
  }

  /** File work that nothing waits for but close() (and remove(), for its own deletions). */
  private background(p: Promise<void>): Promise<void> {
    const tracked = p.catch((e: unknown) => this.opts.log.warn({ err: String(e) }, "trace spool: background file operation failed"));
    this.pendingFileOps.add(tracked);
    void tracked.finally(() => this.pendingFileOps.delete(tracked));
    return tracked;
  }

  private async syncDir(): Promise<void> {
    const fh = await open(this.opts.dir, "r");
    try {
      await fh.sync();
    } catch {
      /* some filesystems refuse fsync on a directory; the data files are still fsync'd */
    } finally {
      await fh.close();
    }
  }

  private quarantine(seq: number, bytes: Buffer, start: number, reason: string): void {
    mkdirSync(this.quarantineDir, { recursive: true, mode: 0o700 });
    const file = join(this.quarantineDir, `${segName(seq)}.${start}-${start + bytes.length}.bad`);
    writeFileSync(file, bytes);
    this.counters.quarantinedBytes += bytes.length;
    this.counters.quarantinedRanges++;
    this.opts.log.error({ file, bytes: bytes.length, segment: seq, offset: start, reason }, "trace spool: damaged bytes quarantined; the good records around them are replayed");
  }

  /** Scans every segment: good unacknowledged records become entries, damage is quarantined. */
  private replay(): void {
    const names = readdirSync(this.opts.dir);
    const seqs = names.flatMap((n) => (SEGMENT_FILE.exec(n) ? [Number(SEGMENT_FILE.exec(n)![1])] : [])).sort((a, b) => a - b);
    const withLog = new Set(seqs);
    for (const n of names) {
      const m = ACKS_FILE.exec(n);
      if (m && !withLog.has(Number(m[1]))) unlinkSync(join(this.opts.dir, n));
    }
    for (const seq of seqs) {
      const seg = this.makeSegment(seq, 0);
      const bytes = readFileSync(seg.path);
      seg.size = bytes.length;
      const { records, bad } = scanRecords(bytes);
      for (const r of bad) this.quarantine(seq, bytes.subarray(r.start, r.end), r.start, r.end === bytes.length ? "truncated or damaged tail" : "damaged record");
      const acked = new Set<string>();
      if (existsSync(seg.acksPath)) {
        const ackBytes = readFileSync(seg.acksPath);
        const acks = scanRecords(ackBytes);
        for (const r of acks.records) for (const id of r.payload.toString("utf8").split("\n")) if (id) acked.add(id);
        if (acks.bad.length > 0) this.opts.log.warn({ segment: seq, damagedRanges: acks.bad.length }, "trace spool: damaged acknowledgement records ignored (those traces are sent again)");
      }
      this.segments.push(seg);
      for (const r of records) {
        if (r.kind === "amendment") {
          this.replayAmendment(seq, bytes, r.offset, r.length, r.payload);
          continue;
        }
        const key = traceKeyFields(r.payload);
        if (!key) {
          this.quarantine(seq, bytes.subarray(r.offset, r.offset + r.length), r.offset, "record is not a trace");
          continue;
        }
        if (acked.has(key.id) || this.index.has(key.id)) continue;
        this.index.set(key.id, { id: key.id, seg, offset: r.offset, length: r.length, ts: key.timestampMs || Date.now(), payload: undefined, extra: undefined, ready: true, memoryOnly: false, safe: undefined });
        seg.live++;
        this.counters.replayedTotal++;
      }
      if (seg.live === 0) this.deleteSegmentFiles(seg);
    }
    const replayed = this.counters.replayedTotal;
    if (replayed > 0 || this.counters.quarantinedRanges > 0) {
      this.opts.log.info({ replayed, segments: this.segments.filter((s) => !s.deleted).length, quarantinedRanges: this.counters.quarantinedRanges }, "trace spool replayed unacknowledged traces");
    }
    for (let i = this.segments.length - 1; i >= 0; i--) if (this.segments[i]!.deleted) this.segments.splice(i, 1);
    this.trackHighWater();
  }

  /** An amendment found at replay goes onto its trace (written before it); one of a trace already acknowledged is dropped. */
  private replayAmendment(seq: number, bytes: Buffer, offset: number, length: number, payload: Buffer): void {
    const parts = amendmentParts(payload);
    if (!parts) {
      this.quarantine(seq, bytes.subarray(offset, offset + length), offset, "amendment without a trace id");
      return;
    }
    const e = this.index.get(parts.id);
    // copied: a view would keep the whole segment's bytes alive
    if (e) e.extra = concatOwn(e.extra ? [e.extra, parts.fields] : [parts.fields]);
  }

  private deleteSegmentFiles(seg: Segment): void {
    seg.deleted = true;
    for (const p of [seg.path, seg.acksPath]) {
      try {
        unlinkSync(p);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "ENOENT") this.opts.log.warn({ err: String(e), path: p }, "trace spool: could not delete a compacted segment");
      }
    }
  }

  private totalBytes(): number {
    let n = 0;
    for (const s of this.segments) n += s.size;
    return n;
  }

  private trackHighWater(): void {
    if (this.index.size > this.counters.highWaterDepth) this.counters.highWaterDepth = this.index.size;
    const b = this.totalBytes();
    if (b > this.counters.highWaterBytes) this.counters.highWaterBytes = b;
  }

  /**
   * Writes the trace to the active segment now (one write(2)); the returned promise resolves once it is
   * synced — or null when `resolveOn` is "write" (written: nothing to wait for). When the trace cannot be
   * made safe on disk (the write failed, or writes are paused after a failure) it is kept in memory,
   * shipped from there, and the promise resolves once the control plane acknowledges it. Never rejects,
   * never waits for room.
   */
  append(t: Trace): Promise<void> | null {
    if (this.closed) {
      this.counters.droppedTotal++;
      this.opts.log.error({ traceId: t.id }, "trace spool is closed: trace dropped");
      return null;
    }
    if (this.index.has(t.id)) return null;
    // Same bytes as toBinary(TraceSchema, t), encoded straight into the record (trace-encoding.ts).
    const record = sealRecord(encodeTrace(t, HEADER_BYTES));
    if (this.retryPending && !this.mayWriteAgain()) return this.keepInMemory(t, record);
    this.makeRoom(record.length);
    if (this.active.size > 0 && this.active.size + record.length > this.segmentBytes) this.rotate();
    const seg = this.active;
    // Written synchronously: a page-cache write is a few microseconds, and once it returns a crash of
    // this process cannot lose the trace (the response gate relies on that). fdatasync runs off the
    // event loop, in group commits. Amendments waiting to be written go first, in the same write(2).
    const amendments = this.takePendingAmendments();
    if (!this.writeRecord(seg, amendments ? Buffer.concat([amendments, record]) : record)) return this.keepInMemory(t, record);
    if (amendments) seg.size += amendments.length;
    if (this.writeFailing) this.writesRecovered();
    const entry: Entry = { id: t.id, seg, offset: seg.size, length: record.length, ts: Number(t.timestampMs) || Date.now(), payload: record.subarray(HEADER_BYTES), extra: undefined, ready: false, memoryOnly: false, safe: undefined };
    seg.size += record.length;
    seg.live++;
    this.cachedBytes += record.length;
    this.index.set(t.id, entry);
    this.counters.appendedTotal++;
    this.trackHighWater();
    seg.unsynced++;
    this.unsynced.push(entry);
    this.scheduleSync();
    if (this.resolveOn === "write") return null;
    return new Promise((resolve) => (entry.safe = resolve));
  }

  /**
   * Adds fields to a trace appended in this turn of the event loop (the shipper has not taken it yet):
   * kept with the entry, and written as an amendment record after the trace's, so that a restart
   * replays them onto it. The record is written with the next trace's write(2), or on its own after
   * AMENDMENT_WRITE_DELAY_MS, or before a group commit, which then covers it; nothing waits for it (a
   * crash in that window loses the added fields, never the trace). A trace kept in memory only, or
   * writes paused after a failure, keep the amendment in memory only, with the trace.
   */
  amend(id: string, fields: TraceAmendment): void {
    const e = this.index.get(id);
    if (!e || this.closed) return;
    const record = encodeAmendment(id, fields);
    const added = amendmentParts(record.subarray(HEADER_BYTES))!.fields;
    e.extra = e.extra ? concatOwn([e.extra, added]) : added;
    if (e.offset < 0 || e.memoryOnly || this.retryPending) return;
    this.pendingAmendments.push(record);
    if (this.amendmentTimer === undefined) {
      this.amendmentTimer = setTimeout(() => {
        this.amendmentTimer = undefined;
        this.writePendingAmendments();
      }, AMENDMENT_WRITE_DELAY_MS);
      this.amendmentTimer.unref(); // close() writes them
    }
  }

  /** The waiting amendment records as one buffer (undefined when none); the caller writes them. */
  private takePendingAmendments(): Buffer | undefined {
    if (this.pendingAmendments.length === 0) return undefined;
    const bytes = this.pendingAmendments.length === 1 ? this.pendingAmendments[0]! : Buffer.concat(this.pendingAmendments);
    this.pendingAmendments = [];
    if (this.amendmentTimer !== undefined) {
      clearTimeout(this.amendmentTimer);
      this.amendmentTimer = undefined;
    }
    return bytes;
  }

  /**
   * Writes the waiting amendments on their own (no trace came to carry them). With writes paused after
   * a failure they stay in memory only, with their traces. A failed write is counted and logged and
   * pauses writes as for a trace.
   */
  private writePendingAmendments(): void {
    const bytes = this.takePendingAmendments();
    if (bytes === undefined || this.retryPending) return;
    const seg = this.active;
    if (this.writeRecord(seg, bytes)) seg.size += bytes.length;
  }

  /** A trace that could not be written: kept in memory (shipped from there); resolves at its acknowledgement. */
  private keepInMemory(t: Trace, record: Buffer): Promise<void> {
    const seg = this.active;
    const entry: Entry = { id: t.id, seg, offset: -1, length: record.length, ts: Number(t.timestampMs) || Date.now(), payload: record.subarray(HEADER_BYTES), extra: undefined, ready: true, memoryOnly: false, safe: undefined };
    seg.live++;
    this.cachedBytes += record.length;
    this.index.set(t.id, entry);
    this.counters.appendedTotal++;
    this.failedAppends++;
    this.trackHighWater();
    const acked = new Promise<void>((resolve) => (entry.safe = resolve));
    this.holdInMemory(entry);
    this.boundMemoryOnly();
    this.notifyReady();
    return acked;
  }

  private holdInMemory(e: Entry): void {
    e.memoryOnly = true;
    e.ready = true;
    this.memoryOnly.add(e);
    this.memoryOnlyBytes += e.length;
  }

  /** Memory-only traces past `cacheBytes` are dropped, oldest first (a long disk-full spell with the control plane away must not grow the heap without bound). */
  private boundMemoryOnly(): void {
    if (this.memoryOnlyBytes <= this.cacheBytes) return;
    for (const e of this.memoryOnly) {
      if (this.memoryOnlyBytes <= this.cacheBytes) break;
      this.forget(e.id, e);
      this.maybeCompact(e.seg);
      this.counters.droppedTotal++;
      this.unloggedDrops++;
    }
    const now = performance.now();
    if (now - this.lastDropLogAt >= DROP_LOG_MS) {
      this.lastDropLogAt = now;
      this.opts.log.error(
        { dropped: this.unloggedDrops, droppedTotal: this.counters.droppedTotal, memoryOnlyBytes: this.memoryOnlyBytes, limitBytes: this.cacheBytes },
        "TRACE SPOOL FULL IN MEMORY: the spool cannot write to disk and the control plane has not acknowledged the traces kept in memory; dropped the oldest",
      );
      this.unloggedDrops = 0;
    }
  }

  /** Writing failed less than WRITE_RETRY_MS ago: false (keep in memory, try nothing); then replaces a broken active segment and lets the append write. */
  private mayWriteAgain(): boolean {
    const now = performance.now();
    if (now < this.retryAt) return false;
    if (this.active.broken) {
      this.lastFailoverAt = now;
      this.rotate();
      if (this.active.broken) {
        // no new file could be created: try again later
        this.retryAt = now + WRITE_RETRY_MS;
        return false;
      }
    }
    this.retryPending = false;
    return true;
  }

  private pauseWrites(at: number): void {
    this.retryPending = true;
    this.retryAt = at;
  }

  private writesRecovered(): void {
    this.writeFailing = false;
    this.opts.log.info({ keptInMemory: this.failedAppends, memoryOnly: this.memoryOnly.size }, "trace spool: writing again");
    this.failedAppends = 0;
  }

  /** write(2) of a whole record at the segment's end; false (counted, logged) on failure. */
  private writeRecord(seg: Segment, record: Buffer): boolean {
    if (seg.broken || seg.writeFd === undefined) {
      this.pauseWrites(performance.now() + WRITE_RETRY_MS);
      return false;
    }
    let off = 0;
    try {
      while (off < record.length) off += writeSync(seg.writeFd, record, off, record.length - off);
      return true;
    } catch (e) {
      this.writeFailed(seg, e, off);
      return false;
    }
  }

  /**
   * A failed write: writes pause for WRITE_RETRY_MS. Out of space with nothing written, the file still
   * ends at a record boundary and the next try uses it; otherwise (a torn record, another error) the
   * segment takes no more records and the next try starts a new one (a torn tail is quarantined at replay).
   */
  private writeFailed(seg: Segment, e: unknown, written: number): void {
    const code = (e as NodeJS.ErrnoException).code;
    if (written > 0 || (code !== "ENOSPC" && code !== "EDQUOT")) seg.broken = true;
    this.counters.writeErrors++;
    this.writeFailing = true;
    this.lastError = String(e);
    this.pauseWrites(performance.now() + WRITE_RETRY_MS);
    this.opts.log.error(
      { err: String(e), segment: seg.seq, op: "write", retryInMs: WRITE_RETRY_MS },
      "trace spool: write failed; traces are kept in memory until the control plane acknowledges them (their answers wait for that, up to SPOOL_COMMIT_WAIT_MS)",
    );
  }

  /** A failed fdatasync: nothing in the segment is trusted synced; it takes no more records (replaced at once, or a second after the previous replacement). */
  private syncFailed(seg: Segment, e: unknown, traces: number): void {
    seg.broken = true;
    seg.syncFailed = true;
    this.counters.writeErrors++;
    this.syncFailing = true;
    this.lastError = String(e);
    if (seg === this.active && !this.retryPending) this.pauseWrites(this.lastFailoverAt + WRITE_RETRY_MS);
    this.opts.log.error({ err: String(e), segment: seg.seq, traces, op: "fsync" }, "trace spool: fdatasync failed; these traces are kept in memory and still shipped");
  }

  private notifyReady(): void {
    for (const l of this.listeners) l();
  }

  /** Schedules the next group commit: at once after flush(), else once the commit window since the last one has passed. */
  private scheduleSync(): void {
    if (this.syncing || this.syncTimeout || this.syncImmediate || this.unsynced.length === 0) return;
    const wait = this.urgent ? 0 : this.lastSyncStartMs + this.syncIntervalMs - performance.now();
    // setImmediate even without a window: the appends of the same event-loop turn share the commit.
    if (wait > 1) {
      this.syncTimeout = setTimeout(() => {
        this.syncTimeout = undefined;
        this.startSync();
      }, wait);
    } else {
      this.syncImmediate = setImmediate(() => {
        this.syncImmediate = undefined;
        this.startSync();
      });
    }
  }

  private startSync(): void {
    if (this.syncing || this.unsynced.length === 0) return;
    this.writePendingAmendments(); // covered by this commit
    this.syncing = this.syncOnce().finally(() => {
      this.syncing = undefined;
      this.scheduleSync();
    });
  }

  /** One group commit: fdatasync of every segment written to since the previous one. */
  private async syncOnce(): Promise<void> {
    const batch = this.unsynced;
    this.unsynced = [];
    this.lastSyncStartMs = performance.now();
    const segs = new Set<Segment>();
    for (const e of batch) segs.add(e.seg);
    const failed = new Set<Segment>();
    for (const seg of segs) {
      // A segment broken by a failed write is still synced: the records written before it are whole.
      if (seg.syncFailed || seg.writeFd === undefined) {
        failed.add(seg);
        continue;
      }
      try {
        await fdatasyncAsync(seg.writeFd);
        if (!seg.dirSynced) {
          await this.syncDir();
          seg.dirSynced = true;
        }
      } catch (e) {
        failed.add(seg);
        if (!seg.syncFailed) this.syncFailed(seg, e, batch.filter((x) => x.seg === seg).length);
      }
    }
    if (failed.size === 0 && this.syncFailing) {
      this.syncFailing = false;
      this.opts.log.info({}, "trace spool: fdatasync succeeds again");
    }
    for (const e of batch) {
      e.seg.unsynced--;
      e.ready = true;
      if (failed.has(e.seg)) {
        // with "fsync", its append now resolves only at its acknowledgement
        if (this.index.get(e.id) === e) this.holdInMemory(e);
        continue;
      }
      if (e.safe !== undefined) {
        e.safe();
        e.safe = undefined;
      }
      if (e.payload && this.cachedBytes > this.cacheBytes) {
        e.payload = undefined;
        this.cachedBytes -= e.length;
      }
    }
    for (const seg of segs) {
      this.closeIfSynced(seg);
      this.maybeCompact(seg);
    }
    if (failed.size > 0) this.boundMemoryOnly();
    this.counters.commits++;
    // Segments sealed while they had unsynced records could not be dropped then: enforce the cap now.
    this.makeRoom(0);
    this.notifyReady();
  }

  private rotate(): void {
    const old = this.active;
    old.sealed = true;
    try {
      this.active = this.newSegment(old.seq + 1);
    } catch (e) {
      // Could not create a file (disk full, permissions): keep writing to the current one.
      old.sealed = false;
      this.counters.writeErrors++;
      this.opts.log.error({ err: String(e) }, "trace spool: could not start a new segment");
      return;
    }
    this.closeIfSynced(old);
    this.maybeCompact(old);
  }

  /** A sealed segment's file is closed once nothing written to it awaits an fdatasync. */
  private closeIfSynced(seg: Segment): void {
    if (seg.sealed && seg.unsynced === 0 && seg.writeFd !== undefined) {
      closeSync(seg.writeFd);
      seg.writeFd = undefined;
    }
  }

  /** Drops whole sealed segments, oldest first, until `extra` more bytes fit under maxBytes. */
  private makeRoom(extra: number): void {
    let dropped = 0;
    while (this.totalBytes() + extra > this.maxBytes) {
      const victim = this.segments.find((s) => s.sealed && s.unsynced === 0 && !s.deleted);
      if (!victim) {
        // Only the active segment is left (segmentBytes configured above maxBytes): seal it and drop it.
        const before = this.active;
        if (before.size > 0 && before.unsynced === 0) this.rotate();
        if (this.active === before) break;
        continue;
      }
      for (const [id, e] of this.index) {
        if (e.seg !== victim) continue;
        this.forget(id, e);
        dropped++;
      }
      this.removeSegment(victim);
    }
    if (dropped > 0) {
      this.counters.droppedTotal += dropped;
      this.opts.log.error(
        { dropped, droppedTotal: this.counters.droppedTotal, maxBytes: this.maxBytes, depth: this.index.size },
        "TRACE SPOOL FULL: dropped the oldest unacknowledged traces (the control plane has not acknowledged traces for too long; raise SPOOL_MAX_BYTES or restore the control plane)",
      );
    }
  }

  private forget(id: string, e: Entry): void {
    this.index.delete(id);
    e.seg.live--;
    if (e.memoryOnly) {
      this.memoryOnly.delete(e);
      this.memoryOnlyBytes -= e.length;
    }
    if (e.payload) {
      e.payload = undefined;
      this.cachedBytes -= e.length;
    }
  }

  private maybeCompact(seg: Segment): void {
    if (seg.sealed && !seg.deleted && seg.live === 0 && seg.unsynced === 0) this.removeSegment(seg);
  }

  private removeSegment(seg: Segment): void {
    seg.deleted = true;
    const i = this.segments.indexOf(seg);
    if (i >= 0) this.segments.splice(i, 1);
    if (seg.writeFd !== undefined) {
      closeSync(seg.writeFd);
      seg.writeFd = undefined;
    }
    const readFh = seg.readFh;
    const ackFh = seg.ackFh;
    seg.readFh = undefined;
    seg.ackFh = undefined;
    // Deleted off the event loop (unlink is a journal transaction); a crash before it only leaves a
    // fully acknowledged segment, which replay deletes.
    this.background(
      seg.ackChain.then(async () => {
        for (const fh of [readFh, ackFh]) if (fh) await (await fh).close().catch(() => undefined);
        for (const p of [seg.path, seg.acksPath]) {
          await unlinkAsync(p).catch((e: NodeJS.ErrnoException) => {
            if (e.code !== "ENOENT") this.opts.log.warn({ err: String(e), path: p }, "trace spool: could not delete a compacted segment");
          });
        }
      }),
    );
  }

  /** Reads an entry's encoded trace back from its segment (checked against the record's CRC, not decoded). */
  private async readPayload(e: Entry): Promise<Uint8Array | undefined> {
    const seg = e.seg;
    if (seg.deleted) return undefined;
    seg.readFh ??= open(seg.path, "r");
    const buf = Buffer.allocUnsafeSlow(e.length); // kept until acknowledged: not a pool slice (concatOwn)
    try {
      const fh = await seg.readFh;
      const { bytesRead } = await fh.read(buf, 0, e.length, e.offset);
      const payload = bytesRead === e.length ? decodeRecord(buf) : undefined;
      if (payload) return payload;
      if (!this.index.has(e.id)) return undefined;
      this.quarantine(seg.seq, buf.subarray(0, bytesRead), e.offset, "record damaged on disk after it was written");
    } catch (err) {
      if (seg.deleted || !this.index.has(e.id)) return undefined;
      this.opts.log.error({ err: String(err), segment: seg.seq, traceId: e.id }, "trace spool: could not read a spooled trace back; it is lost");
    }
    this.counters.droppedTotal++;
    this.forget(e.id, e);
    this.maybeCompact(seg);
    return undefined;
  }

  async peek(n: number, exclude: ReadonlySet<string>, maxBytes = Number.POSITIVE_INFINITY): Promise<SpooledTrace[]> {
    const picked: Entry[] = [];
    let bytes = 0;
    for (const e of this.index.values()) {
      if (picked.length >= n || !e.ready) break;
      if (exclude.has(e.id)) continue;
      if (picked.length > 0 && bytes + e.length > maxBytes) break;
      picked.push(e);
      bytes += e.length;
    }
    const out: SpooledTrace[] = [];
    for (const e of picked) {
      const payload = e.payload ?? (await this.readPayload(e));
      if (payload && this.index.get(e.id) === e) out.push({ id: e.id, payload: e.extra ? Buffer.concat([payload, e.extra]) : payload });
    }
    return out;
  }

  async remove(ids: readonly string[]): Promise<void> {
    const bySeg = new Map<Segment, string[]>();
    for (const id of ids) {
      const e = this.index.get(id);
      if (!e) continue;
      this.forget(id, e);
      this.counters.ackedTotal++;
      if (e.safe !== undefined) {
        // a trace the spool could not make safe is safe in the control plane: its answer may leave
        e.safe();
        e.safe = undefined;
      }
      const list = bySeg.get(e.seg);
      // a trace never written has no record to acknowledge, but its segment may now be compactable
      if (list) {
        if (e.offset >= 0) list.push(id);
      } else bySeg.set(e.seg, e.offset >= 0 ? [id] : []);
    }
    const writes: Promise<void>[] = [];
    for (const [seg, list] of bySeg) {
      if (seg.deleted) continue;
      // A fully acknowledged active segment past 1 MiB is rotated, so that it can be compacted at once.
      if (seg === this.active && seg.live === 0 && seg.unsynced === 0 && seg.size >= Math.min(this.segmentBytes, ROTATE_ACKED_BYTES)) this.rotate();
      if (seg.sealed && seg.live === 0 && seg.unsynced === 0) {
        if (!seg.deleted) this.removeSegment(seg);
        continue;
      }
      if (list.length === 0) continue;
      const record = encodeRecord(Buffer.from(list.join("\n"), "utf8"));
      seg.ackChain = seg.ackChain
        .then(async () => {
          if (seg.deleted) return;
          seg.ackFh ??= open(seg.acksPath, "a", 0o600);
          await (await seg.ackFh).write(record);
        })
        .catch((e: unknown) => this.opts.log.warn({ err: String(e), segment: seg.seq }, "trace spool: could not record acknowledgements (those traces may be sent again)"));
      writes.push(seg.ackChain);
    }
    await Promise.all(writes);
    // the segments this made deletable are gone from disk when it resolves
    await Promise.all(this.pendingFileOps);
  }

  size(): number {
    return this.index.size;
  }

  onAppend(fn: () => void): void {
    this.listeners.push(fn);
  }

  stats(): SpoolStats {
    const oldest = this.index.values().next();
    return {
      depth: this.index.size,
      bytes: this.totalBytes(),
      maxBytes: this.maxBytes,
      oldestAgeMs: oldest.done ? 0 : Math.max(0, Date.now() - oldest.value.ts),
      segments: this.segments.length,
      ...this.counters,
      unwritable: this.writeFailing || this.syncFailing,
      lastError: this.writeFailing || this.syncFailing ? this.lastError : "",
      memoryOnly: this.memoryOnly.size,
      memoryOnlyBytes: this.memoryOnlyBytes,
    };
  }

  /** Waits until everything appended so far is synced (starts the group commit at once). */
  async flush(): Promise<void> {
    this.writePendingAmendments();
    this.urgent = true;
    try {
      while (this.unsynced.length > 0 || this.syncing) {
        if (this.syncTimeout) {
          // a commit window is running: commit now instead
          clearTimeout(this.syncTimeout);
          this.syncTimeout = undefined;
        }
        this.scheduleSync();
        if (this.syncing) await this.syncing;
        else await new Promise((r) => setImmediate(r));
      }
    } finally {
      this.urgent = false;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.flush();
    if (this.memoryOnly.size > 0) this.opts.log.error({ traces: this.memoryOnly.size }, "trace spool closed with traces that could not be written to disk and are not acknowledged: they are lost");
    const active = this.active;
    active.sealed = true;
    this.maybeCompact(active);
    for (const seg of [...this.segments]) {
      if (seg.writeFd !== undefined) {
        closeSync(seg.writeFd);
        seg.writeFd = undefined;
      }
      await seg.ackChain;
      for (const fh of [seg.readFh, seg.ackFh]) if (fh) await (await fh).close().catch(() => undefined);
      seg.readFh = undefined;
      seg.ackFh = undefined;
    }
    while (this.spareOpening) await new Promise((r) => setTimeout(r, 1));
    if (this.spare) this.discardSpare(this.spare);
    this.spare = undefined;
    while (this.pendingFileOps.size > 0) await Promise.all(this.pendingFileOps);
    try {
      releaseLockFile(this.lockPath);
    } catch {
      /* best effort */
    }
  }

  /** Bytes of segment files as the filesystem sees them (tests, diagnostics). */
  diskBytes(): number {
    let n = 0;
    for (const s of this.segments) {
      try {
        n += statSync(s.path).size;
      } catch {
        /* deleted meanwhile */
      }
    }
    return n;
  }
}
