// The sealed originals of redacted thinking blocks on disk (`<DATA_DIR>/sidecar/thinking/blocks.log`), so
// that a block the agent sends back after a sidecar restart is still restored. One JSON line per block
// remembered, appended with write(2) and not synced: a crash of the process cannot lose it, a power loss
// (or a machine crash) can lose the last ones, which then reach the provider as the client sent them (the
// provider refuses them, as it would without the sidecar's help). Nothing is deleted in place: at
// start-up, and whenever the file holds more than twice what is live (plus 1 MiB), it is rewritten with
// the live blocks only: a temporary file created afresh (0600), written, put in its place; while the proxy
// runs, a slice at a time between other work (startRewrite / rewriteStep / finishRewrite), blocks
// remembered meanwhile appended to both files. That rewrite is not synced either (an fsync of the whole live set, tens of MB at the default limits, would stall the
// event loop for about as long as the writing itself); a power loss just after it can lose the file's
// blocks, with the same outcome. A torn or damaged line is skipped.
// The lines hold sealed originals only (sealed-original.ts): no text is on disk in clear.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
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

function writeAll(fd: number, b: Buffer): void {
  let off = 0;
  while (off < b.length) off += writeSync(fd, b, off, b.length - off);
}

export class ThinkingLog {
  private readonly file: string;
  private fd: number | undefined;
  /** Bytes the file holds, live records or not. */
  private bytes = 0;

  /** A rewritten file, complete, before it takes the file's place. */
  private readonly fresh: string;

  constructor(dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.file = join(dir, "blocks.log");
    this.fresh = join(dir, "blocks.log.new");
  }

  /** The records of the file, in the order they were written (a later record of an index replaces an earlier one). */
  read(): SealedRecord[] {
    if (existsSync(this.fresh)) {
      // A rewrite completed but a crash came before it took the file's place: it is the newer file.
      rmSync(this.file, { force: true });
      renameSync(this.fresh, this.file);
    }
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
    | { tmp: string; fd: number; records: SealedRecord[]; at: number; bytes: number; appended: SealedRecord[]; stage: "writing" | "complete" | "swapping" }
    | undefined;

  get rewriting(): boolean {
    return this.pendingRewrite !== undefined;
  }

  /**
   * Replaces the file with these records at once (start-up): written to a temporary file created afresh
   * (0600), renamed over it. On a failure the temporary file is removed and the error thrown; the file is
   * left as it was.
   */
  rewrite(records: Iterable<SealedRecord>): void {
    this.startRewrite([...records]);
    this.rewriteStep(Infinity);
    this.finishRewrite();
  }

  /**
   * Starts replacing the file with `records`, written by rewriteStep a slice at a time (so a rewrite of
   * tens of MB does not hold the event loop), then finishRewrite. Records appended meanwhile go to the
   * file as usual and are written after `records` too. Throws (the temporary file removed) on a failure.
   */
  startRewrite(records: SealedRecord[]): void {
    this.abortRewrite();
    const tmp = `${this.file}.tmp`;
    rmSync(tmp, { force: true }); // a stale one (an earlier crash): not reused, whatever its owner and mode
    const fd = openSync(tmp, "wx", 0o600);
    this.pendingRewrite = { tmp, fd, records, at: 0, bytes: 0, appended: [], stage: "writing" };
  }

  /** Writes about `budgetBytes` more of the rewrite; true once every record is written. Throws (rewrite abandoned) on a failure. */
  rewriteStep(budgetBytes: number): boolean {
    const w = this.pendingRewrite;
    if (!w) return true;
    try {
      let spent = 0;
      while (w.at < w.records.length && spent < budgetBytes) {
        spent += this.writeRecord(w, w.records[w.at++]!);
      }
      return w.at >= w.records.length;
    } catch (e) {
      this.abortRewrite();
      throw e;
    }
  }

  /** Writes what was appended during the rewrite, and renames the temporary file over the file. Throws (rewrite abandoned) on a failure. */
  finishRewrite(): void {
    const w = this.pendingRewrite;
    if (!w) return;
    try {
      while (w.at < w.records.length) this.writeRecord(w, w.records[w.at++]!);
      for (const r of w.appended) this.writeRecord(w, r);
      closeSync(w.fd);
      w.fd = -1;
      this.close(); // appends go to the new file from now on
      // Complete: under a fresh name first, then in place of the old file, removed before (never renamed
      // over it: ext4 then writes the new file's data out first, 20–35 ms for 40 MB on the event loop).
      // read() finishes a swap a crash interrupted.
      renameSync(w.tmp, this.fresh);
      w.stage = "complete";
      rmSync(this.file, { force: true });
      w.stage = "swapping";
      renameSync(this.fresh, this.file);
    } catch (e) {
      this.abortRewrite();
      throw e;
    }
    this.pendingRewrite = undefined;
    this.bytes = w.bytes;
  }

  /** Abandons a rewrite under way: its temporary file is removed; the file is left as it was. */
  abortRewrite(): void {
    const w = this.pendingRewrite;
    if (!w) return;
    this.pendingRewrite = undefined;
    if (w.fd >= 0) {
      try {
        closeSync(w.fd);
      } catch {
        // already unusable
      }
    }
    try {
      rmSync(w.tmp, { force: true });
      // A complete new file stays only when the old one is gone already (read() takes it at the next start).
      if (w.stage === "complete") rmSync(this.fresh, { force: true });
    } catch {
      // the error that stopped the rewrite is the one to report
    }
  }

  private writeRecord(w: NonNullable<ThinkingLog["pendingRewrite"]>, r: SealedRecord): number {
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
