// The queue of traces not yet acknowledged by the control plane.
import type { Trace } from "@agentgov/proto";

export interface TraceQueue {
  append(t: Trace): void;
  /** Up to n queued traces, oldest first, skipping ids in `exclude`. */
  peek(n: number, exclude: ReadonlySet<string>): Trace[];
  remove(ids: readonly string[]): Promise<void>;
  size(): number;
  onAppend(fn: () => void): void;
  close(): Promise<void>;
}

/** In-memory queue (traces are lost if the process dies; the on-disk spool replaces it). */
export class MemoryTraceQueue implements TraceQueue {
  private readonly items = new Map<string, Trace>();
  private listeners: (() => void)[] = [];

  append(t: Trace): void {
    this.items.set(t.id, t);
    for (const l of this.listeners) l();
  }

  peek(n: number, exclude: ReadonlySet<string>): Trace[] {
    const out: Trace[] = [];
    for (const t of this.items.values()) {
      if (out.length >= n) break;
      if (!exclude.has(t.id)) out.push(t);
    }
    return out;
  }

  async remove(ids: readonly string[]): Promise<void> {
    for (const id of ids) this.items.delete(id);
  }

  size(): number {
    return this.items.size;
  }

  onAppend(fn: () => void): void {
    this.listeners.push(fn);
  }

  async close(): Promise<void> {}
}
