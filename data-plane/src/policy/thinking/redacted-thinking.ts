// Originals of Anthropic thinking blocks that an outbound redaction changed, by signature.
//
// A thinking block's `signature` covers its text: the Messages API refuses a block sent back with other
// text, and an agent in a tool loop must send back the last turn's thinking unchanged. When a redact
// policy rewrites a thinking block on its way to the client, the sidecar keeps the original here; when
// the client sends that block back (same signature, the text it was given), the original is put back
// before the call goes to the provider. The client never sees the redacted values, the provider gets the
// block it signed. Memory only (bounded, expiring): after a restart or eviction the block goes on as the
// client sent it and the provider refuses it, as it would without the sidecar's help. Blocks are kept per
// agent (the scope): only the agent that was given a redacted block gets its original back.

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

interface Entry {
  redacted: string;
  original: string;
  expiresAt: number;
}

/** The store as one agent sees it. */
export interface ScopedThinking {
  remember(signature: string, redacted: string, original: string): void;
  restore(signature: string, text: string): string | undefined;
}

export class RedactedThinkingStore {
  private readonly entries = new Map<string, Entry>();
  private chars = 0;

  constructor(
    private readonly limits: RedactedThinkingLimits = DEFAULT_REDACTED_THINKING_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

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
    const key = `${scope}\u0000${signature}`;
    const cost = redacted.length + original.length;
    if (cost > this.limits.maxChars) return;
    this.drop(key);
    this.entries.set(key, { redacted, original, expiresAt: this.now() + this.limits.ttlMs });
    this.chars += cost;
    for (const [key, entry] of this.entries) {
      if (this.entries.size <= this.limits.maxEntries && this.chars <= this.limits.maxChars && entry.expiresAt > this.now()) break;
      this.drop(key);
    }
  }

  /** The original text of a block `scope` sent back with this signature and the redacted text, else undefined. */
  restore(scope: string, signature: string, text: string): string | undefined {
    const key = `${scope}\u0000${signature}`;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.drop(key);
      return undefined;
    }
    return entry.redacted === text ? entry.original : undefined;
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.chars -= entry.redacted.length + entry.original.length;
  }
}
