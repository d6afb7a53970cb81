// The sealed originals of redacted thinking blocks on disk (`<DATA_DIR>/sidecar/thinking/blocks.log`), so
// that a block the agent sends back after a sidecar restart is still restored. One JSON line per block
// remembered, appended with one write(2) (a crash of the process cannot lose it; a crash of the machine
// can lose the last ones, which then reach the provider as the client sent them). Nothing is deleted in
// place: at start-up, and whenever the file holds more than twice what is live, it is rewritten with the
// live blocks only (a temporary file renamed over it). A torn or damaged line is skipped.
// The lines hold sealed originals only (sealed-original.ts): no text is on disk in clear.
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { join } from "node:path";

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

function line(r: SealedRecord): string {
  return `${JSON.stringify({ k: r.index, x: r.expiresAt, n: r.chars, d: r.sealed.toString("base64") })}\n`;
}

function parse(text: string): SealedRecord | undefined {
  try {
    const v = JSON.parse(text) as { k?: unknown; x?: unknown; n?: unknown; d?: unknown };
    if (typeof v.k !== "string" || typeof v.x !== "number" || typeof v.n !== "number" || typeof v.d !== "string") return undefined;
    return { index: v.k, expiresAt: v.x, chars: v.n, sealed: Buffer.from(v.d, "base64") };
  } catch {
    return undefined;
  }
}

export class ThinkingLog {
  private readonly file: string;
  private fd: number | undefined;
  private bytes = 0;

  constructor(dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.file = join(dir, "blocks.log");
  }

  /** The records of the file, in the order they were written (a later record of an index replaces an earlier one). */
  read(): SealedRecord[] {
    let text: string;
    try {
      text = readFileSync(this.file, "utf8");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw e;
    }
    const out: SealedRecord[] = [];
    for (const l of text.split("\n")) {
      if (l === "") continue;
      const r = parse(l);
      if (r) out.push({ ...r, bytes: Buffer.byteLength(l, "utf8") + 1 });
    }
    return out;
  }

  /** Appends the record (one write(2)); its `bytes` are set. */
  append(r: SealedRecord): void {
    const bytes = Buffer.from(line(r), "utf8");
    this.fd ??= openSync(this.file, "a", 0o600);
    let off = 0;
    while (off < bytes.length) off += writeSync(this.fd, bytes, off, bytes.length - off);
    this.bytes += bytes.length;
    r.bytes = bytes.length;
  }

  /** Whether the file holds much more than `liveBytes` worth of records. */
  wantsRewrite(liveBytes: number): boolean {
    return this.bytes > 2 * liveBytes + REWRITE_SLACK_BYTES;
  }

  /** Replaces the file with these records (written to a temporary file, synced, renamed over it). */
  rewrite(records: Iterable<SealedRecord>): void {
    this.close();
    const tmp = `${this.file}.tmp`;
    const fd = openSync(tmp, "w", 0o600);
    let bytes = 0;
    try {
      for (const r of records) {
        const b = Buffer.from(line(r), "utf8");
        let off = 0;
        while (off < b.length) off += writeSync(fd, b, off, b.length - off);
        bytes += b.length;
        r.bytes = b.length;
      }
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.file);
    this.bytes = bytes;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
