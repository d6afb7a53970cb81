// The streaming loop: every upstream chunk is observed (usage, text, tools), passed through the
// outbound stream governor when there is one, and written to the client at once, with backpressure.
// While the provider is silent (a long time to first token, or a pause between events), an SSE comment
// keeps idle-timeout proxies and load balancers from cutting the stream; it is only written where the
// bytes sent so far end on an event boundary, so it can never split an event.
import type { ServerResponse } from "node:http";
import type { StreamObserver } from "../providers/index.js";
import { SseBoundary } from "./sse-boundary.js";
import type { StreamGovernor } from "./stream-governor.js";

export interface RelayOptions {
  res: ServerResponse;
  /** The upstream body (decoded when the provider compressed it anyway). */
  body: AsyncIterable<Buffer>;
  observer: StreamObserver;
  /**
   * Rewrites the upstream bytes before the governor sees them (what the sidecar itself added to the
   * stream: added-usage-filter.ts); undefined = none. Keeps SSE framing whole, as a governor does.
   */
  filter?: StreamFilter | undefined;
  governor: StreamGovernor | undefined;
  /** Whether the answer is SSE (keep-alive comments and boundary tracking apply). */
  sse: boolean;
  /** A complete SSE comment to write after this many ms without a byte; undefined = none. */
  keepAlive: { intervalMs: number; comment: Buffer } | undefined;
  clientGone(): boolean;
  /** Stops the upstream call (the governor ended the stream). */
  abortUpstream(): void;
}

export interface StreamFilter {
  transform(chunk: Uint8Array): Buffer;
  /** What it still holds once the upstream stream ended. */
  end(): Buffer;
}

export interface RelayResult {
  /** Set when reading the upstream body failed (abort, reset, body timeout). */
  upstreamError?: unknown;
  /**
   * Set when the stream governor failed on an event (an answer nested too deeply to re-serialise, or a
   * bug): the upstream call was stopped and nothing more was written, the governor's held text included
   * (fail closed: what it held was not judged to the end).
   */
  governorError?: unknown;
  /** The governor ended the stream (outbound block). */
  stopped: boolean;
  /** True when the bytes written so far end on an SSE event boundary (an error event may follow). */
  atBoundary: boolean;
  keepAlivesSent: number;
}

/** Resolves when the client drained its buffer or went away. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

export async function relayStream(o: RelayOptions): Promise<RelayResult> {
  const { res, observer, governor } = o;
  const boundary = o.sse ? new SseBoundary() : undefined;
  const result: RelayResult = { stopped: false, atBoundary: true, keepAlivesSent: 0 };
  let timer: NodeJS.Timeout | undefined;
  if (o.keepAlive && boundary) {
    const { comment, intervalMs } = o.keepAlive;
    timer = setTimeout(() => {
      if (!o.clientGone() && !res.writableNeedDrain && boundary.atBoundary()) {
        res.write(comment);
        result.keepAlivesSent++;
      }
      timer?.refresh();
    }, intervalMs);
  }
  const send = (bytes: Buffer): boolean => {
    boundary?.push(bytes);
    timer?.refresh();
    return res.write(bytes);
  };
  try {
    for await (const chunk of o.body) {
      observer.push(chunk);
      let out = o.filter ? o.filter.transform(chunk) : chunk;
      if (governor && out.length > 0) {
        try {
          out = governor.transform(out);
        } catch (e) {
          result.governorError = e;
          o.abortUpstream();
          break;
        }
      }
      if (out.length > 0 && !o.clientGone() && !send(out)) await drained(res);
      if (governor?.stopped) {
        result.stopped = true;
        o.abortUpstream();
        break;
      }
    }
  } catch (e) {
    result.upstreamError = e;
  } finally {
    if (timer) clearTimeout(timer);
  }
  // What the filter held (a cut last event) goes through the governor like any other bytes.
  let held = o.filter && result.governorError === undefined && !result.stopped ? o.filter.end() : undefined;
  if (held && held.length > 0 && governor) {
    try {
      held = governor.transform(held);
      if (governor.stopped) result.stopped = true;
    } catch (e) {
      result.governorError = e;
      held = undefined;
    }
  }
  if (held && held.length > 0 && !o.clientGone() && (o.sse || result.upstreamError === undefined)) send(held);
  if (governor && result.governorError === undefined) {
    const rest = governor.end();
    // A non-SSE answer (Gemini's JSON array, held whole by a governor) whose provider connection broke is
    // cut (there is no boundary to end it on): nothing the governor held is written before the cut.
    if (rest.length > 0 && !o.clientGone() && (o.sse || result.upstreamError === undefined)) send(rest);
  }
  result.atBoundary = boundary ? boundary.atBoundary() : false;
  return result;
}
