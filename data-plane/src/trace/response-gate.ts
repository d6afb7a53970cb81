// Holds the last bytes of a proxied response until that request's trace is safe in the spool, so that a
// client never holds a complete answer whose trace a crash could lose. How safe is the spool's choice
// (SPOOL_GATE): written to the OS (a crash of the process cannot lose it; the default, and then there is
// nothing to wait for once the trace is emitted) or fdatasync'd (a crash of the machine cannot either).
// A trace the spool could not make safe (its write or fdatasync failed) comes with a promise that
// resolves at its acknowledgement by the control plane: the answer waits for that, within the same limit.
//
// The proxy handler calls `res.end(...)` and emits the trace right after (synchronously; an answer's
// quality scores are computed after that, once the answer has left, and amended onto the spooled
// trace), passing the response it belongs to. The gate defers `res.end` until the trace is emitted and
// its append settles — at most
// `maxWaitMs` — and ends at once the responses that carry no trace (refusals before an agent is known),
// which it recognises when the handler has returned and one more setImmediate turn has passed without
// an emitted trace. The slot travels on the response object itself (no AsyncLocalStorage: its promise
// hooks would tax every promise of the process), which is a GatedServerResponse: the server creates
// its responses from that class (createServer's `ServerResponse` option), whose `end` defers while a
// slot is armed. Patching `end` on each response instead cost more than the gate itself: V8 then
// promoted ~6 % of everything the sidecar allocated to the old generation (against 0.5 %), so major
// GCs came every second or two under load (measured with --trace-gc-nvp).
import { ServerResponse, type IncomingMessage } from "node:http";
import { createHistogram, performance } from "node:perf_hooks";

interface Slot {
  /** The trace's append: null = safe already; a promise = safe once it resolves; undefined = not emitted yet. */
  durable: Promise<void> | null | undefined;
  /** Arguments of the deferred res.end call, and when it was called. */
  endArgs: unknown[] | undefined;
  endAt: number;
  handlerDone: boolean;
  armed: boolean;
  released: boolean;
  decide(): void;
  release(): void;
}

type EndArgs = Parameters<ServerResponse["end"]>;
const endResponse = ServerResponse.prototype.end as (this: ServerResponse, ...args: unknown[]) => ServerResponse;

/** The sidecar's responses: `end` is deferred while the gate holds the response (see ResponseGate.run). */
export class GatedServerResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  /** Set by ResponseGate.run for the request's lifetime; a field of every instance, so all share one shape. */
  gateSlot: Slot | undefined = undefined;

  override end(cb?: () => void): this;
  override end(chunk: unknown, cb?: () => void): this;
  override end(chunk: unknown, encoding: BufferEncoding, cb?: () => void): this;
  override end(...args: unknown[]): this {
    const slot = this.gateSlot;
    if (slot === undefined || slot.released || slot.endArgs !== undefined) {
      endResponse.apply(this, args);
      return this;
    }
    slot.endArgs = args;
    slot.endAt = performance.now();
    slot.decide();
    return this;
  }
}

export interface ResponseGateStats {
  /** Responses whose end waited for their trace. */
  gated: number;
  /** Responses released by the time limit before their trace was safe. */
  timedOut: number;
  /** How long gated responses were held (res.end called → last bytes released), in ms. */
  heldP50Ms: number;
  heldP99Ms: number;
  heldMaxMs: number;
}

export class ResponseGate {
  private readonly counters = { gated: 0, timedOut: 0 };
  /** Hold times in µs. */
  private readonly held = createHistogram();

  /** maxWaitMs = 0 disables the gate (responses end at once; traces are spooled right after). */
  constructor(private readonly maxWaitMs: number) {}

  /** Runs the handler for one request with its response gated. */
  run(res: GatedServerResponse, handler: () => Promise<void>): Promise<void> {
    if (this.maxWaitMs <= 0) return handler();
    const slot: Slot = {
      durable: undefined,
      endArgs: undefined,
      endAt: 0,
      handlerDone: false,
      armed: false,
      released: false,
      decide: () => this.decide(slot),
      release: () => {
        if (slot.released) return;
        slot.released = true;
        const endArgs = slot.endArgs;
        // nothing of the request is kept by the response object once it is released
        slot.endArgs = undefined;
        slot.durable = undefined;
        res.gateSlot = undefined;
        if (endArgs) {
          this.held.record(Math.max(1, Math.round((performance.now() - slot.endAt) * 1000)));
          res.end(...(endArgs as EndArgs));
        }
      },
    };
    res.gateSlot = slot;
    // A client that goes away needs no gate.
    res.once("close", () => slot.release());
    return handler().finally(() => {
      setImmediate(() => {
        slot.handlerDone = true;
        this.decide(slot);
      });
    });
  }

  /** The trace of the request answered by `res` was appended: `durable` is what its append returned. */
  traceEmitted(res: ServerResponse, durable: Promise<void> | null): void {
    const slot = res instanceof GatedServerResponse ? res.gateSlot : undefined;
    if (!slot || slot.released || slot.durable !== undefined) return;
    slot.durable = durable;
    this.decide(slot);
  }

  private decide(slot: Slot): void {
    if (slot.released || slot.armed || !slot.endArgs) return;
    const durable = slot.durable;
    if (durable === null) {
      this.counters.gated++;
      slot.release();
      return;
    }
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
    const h = this.held;
    const ms = (us: number) => (h.count > 0 ? Math.round(us) / 1000 : 0);
    return { ...this.counters, heldP50Ms: ms(h.percentile(50)), heldP99Ms: ms(h.percentile(99)), heldMaxMs: ms(h.max) };
  }
}
