// The sealed originals of redacted thinking blocks on disk (`<DATA_DIR>/sidecar/thinking/blocks.log`), so
// that a block the agent sends back after a sidecar restart is still restored. One JSON line per block
// remembered, appended with write(2) and not synced: a crash of the process cannot lose it, a power loss
// (or a machine crash) can lose the last ones, which then reach the provider as the client sent them (the
// provider refuses them, as it would without the sidecar's help). Nothing is deleted in place: at
// start-up, and whenever the file holds more than twice what is live (plus 1 MiB), it is rewritten with
// the live blocks only: a temporary file created afresh (0600), written, synced, then renamed over the
// file, so that at any moment, a power loss included, the name holds either the old file or the new one
// with every block that was live when the rewrite started. While the proxy runs that is done a slice at a
// time between other work (startRewrite / rewriteStep / syncRewrite / commitRewrite), the sync in the
// thread pool, and blocks remembered meanwhile are appended to both files (not synced, as any append).
// The sync comes first because a rename over a file whose data is still in the page cache makes ext4
// write that data out inside the rename (auto_da_alloc: 20–35 ms for 40 MB, on the event loop); and the
// old file is still open while it is renamed over, and closed in the thread pool, where the kernel then
// frees its pages (2–10 ms for 40 MB inside the rename otherwise). A torn or damaged line is skipped.
// The lines hold sealed originals only (sealed-original.ts): no text is on disk in clear.
import { close, closeSync, fdatasync, fdatasyncSync, fsync, mkdirSync, open, openSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { MIN_SEALED_BYTES } from "./sealed-original.js";

export interface SealedRecord {
  /** blockIndex(scope, signature). */
  index: string;
  expiresAt: number;
  /** Characters of the redacted and original texts (the store's limits count them). */
  chars: number;
  sealed: Buffer;
  /** Bytes of its line in the file. */
  bytes?: number;
}

/** Rewrite when the file exceeds twice the live bytes plus this much. */
const REWRITE_SLACK_BYTES = 1024 * 1024;

/**
 * The record's line: what JSON.stringify({ k, x, n, d }) gives, built by hand because JSON.stringify scans
 * every character of the long base64 text for escapes (most of a rewrite's time); base64 needs none.
 */
function line(r: SealedRecord): string {
  return `{"k":${JSON.stringify(r.index)},"x":${JSON.stringify(r.expiresAt)},"n":${JSON.stringify(r.chars)},"d":"${r.sealed.toString("base64")}"}\n`;
}

const isCount = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

function parse(text: string): SealedRecord | undefined {
  try {
    const v = JSON.parse(text) as { k?: unknown; x?: unknown; n?: unknown; d?: unknown };
    if (typeof v.k !== "string" || !isCount(v.x) || !isCount(v.n) || typeof v.d !== "string") return undefined;
    const sealed = Buffer.from(v.d, "base64");
    if (sealed.length < MIN_SEALED_BYTES) return undefined; // not even iv ‖ tag
    return { index: v.k, expiresAt: v.x, chars: v.n, sealed };
  } catch {
    return undefined;
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already unusable
  }
}

function writeAll(fd: number, b: Buffer): void {
  let off = 0;
  while (off < b.length) off += writeSync(fd, b, off, b.length - off);
}

export class ThinkingLog {
  private readonly file: string;
  private fd: number | undefined;
  /** Bytes the file holds, live records or not. */
  private bytes = 0;

  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.file = join(dir, "blocks.log");
  }

  /** The records of the file, in the order they were written (a later record of an index replaces an earlier one). */
  read(): SealedRecord[] {
    let data: Buffer;
    try {
      data = readFileSync(this.file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw e;
    }
    this.bytes = data.length; // what the file holds, whatever the lines
    const out: SealedRecord[] = [];
    for (const l of data.toString("utf8").split("\n")) {
      if (l === "") continue;
      const r = parse(l);
      if (r) out.push({ ...r, bytes: Buffer.byteLength(l, "utf8") + 1 });
    }
    return out;
  }

  /** Appends the record (also to a rewrite under way); its `bytes` are set. */
  append(r: SealedRecord): void {
    const b = Buffer.from(line(r), "utf8");
    this.fd ??= openSync(this.file, "a", 0o600);
    writeAll(this.fd, b);
    this.bytes += b.length;
    r.bytes = b.length;
    this.pendingRewrite?.appended.push(r);
  }

  /** Whether the file holds much more than `liveBytes` worth of records. */
  wantsRewrite(liveBytes: number): boolean {
    return this.bytes > 2 * liveBytes + REWRITE_SLACK_BYTES;
  }

  /** A rewrite under way: the temporary file, what is left to write, and what was appended meanwhile. */
  private pendingRewrite:
    | {
        tmp: string;
        fd: number;
        records: SealedRecord[];
        isLive: (r: SealedRecord) => boolean;
        at: number;
        bytes: number;
        /** Records appended to the file since the rewrite started, and how many of them the temporary file has. */
        appended: SealedRecord[];
        appendedWritten: number;
        /** Its sync is under way in the thread pool: its descriptor is closed when that returns. */
        syncing: boolean;
      }
    | undefined;

  get rewriting(): boolean {
    return this.pendingRewrite !== undefined;
  }

  /**
   * Replaces the file with these records at once (start-up): written to a temporary file created afresh
   * (0600), synced, renamed over it. On a failure the temporary file is removed and the error thrown; the file is
   * left as it was.
   */
  rewrite(records: Iterable<SealedRecord>): void {
    this.startRewrite([...records]);
    this.rewriteStep(Infinity);
    try {
      fdatasyncSync(this.pendingRewrite!.fd);
    } catch (e) {
      this.abortRewrite();
      throw e;
    }
    this.commitRewrite();
  }

  /**
   * Starts replacing the file with `records`, written by rewriteStep a slice at a time (so a rewrite of
   * tens of MB does not hold the event loop), synced by syncRewrite, put in place by commitRewrite. Records
   * appended meanwhile go to the file as usual and are written after `records` too, those `isLive` still
   * holds for only (a block remembered again while the sync runs replaces its earlier record: without the
   * check the new file kept every record of the sync's duration, and grew past its bound). Throws (the
   * temporary file removed) on a failure.
   */
  startRewrite(records: SealedRecord[], isLive: (r: SealedRecord) => boolean = () => true): void {
    this.abortRewrite();
    const tmp = `${this.file}.tmp`;
    rmSync(tmp, { force: true }); // a stale one (an earlier crash): not reused, whatever its owner and mode
    const fd = openSync(tmp, "wx", 0o600);
    this.pendingRewrite = { tmp, fd, records, isLive, at: 0, bytes: 0, appended: [], appendedWritten: 0, syncing: false };
  }

  /**
   * Writes about `budgetBytes` more of the rewrite, the records appended since it started last; true once
   * all of them are written. Throws (rewrite abandoned) on a failure.
   */
  rewriteStep(budgetBytes: number): boolean {
    const w = this.pendingRewrite;
    if (!w) return true;
    try {
      let spent = 0;
      while (w.at < w.records.length && spent < budgetBytes) spent += this.writeRecord(w, w.records[w.at++]!);
      while (w.appendedWritten < w.appended.length && spent < budgetBytes) spent += this.writeRecord(w, w.appended[w.appendedWritten++]!);
      return w.at >= w.records.length && w.appendedWritten >= w.appended.length;
    } catch (e) {
      this.abortRewrite();
      throw e;
    }
  }

  /**
   * Syncs what the rewrite has written, in the thread pool; `done` is called when that returns, with its
   * error (the rewrite then abandoned, the file left as it was). Not called when the rewrite is abandoned
   * meanwhile.
   */
  syncRewrite(done: (e?: unknown) => void): void {
    const w = this.pendingRewrite;
    if (!w) return done();
    w.syncing = true;
    fdatasync(w.fd, (e) => {
      w.syncing = false;
      if (this.pendingRewrite !== w) {
        closeQuietly(w.fd); // abandoned meanwhile (its temporary file is gone already)
        return;
      }
      if (e) this.abortRewrite();
      done(e ?? undefined);
    });
  }

  /**
   * Puts the rewritten file in the file's place (one rename), with anything appended since the last
   * rewriteStep; appends go to it from then on. Throws (rewrite abandoned, the file left as it was) on a
   * failure.
   */
  commitRewrite(): void {
    const w = this.pendingRewrite;
    if (!w) return;
    const old = this.fd;
    try {
      this.rewriteStep(Infinity);
      closeSync(w.fd);
      w.fd = -1;
      // Renamed over while still open: the old file's pages are freed when `old` is closed, below, in the
      // thread pool (on the event loop, inside the rename, that took 2–10 ms for 40 MB).
      renameSync(w.tmp, this.file);
    } catch (e) {
      this.abortRewrite();
      throw e;
    }
    this.fd = undefined;
    if (old !== undefined) close(old, () => undefined);
    this.pendingRewrite = undefined;
    this.bytes = w.bytes;
    this.syncDir();
  }

  /**
   * Makes the rename durable: the directory synced, in the thread pool (a directory fsync waits for a
   * journal commit). Best effort: some filesystems refuse it, and then the rename is durable at the next
   * commit anyway.
   */
  private syncDir(): void {
    open(this.dir, "r", (e, fd) => {
      if (e) return;
      fsync(fd, () => close(fd, () => undefined));
    });
  }

  /** Abandons a rewrite under way: its temporary file is removed; the file is left as it was. */
  abortRewrite(): void {
    const w = this.pendingRewrite;
    if (!w) return;
    this.pendingRewrite = undefined;
    // A descriptor whose sync is under way is closed when the sync returns (its number must not be reused before).
    if (w.fd >= 0 && !w.syncing) closeQuietly(w.fd);
    try {
      rmSync(w.tmp, { force: true });
    } catch {
      // the error that stopped the rewrite is the one to report
    }
  }

  private writeRecord(w: NonNullable<ThinkingLog["pendingRewrite"]>, r: SealedRecord): number {
    if (!w.isLive(r)) return 0;
    const b = Buffer.from(line(r), "utf8");
    writeAll(w.fd, b);
    w.bytes += b.length;
    r.bytes = b.length;
    return b.length;
  }

  /** Closes the append descriptor (a rewrite under way goes on; shutdown calls abortRewrite). */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
