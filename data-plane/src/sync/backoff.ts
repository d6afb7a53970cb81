// Reconnect pacing shared by the Sync client and the trace shipper: capped exponential backoff with
// jitter (half fixed, half random), and a sleep that a stop signal cuts short.

/** Delay before reconnect attempt `attempt` (1, 2, …): 100 ms doubling up to 5 s, jittered into [base/2, base). */
export function backoffMs(attempt: number): number {
  const base = Math.min(5000, 100 * 2 ** Math.min(attempt, 6));
  return base / 2 + Math.random() * (base / 2);
}

/** How long after losing a working Sync stream the sidecar keeps retrying fast (see syncReconnectMs). */
export const FAST_RECONNECT_WINDOW_MS = 30_000;

/**
 * Delay before Sync reconnect attempt `attempt`, `sinceLostMs` after a stream that had delivered
 * messages ended (undefined: no working stream lost, e.g. at start). Within FAST_RECONNECT_WINDOW_MS of
 * such a loss: 50 ms doubling up to 500 ms, jittered like backoffMs, so that a control plane back from a
 * restart (a deploy) hears from its sidecars within ~0.5 s: a write it answers meanwhile waits for no
 * stream, and a key deleted then still works at a sidecar not yet reconnected. Later, backoffMs.
 */
export function syncReconnectMs(attempt: number, sinceLostMs: number | undefined): number {
  if (sinceLostMs === undefined || sinceLostMs >= FAST_RECONNECT_WINDOW_MS) return backoffMs(attempt);
  const base = Math.min(500, 50 * 2 ** Math.min(Math.max(attempt - 1, 0), 4));
  return base / 2 + Math.random() * (base / 2);
}

export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}
