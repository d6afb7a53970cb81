// Maps every error to its REST group's body shape, in one place (DESIGN.md §4).
import type { Middleware } from "koa";
import { AppError } from "../../errors/app-error.js";
import type { AppState } from "../state.js";

export interface ErrorLogger {
  error(obj: object, msg?: string): void;
}

export function toGroupABody(e: AppError, requestId: string) {
  return { error: { code: e.code === "invalid_signature" ? "forbidden" : e.code, message: e.message, request_id: requestId } };
}

export function toGroupBBody(e: AppError) {
  return e.details.length > 0 ? { error: e.message, details: e.details } : { error: e.message };
}

export function errorHandler(log: ErrorLogger): Middleware<AppState> {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new AppError("not_found", `no route for ${ctx.method} ${ctx.path}`);
      // The resource exists, the method does not: 405, keeping the Allow header the router set (RFC 9110 §15.5.6).
      if (ctx.status === 405 && ctx.body === undefined) throw new AppError("method_not_allowed", `method ${ctx.method} not allowed on ${ctx.path}`);
      // A method no route knows at all (PROPFIND, …): the router's 501, in the group's error shape.
      if (ctx.status === 501 && ctx.body === undefined) throw new AppError("not_implemented", `method ${ctx.method} is not supported`);
    } catch (err) {
      let e: AppError;
      if (err instanceof AppError) e = err;
      else {
        log.error({ err, requestId: ctx.state.requestId, path: ctx.path }, "unhandled error");
        e = new AppError("internal_error", "internal error; quote the request id when asking for support");
      }
      ctx.status = e.status;
      if (e.retryAfterSeconds !== undefined) ctx.set("Retry-After", String(e.retryAfterSeconds));
      // A 401 names the scheme the key goes in (RFC 9110 §11.6.1, RFC 6750 §3): a key that was sent and
      // refused is an invalid token.
      if (e.status === 401) ctx.set("WWW-Authenticate", ctx.get("authorization") ? 'Bearer realm="agentgov", error="invalid_token"' : 'Bearer realm="agentgov"');
      ctx.body = ctx.path.startsWith("/v1/") || ctx.path === "/v1" ? toGroupABody(e, ctx.state.requestId) : toGroupBBody(e);
    }
  };
}
