// Reconnect pacing shared by the Sync client and the trace shipper: capped exponential backoff with
// jitter (half fixed, half random), and a sleep that a stop signal cuts short.

/** Delay before reconnect attempt `attempt` (1, 2, …): 100 ms doubling up to 5 s, jittered into [base/2, base). */
export function backoffMs(attempt: number): number {
  const base = Math.min(5000, 100 * 2 ** Math.min(attempt, 6));
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
