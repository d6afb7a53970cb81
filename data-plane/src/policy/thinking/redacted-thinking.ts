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
// Originals are kept sealed (sealed-original.ts: a key derived from the signature, the redacted text as
// authenticated data), in memory and, with a directory, in an append-only file (thinking-log.ts), so a
// sidecar restart does not break the agents' tool loops; neither holds a value in clear.
import { blockIndex, openOriginal, sealOriginal } from "./sealed-original.js";
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

export interface RedactedThinkingPersistence {
  /** Directory of the block file (created 0700; the file 0600). */
  dir: string;
  /** A failed write or rewrite: the store goes on in memory (the block may not survive a restart). */
  onError(e: unknown): void;
}

export class RedactedThinkingStore {
  /** By blockIndex, oldest first. */
  private readonly entries = new Map<string, SealedRecord>();
  private chars = 0;
  private bytes = 0;
  private readonly log: ThinkingLog | undefined;

  constructor(
    private readonly limits: RedactedThinkingLimits = DEFAULT_REDACTED_THINKING_LIMITS,
    private readonly now: () => number = Date.now,
    private readonly persistence?: RedactedThinkingPersistence,
  ) {
    if (!persistence) return;
    this.log = new ThinkingLog(persistence.dir);
    // The file's live blocks come back (a later record of a block replaces an earlier one), within the
    // limits; the file is rewritten with just those.
    for (const r of this.log.read()) {
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
    const record: SealedRecord = { index, expiresAt: this.now() + this.limits.ttlMs, chars, sealed: sealOriginal(scope, signature, redacted, original) };
    if (this.log) {
      try {
        this.log.append(record);
      } catch (e) {
        this.persistence!.onError(e);
      }
    }
    this.add(record);
    this.trim();
    if (this.log?.wantsRewrite(this.bytes)) this.rewrite();
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
    return openOriginal(scope, signature, text, entry.sealed);
  }

  close(): void {
    this.log?.close();
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

  private rewrite(): void {
    if (!this.log) return;
    try {
      this.log.rewrite(this.entries.values());
      this.bytes = 0;
      for (const r of this.entries.values()) this.bytes += r.bytes ?? 0;
    } catch (e) {
      this.persistence!.onError(e);
    }
  }

  private drop(index: string): void {
    const entry = this.entries.get(index);
    if (!entry) return;
    this.entries.delete(index);
    this.chars -= entry.chars;
    this.bytes -= entry.bytes ?? 0;
  }
}
