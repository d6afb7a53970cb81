// Request ids: the client's X-Request-Id when it is safe (≤128 chars), else a new one; always echoed.
import { randomUUID } from "node:crypto";
import type { Middleware } from "koa";
import type { AppState } from "../state.js";

const SAFE = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestId(): Middleware<AppState> {
  return async (ctx, next) => {
    const given = ctx.get("x-request-id");
    ctx.state.requestId = SAFE.test(given) ? given : `req_${randomUUID().replace(/-/g, "")}`;
    ctx.set("X-Request-Id", ctx.state.requestId);
    await next();
  };
}
