// Holds the last bytes of a proxied response until that request's trace is on disk (group commit of
// the spool), so that a client never holds a complete answer whose trace a crash could lose.
//
// The proxy handler calls `res.end(...)` and emits the trace right after (synchronously for refusals,
// on the next setImmediate turn once quality scores are computed for answers). The gate finds the
// request a trace belongs to through AsyncLocalStorage, defers `res.end` until the trace's append
// promise settles — at most `maxWaitMs` — and ends at once the responses that carry no trace
// (refusals before an agent is known), which it recognises when the handler has returned and one more
// setImmediate turn has passed without an emitted trace.
import { AsyncLocalStorage } from "node:async_hooks";
import type { ServerResponse } from "node:http";

interface Slot {
  durable: Promise<void> | undefined;
  /** Arguments of the deferred res.end call. */
  endArgs: unknown[] | undefined;
  handlerDone: boolean;
  armed: boolean;
  released: boolean;
  release(): void;
}

export interface ResponseGateStats {
  /** Responses whose end waited for their trace's commit. */
  gated: number;
  /** Responses released by the time limit before their trace was on disk. */
  timedOut: number;
}

export class ResponseGate {
  private readonly als = new AsyncLocalStorage<Slot>();
  private readonly counters: ResponseGateStats = { gated: 0, timedOut: 0 };

  /** maxWaitMs = 0 disables the gate (responses end at once; traces are committed in the background). */
  constructor(private readonly maxWaitMs: number) {}

  /** Runs the handler for one request with its response gated. */
  run(res: ServerResponse, handler: () => Promise<void>): Promise<void> {
    if (this.maxWaitMs <= 0) return handler();
    const originalEnd = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    const slot: Slot = {
      durable: undefined,
      endArgs: undefined,
      handlerDone: false,
      armed: false,
      released: false,
      release: () => {
        if (slot.released) return;
        slot.released = true;
        res.end = originalEnd as ServerResponse["end"];
        if (slot.endArgs) originalEnd(...slot.endArgs);
      },
    };
    res.end = ((...args: unknown[]) => {
      if (slot.released || slot.endArgs) return originalEnd(...args);
      slot.endArgs = args;
      this.decide(slot);
      return res;
    }) as ServerResponse["end"];
    // A client that goes away needs no gate.
    res.once("close", () => slot.release());
    return this.als.run(slot, handler).finally(() => {
      setImmediate(() => {
        slot.handlerDone = true;
        this.decide(slot);
      });
    });
  }

  /** Called with the append promise of a trace emitted by the current request (if any). */
  traceEmitted(durable: Promise<void>): void {
    const slot = this.als.getStore();
    if (!slot || slot.released || slot.durable) return;
    slot.durable = durable;
    this.decide(slot);
  }

  private decide(slot: Slot): void {
    if (slot.released || slot.armed || !slot.endArgs) return;
    const durable = slot.durable;
    if (durable) {
      slot.armed = true;
      this.counters.gated++;
      const timer = setTimeout(() => {
        if (!slot.released) this.counters.timedOut++;
        slot.release();
      }, this.maxWaitMs);
      void durable.finally(() => {
        clearTimeout(timer);
        slot.release();
      });
      return;
    }
    if (slot.handlerDone) slot.release();
  }

  stats(): ResponseGateStats {
    return { ...this.counters };
  }
}
