// Originals of signed thinking blocks that an outbound redaction changed, by signature (Anthropic
// thinking blocks; OpenRouter `reasoning_details` text items, the same blocks in another wire format).
//
// A thinking block's `signature` covers its text: the Messages API refuses a block sent back with other
// text, and an agent in a tool loop must send back the last turn's thinking unchanged. When a redact
// policy rewrites a thinking block on its way to the client, the sidecar keeps the original here; when
// the client sends that block back (same signature, the text it was given), the original is put back
// before the call goes to the provider. The client never sees the redacted values, the provider gets the
// block it signed. Blocks are kept per agent (the scope): only the agent that was given a redacted block
// gets its original back. Bounded (entries, characters, age; oldest first): after an eviction the block
// goes on as the client sent it and the provider refuses it, as it would without the sidecar's help.
//
// Originals are kept sealed (sealed-original.ts: a key derived from the signature, the agent id and the
// sidecar's secret, the redacted text as authenticated data), in memory and, with a directory, in an
// append-only file (thinking-log.ts), so a sidecar restart does not break the agents' tool loops; neither
// holds a value in clear. The sidecar passes its SIDECAR_KEY as the secret: after a rotation of that key
// the blocks kept before it no longer open (they go to the provider as the client sent them).
//
// The file is a convenience, never a condition: a directory or file that cannot be created, read or
// rewritten at start-up, and any failed append or rewrite later, is reported once (onError) and the store
// goes on in memory only for the rest of the process (the file is no longer touched; what it held stays
// for the next start). Appends are not synced: a power loss can lose the last blocks, which then go to
// the provider as the client sent them; a rewrite is synced before it takes the file's place.
import { blockIndex, openOriginal, sealOriginal, thinkingSalt } from "./sealed-original.js";
import { ThinkingLog, type SealedRecord } from "./thinking-log.js";

export interface RedactedThinkingLimits {
  /** Blocks kept at most (the oldest go first). */
  maxEntries: number;
  /** Characters kept at most, originals and redacted texts together. */
  maxChars: number;
  /** How long a block is kept after its answer. */
  ttlMs: number;
}

export const DEFAULT_REDACTED_THINKING_LIMITS: RedactedThinkingLimits = {
  maxEntries: 4096,
  maxChars: 32 * 1024 * 1024,
  ttlMs: 6 * 60 * 60 * 1000,
};

/** The store as one agent sees it. */
export interface ScopedThinking {
  remember(signature: string, redacted: string, original: string): void;
  restore(signature: string, text: string): string | undefined;
}

/** Bytes of the block file a rewrite writes per turn of the event loop (well under a millisecond). */
const REWRITE_SLICE_BYTES = 256 * 1024;

export interface RedactedThinkingOptions {
  /** Directory of the block file (created 0700; the file 0600). Without it the store is in memory only. */
  dir?: string;
  /**
   * The file could not be used (created, read, appended to or rewritten): called once, the store goes on
   * in memory only (blocks remembered from then on do not survive a restart).
   */
  onError?(e: unknown): void;
  /**
   * The sidecar's own secret (its SIDECAR_KEY), mixed into every block's key: the file and a client's
   * conversation alone do not open a block. Another secret opens nothing sealed under this one. Without
   * it, a constant.
   */
  secret?: Buffer;
}

export class RedactedThinkingStore {
  /** By blockIndex, oldest first. */
  private readonly entries = new Map<string, SealedRecord>();
  private chars = 0;
  /** Bytes of the live records' lines in the file. */
  private bytes = 0;
  /** The block file, until it fails once (then memory only). */
  private log: ThinkingLog | undefined;
  private readonly salt: Buffer;
  /** The next slice of a rewrite under way. */
  private slice: NodeJS.Immediate | undefined;

  constructor(
    private readonly limits: RedactedThinkingLimits = DEFAULT_REDACTED_THINKING_LIMITS,
    private readonly now: () => number = Date.now,
    private readonly options: RedactedThinkingOptions = {},
  ) {
    this.salt = thinkingSalt(options.secret);
    if (options.dir === undefined) return;
    let records: SealedRecord[];
    try {
      this.log = new ThinkingLog(options.dir);
      records = this.log.read();
    } catch (e) {
      this.fileFailed(e); // the sidecar starts all the same, in memory only
      return;
    }
    // The file's live blocks come back (a later record of a block replaces an earlier one), within the
    // limits; the file is rewritten with just those.
    for (const r of records) {
      this.drop(r.index);
      if (r.expiresAt > this.now() && r.chars <= this.limits.maxChars) this.add(r);
    }
    this.trim();
    this.rewrite();
  }

