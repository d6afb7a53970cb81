// The seam for outbound governance inside a streamed answer (redaction and blocking in SSE), which the
// policy engine provides; the proxy calls it once per upstream chunk, in the streaming loop.
import type { Agent, Policy } from "@agentgov/proto";
import type { ScopedThinking } from "../policy/thinking/index.js";
import type { ProviderAdapter } from "../providers/index.js";
import type { TraceDraft } from "../trace/builder.js";

/**
 * One governor per streamed answer. The proxy feeds it every upstream chunk as received and writes
 * what it returns, at once, to the client:
 * - `transform(chunk)` returns the bytes to send now: the chunk itself when nothing changes (no copy),
 *   rewritten bytes (redaction), fewer bytes (holding back a tail that might still match), or, after a
 *   block, the provider's native error event (`adapter.errorEvent`) that ends the stream;
 * - `stopped` becomes true once the governor ended the stream: the proxy then stops reading, aborts
 *   the upstream call, writes nothing more from upstream and finishes the response;
 * - `end()` is called once when the upstream stream ended (cleanly or not) and returns what it still
 *   holds back (may be empty).
 * Bytes the governor returns must keep SSE framing whole: the proxy inserts its keep-alive comments
 * only where what it has written so far ends on an event boundary.
 * The governor records what it did (evaluations, fired policies, completion PII) on `ctx.draft`.
 */
export interface StreamGovernor {
  transform(chunk: Buffer): Buffer;
  end(): Buffer;
  readonly stopped: boolean;
}

export interface StreamGovernorContext {
  adapter: ProviderAdapter;
  agent: Agent;
  /** Active policies of the tenant, by priority (the governance state of this request). */
  policies: readonly Policy[];
  /** The trace being built; outbound evaluations and completion PII go here. */
  draft: TraceDraft;
  /**
   * Where a redacted Anthropic thinking block's original is kept (by signature) so that the block the
   * client sends back can be restored; absent in tests that do not need it.
   */
  redactedThinking?: ScopedThinking;
  /** Content-Type of the upstream answer (text/event-stream, or application/json for Gemini's JSON-array stream). */
  contentType: string;
}

/** Returns a governor for this streamed answer, or undefined when no outbound policy applies (pure pass-through). */
export type StreamGovernorFactory = (ctx: StreamGovernorContext) => StreamGovernor | undefined;
