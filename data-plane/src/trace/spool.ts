// The durable trace spool: every trace is appended to an on-disk segment (framed and checksummed,
// spool-format.ts) and fdatasync'd by group commit — one write + one fdatasync for everything appended
// while the previous commit was on disk — before it may be shipped; it is forgotten only when the
// control plane acknowledges it.
//
// Layout under `dir`: `seg-<seq>.log` (records, append-only, one active segment at a time),
// `seg-<seq>.acks` (ids acknowledged from that segment; written without fsync: a lost ack only means a
// redelivery, which trace ids make idempotent), `quarantine/` (damaged bytes found at replay, one file
// per damaged range), `LOCK` (pid of the owning process).
// Compaction: a sealed segment whose every trace is acknowledged is deleted with its ack file.
// At start every segment is scanned: good records not acknowledged are replayed, damaged ranges are
// copied to quarantine/ and skipped. When the spool would exceed `maxBytes`, whole sealed segments are
// dropped oldest first (counted and logged as errors); appends never wait for room.
import { closeSync, existsSync, fdatasync, mkdirSync, openSync, readdirSync, readFileSync, statSync, unlinkSync, write, writeFileSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Trace } from "@agentgov/proto";
import type { SpooledTrace, SpoolStats, TraceQueue } from "./queue.js";
import { decodeRecord, encodeRecord, HEADER_BYTES, scanRecords, sealRecord, traceKeyFields } from "./spool-format.js";
import { encodeTrace } from "./trace-encoding.js";

const writeAsync = promisify(write);
const fdatasyncAsync = promisify(fdatasync);

export const DEFAULT_SPOOL_MAX_BYTES = 1024 * 1024 * 1024;
const MAX_SEGMENT_BYTES = 64 * 1024 * 1024;
const MIN_SEGMENT_BYTES = 64 * 1024;
const DEFAULT_CACHE_BYTES = 32 * 1024 * 1024;
const ROTATE_ACKED_BYTES = 1024 * 1024;
const SEGMENT_FILE = /^seg-(\d{12})\.log$/;
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
  /** Records queued or being written. */
  pendingWrites: number;
  sealed: boolean;
  writeFd: number | undefined;
  dirSynced: boolean;
  broken: boolean;
  deleted: boolean;
  readFh: Promise<FileHandle> | undefined;
  ackFh: Promise<FileHandle> | undefined;
  ackChain: Promise<void>;
}

interface Entry {
  id: string;
  seg: Segment;
  offset: number;
  length: number;
  ts: number;
  /** The encoded trace, cached (a view of the record buffer, which is never modified after sealRecord). */
  payload: Uint8Array | undefined;
  /** On disk, or kept in memory only after a failed write: either way it may be shipped. */
  ready: boolean;
  memoryOnly: boolean;
}

interface PendingWrite {
  entry: Entry;
  record: Buffer;
  resolve: () => void;
}

const segName = (seq: number) => `seg-${String(seq).padStart(12, "0")}`;

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