  get size(): number {
    return this.entries.size;
  }

  /** The store for one agent (its id as the scope). */
  scoped(scope: string): ScopedThinking {
    return {
      remember: (signature, redacted, original) => this.remember(scope, signature, redacted, original),
      restore: (signature, text) => this.restore(scope, signature, text),
    };
  }

  /** Keeps `original` for the block signed `signature` that went to `scope`'s client as `redacted`. */
  remember(scope: string, signature: string, redacted: string, original: string): void {
    if (signature === "" || redacted === original) return;
    const chars = redacted.length + original.length;
    if (chars > this.limits.maxChars) return;
    const index = blockIndex(scope, signature);
    this.drop(index);
    const record: SealedRecord = { index, expiresAt: this.now() + this.limits.ttlMs, chars, sealed: sealOriginal(scope, signature, redacted, original, this.salt) };
    if (this.log) {
      try {
        this.log.append(record);
      } catch (e) {
        this.fileFailed(e);
      }
    }
    this.add(record);
    this.trim();
    if (this.log && !this.log.rewriting && this.log.wantsRewrite(this.bytes)) this.rewriteInSlices();
  }

  /** The original text of a block `scope` sent back with this signature and the redacted text, else undefined. */
  restore(scope: string, signature: string, text: string): string | undefined {
    const index = blockIndex(scope, signature);
    const entry = this.entries.get(index);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.drop(index);
      return undefined;
    }
    return openOriginal(scope, signature, text, entry.sealed, this.salt);
  }

  /** Stops using the file (a rewrite under way is abandoned); the store goes on in memory. */
  close(): void {
    if (this.slice) clearImmediate(this.slice);
    this.slice = undefined;
    const log = this.log;
    this.log = undefined; // blocks remembered after close are not written
    try {
      log?.abortRewrite();
      log?.close();
    } catch {
      // nothing more is written
    }
  }

  private add(r: SealedRecord): void {
    this.entries.set(r.index, r);
    this.chars += r.chars;
    this.bytes += r.bytes ?? 0;
  }

  /** Oldest first, while over a limit or expired. */
  private trim(): void {
    for (const [index, entry] of this.entries) {
      if (this.entries.size <= this.limits.maxEntries && this.chars <= this.limits.maxChars && entry.expiresAt > this.now()) break;
      this.drop(index);
    }
  }

  /**
   * The rewrite while the proxy runs: REWRITE_SLICE_BYTES per turn of the event loop (a rewrite at the
   * limits, ~40 MB, held the loop for 70–90 ms in one piece), what is live when it starts; blocks
   * remembered meanwhile follow them.
   */
  private rewriteInSlices(): void {
    const log = this.log;
    if (!log) return;
    let synced = false;
    const step = () => {
      this.slice = undefined;
      if (this.log !== log) return; // the file failed or the store closed meanwhile
      try {
        if (!log.rewriteStep(REWRITE_SLICE_BYTES)) {
          this.slice = setImmediate(step);
          return;
        }
        if (!synced) {
          // Everything live is written: synced in the thread pool, then what was remembered meanwhile is
          // written (a slice at a time again) and the file put in place.
          synced = true;
          log.syncRewrite((e) => {
            if (this.log !== log) return;
            if (e !== undefined) return this.fileFailed(e);
            this.slice = setImmediate(step);
          });
          return;
        }
        log.commitRewrite();
        this.bytes = 0;
        for (const r of this.entries.values()) this.bytes += r.bytes ?? 0;
      } catch (e) {
        this.fileFailed(e);
      }
    };
    try {
      log.startRewrite([...this.entries.values()], (r) => this.entries.get(r.index) === r);
    } catch (e) {
      this.fileFailed(e);
      return;
    }
    this.slice = setImmediate(step);
  }

  private rewrite(): void {
    if (!this.log) return;
    try {
      this.log.rewrite(this.entries.values());
      this.bytes = 0;
      for (const r of this.entries.values()) this.bytes += r.bytes ?? 0;
    } catch (e) {
      this.fileFailed(e);
    }
  }

  /** The file failed: reported, and not used again by this process (memory only). */
  private fileFailed(e: unknown): void {
    const log = this.log;
    this.log = undefined;
    if (this.slice) clearImmediate(this.slice);
    this.slice = undefined;
    try {
      log?.abortRewrite();
      log?.close();
    } catch {
      // it is dropped anyway
    }
    this.options.onError?.(e);
  }

  private drop(index: string): void {
    const entry = this.entries.get(index);
    if (!entry) return;
    this.entries.delete(index);
    this.chars -= entry.chars;
    this.bytes -= entry.bytes ?? 0;
  }
}
