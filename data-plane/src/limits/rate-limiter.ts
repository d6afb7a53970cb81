// Per-agent sliding-window rate limit (requests per minute), kept in the sidecar's memory.
const WINDOW_MS = 60_000;

export class RateLimiter {
  private readonly hits = new Map<string, number[]>();

  /** Records a hit and returns 0 when allowed, else the seconds until the oldest hit leaves the window. */
  take(agentId: string, perMinute: number, now = Date.now()): number {
    if (perMinute <= 0) return 0;
    let list = this.hits.get(agentId);
    if (!list) {
      list = [];
      this.hits.set(agentId, list);
    }
    let drop = 0;
    while (drop < list.length && list[drop]! <= now - WINDOW_MS) drop++;
    if (drop > 0) list.splice(0, drop);
    if (list.length >= perMinute) return Math.max(1, Math.ceil((list[0]! + WINDOW_MS - now) / 1000));
    list.push(now);
    return 0;
  }
}