export class DurableSpool implements TraceQueue {
  private readonly index = new Map<string, Entry>();
  private readonly segments: Segment[] = [];
  private active!: Segment;
  private pending: PendingWrite[] = [];
  private flushing: Promise<void> | undefined;
  private readonly listeners: (() => void)[] = [];
  private cachedBytes = 0;
  private closed = false;
  private readonly maxBytes: number;
  private readonly segmentBytes: number;
  private readonly cacheBytes: number;
  private readonly quarantineDir: string;
  private readonly lockPath: string;
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
    this.quarantineDir = join(opts.dir, "quarantine");
    this.lockPath = join(opts.dir, "LOCK");
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
    mkdirSync(this.opts.dir, { recursive: true });
    if (existsSync(this.lockPath)) {
      const pid = Number(readFileSync(this.lockPath, "utf8").trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && pidAlive(pid)) throw new SpoolLockedError(this.opts.dir, pid);
    }
    writeFileSync(this.lockPath, `${process.pid}\n`);
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
      pendingWrites: 0,
      sealed: true,
      writeFd: undefined,
      dirSynced: true,
      broken: false,
      deleted: false,
      readFh: undefined,
      ackFh: undefined,
      ackChain: Promise.resolve(),
    };
  }

  private newSegment(seq: number): Segment {
    const seg = this.makeSegment(seq, 0);
    seg.writeFd = openSync(seg.path, "wx", 0o600);
    seg.sealed = false;
    seg.dirSynced = false;
    this.segments.push(seg);
    return seg;
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
    mkdirSync(this.quarantineDir, { recursive: true });
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
        const key = traceKeyFields(r.payload);
        if (!key) {
          this.quarantine(seq, bytes.subarray(r.offset, r.offset + r.length), r.offset, "record is not a trace");
          continue;
        }
        if (acked.has(key.id) || this.index.has(key.id)) continue;
        this.index.set(key.id, { id: key.id, seg, offset: r.offset, length: r.length, ts: key.timestampMs || Date.now(), payload: undefined, ready: true, memoryOnly: false });
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

  append(t: Trace): Promise<void> {
    if (this.closed) {
      this.counters.droppedTotal++;
      this.opts.log.error({ traceId: t.id }, "trace spool is closed: trace dropped");
      return Promise.resolve();
    }
    if (this.index.has(t.id)) return Promise.resolve();
    // Same bytes as toBinary(TraceSchema, t), encoded straight into the record (trace-encoding.ts).
    const record = sealRecord(encodeTrace(t, HEADER_BYTES));
    const payload = record.subarray(HEADER_BYTES);
    this.makeRoom(record.length);
    if (this.active.size > 0 && this.active.size + record.length > this.segmentBytes) this.rotate();
    const seg = this.active;
    const entry: Entry = { id: t.id, seg, offset: seg.size, length: record.length, ts: Number(t.timestampMs) || Date.now(), payload, ready: false, memoryOnly: false };
    seg.size += record.length;
    seg.live++;
    seg.pendingWrites++;
    this.cachedBytes += record.length;
    this.index.set(t.id, entry);
    this.counters.appendedTotal++;
    this.trackHighWater();
    return new Promise((resolve) => {
      this.pending.push({ entry, record, resolve });
      this.flushing ??= this.flushLoop().finally(() => (this.flushing = undefined));
    });
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
    this.maybeCompact(old);
  }

  /** Drops whole sealed segments, oldest first, until `extra` more bytes fit under maxBytes. */
  private makeRoom(extra: number): void {
    let dropped = 0;
    while (this.totalBytes() + extra > this.maxBytes) {
      const victim = this.segments.find((s) => s.sealed && s.pendingWrites === 0 && !s.deleted);
      if (!victim) {
        // Only the active segment is left (segmentBytes configured above maxBytes): seal it and drop it.
        const before = this.active;
        if (before.size > 0 && before.pendingWrites === 0) this.rotate();
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
    if (e.payload) {
      e.payload = undefined;
      this.cachedBytes -= e.length;
    }
  }

  private maybeCompact(seg: Segment): void {
    if (seg.sealed && !seg.deleted && seg.live === 0 && seg.pendingWrites === 0) this.removeSegment(seg);
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
    this.deleteSegmentFiles(seg);
    void seg.ackChain.then(async () => {
      for (const fh of [readFh, ackFh]) if (fh) await (await fh).close();
    }).catch(() => undefined);
  }

  private async flushLoop(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      const groups = new Map<Segment, PendingWrite[]>();
      for (const p of batch) {
        const g = groups.get(p.entry.seg);
        if (g) g.push(p);
        else groups.set(p.entry.seg, [p]);
      }
      for (const [seg, items] of groups) {
        let ok = !seg.broken && seg.writeFd !== undefined;
        if (ok) {
          try {
            const buf = items.length === 1 ? items[0]!.record : Buffer.concat(items.map((p) => p.record));
            let off = 0;
            while (off < buf.length) off += (await writeAsync(seg.writeFd!, buf, off, buf.length - off, null)).bytesWritten;
            await fdatasyncAsync(seg.writeFd!);
            if (!seg.dirSynced) {
              await this.syncDir();
              seg.dirSynced = true;
            }
          } catch (e) {
            ok = false;
            seg.broken = true;
            this.counters.writeErrors++;
            this.opts.log.error({ err: String(e), segment: seg.seq, traces: items.length }, "trace spool: write failed; these traces are kept in memory and still shipped");
            if (seg === this.active) this.rotate();
          }
        }
        for (const p of items) {
          const e = p.entry;
          seg.pendingWrites--;
          e.ready = true;
          if (!ok) e.memoryOnly = true;
          else if (e.payload && this.cachedBytes > this.cacheBytes) {
            e.payload = undefined;
            this.cachedBytes -= e.length;
          }
        }
        if (seg.sealed && seg.pendingWrites === 0 && seg.writeFd !== undefined) {
          closeSync(seg.writeFd);
          seg.writeFd = undefined;
        }
        this.maybeCompact(seg);
      }
      this.counters.commits++;
      // Segments sealed while their writes were queued could not be dropped then: enforce the cap now.
      this.makeRoom(0);
      for (const p of batch) p.resolve();
      for (const l of this.listeners) l();
    }
  }

  /** Reads an entry's encoded trace back from its segment (checked against the record's CRC, not decoded). */
  private async readPayload(e: Entry): Promise<Uint8Array | undefined> {
    const seg = e.seg;
    if (seg.deleted) return undefined;
    seg.readFh ??= open(seg.path, "r");
    const buf = Buffer.allocUnsafe(e.length);
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
      if (payload && this.index.get(e.id) === e) out.push({ id: e.id, payload });
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
      const list = bySeg.get(e.seg);
      if (list) list.push(id);
      else bySeg.set(e.seg, [id]);
    }
    const writes: Promise<void>[] = [];
    for (const [seg, list] of bySeg) {
      if (seg.deleted) continue;
      // A fully acknowledged active segment past 1 MiB is rotated, so that it can be compacted at once.
      if (seg === this.active && seg.live === 0 && seg.pendingWrites === 0 && seg.size >= Math.min(this.segmentBytes, ROTATE_ACKED_BYTES)) this.rotate();
      if (seg.sealed && seg.live === 0 && seg.pendingWrites === 0) {
        if (!seg.deleted) this.removeSegment(seg);
        continue;
      }
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
    };
  }

  /** Waits for what is queued to be on disk. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.flush();
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
    try {
      if (existsSync(this.lockPath) && Number(readFileSync(this.lockPath, "utf8").trim()) === process.pid) unlinkSync(this.lockPath);
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
