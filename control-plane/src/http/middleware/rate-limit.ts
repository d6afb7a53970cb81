// Per-key REST rate limit (sliding window over the last minute) with RateLimit-* headers and Retry-After.
// Counts are per control-plane replica; behind a load balancer each replica enforces the limit on what it sees.
import type { Middleware } from "koa";
import { AppError } from "../../errors/app-error.js";
import type { AppState } from "../state.js";

const WINDOW_MS = 60_000;

export function rateLimit(perMinute: number): Middleware<AppState> {
  const hits = new Map<string, number[]>();
  let lastSweep = Date.now();
  return async (ctx, next) => {
    const keyId = ctx.state.principal?.keyId;
    if (!keyId) return next();
    const now = Date.now();
    if (now - lastSweep > WINDOW_MS) {
      // Forget keys idle for a whole window, so the map holds only recently active keys.
      lastSweep = now;
      for (const [k, list] of hits) if ((list[list.length - 1] ?? 0) <= now - WINDOW_MS) hits.delete(k);
    }
    const list = (hits.get(keyId) ?? []).filter((t) => t > now - WINDOW_MS);
    const resetSec = list.length > 0 ? Math.max(1, Math.ceil((list[0]! + WINDOW_MS - now) / 1000)) : 60;
    ctx.set("RateLimit-Limit", String(perMinute));
    if (list.length >= perMinute) {
      hits.set(keyId, list);
      ctx.set("RateLimit-Remaining", "0");
      ctx.set("RateLimit-Reset", String(resetSec));
      throw new AppError("rate_limit_exceeded", `rate limit of ${perMinute} requests per minute exceeded; retry in ${resetSec} s`, [], resetSec);
    }
    list.push(now);
    hits.set(keyId, list);
    ctx.set("RateLimit-Remaining", String(perMinute - list.length));
    ctx.set("RateLimit-Reset", String(resetSec));
    await next();
  };
}
