// Per-agent rate limit (agent config `rate_limit`, requests per minute) as an exact sliding window over
// the last 60 s, kept in the sidecar's memory: a request at time t is admitted when fewer than
// `perMinute` admitted requests have times in (t − 60 000 ms, t]. A refused request is not recorded.
export const WINDOW_MS = 60_000;

interface Log {
  times: number[];
  head: number;
}

export class RateLimiter {
  private readonly logs = new Map<string, Log>();

  /**
   * Records an admitted request and returns 0, or returns the whole seconds (≥ 1) until the oldest
   * admitted request leaves the window, when the agent is at its limit (Retry-After).
   */
  take(agentId: string, perMinute: number, now = Date.now()): number {
    if (!(perMinute > 0)) return 0;
    let log = this.logs.get(agentId);
    if (!log) {
      log = { times: [], head: 0 };
      this.logs.set(agentId, log);
    }
    const { times } = log;
    const cutoff = now - WINDOW_MS;
    while (log.head < times.length && times[log.head]! <= cutoff) log.head++;
    if (log.head > 1024 && log.head * 2 > times.length) {
      times.splice(0, log.head);
      log.head = 0;
    }
    // After a lowered limit, the window may hold more than perMinute entries: the one that must leave is
    // the perMinute-th newest.
    const inWindow = times.length - log.head;
    if (inWindow >= perMinute) {
      const leaving = times[times.length - perMinute]!;
      return Math.max(1, Math.ceil((leaving + WINDOW_MS - now) / 1000));
    }
    times.push(now);
    return 0;
  }

  /** Admitted requests of the agent in the window ending at `now`. */
  count(agentId: string, now = Date.now()): number {
    const log = this.logs.get(agentId);
    if (!log) return 0;
    let n = 0;
    for (let i = log.head; i < log.times.length; i++) if (log.times[i]! > now - WINDOW_MS) n++;
    return n;
  }
}
