// Maps every error to its REST group's body shape, in one place (DESIGN.md §4).
import type { Middleware } from "koa";
import { AppError } from "../../errors/app-error.js";
import { outageCause, outageOf } from "../../errors/database-unavailable.js";
import { isTraceStoreError } from "../../stores/clickhouse/index.js";
import { committedTransactions } from "../../stores/postgres/db.js";
import type { AppState } from "../state.js";

export interface ErrorLogger {
  error(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/**
 * Seconds a client is asked to wait when Postgres is unavailable: an embedded Postgres is restarted
 * within about a second (stores/postgres/embedded.ts), a managed one fails over in seconds; the SDK
 * retries twice by default, so 2 s per attempt covers a restart without hammering a database that is
 * coming back.
 */
export const DATABASE_RETRY_AFTER_SECONDS = 2;
/** Seconds a client is asked to wait when the trace store (ClickHouse) is unavailable. */
export const TRACE_STORE_RETRY_AFTER_SECONDS = 5;

/** Methods that change nothing: answering 503 after any failure of theirs is safe to retry. */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The answer to a failure of an unavailable store, or undefined for any other failure. 503
 * `service_unavailable` with Retry-After means "nothing was done, send it again" (the SDK retries it
 * for every method): a write answers it only when it cannot have changed anything, i.e. its failure
 * came before a statement reached Postgres or before COMMIT (the transaction was rolled back), and no
 * transaction of this process committed while it ran (it may have been its own, before a later read
 * failed). Otherwise the write may or may not have been applied: 500, which the SDK does not repeat for
 * POST and PATCH; the message says so.
 */
function unavailableStore(err: unknown, method: string, commitsAtStart: number, log: ErrorLogger, where: object): AppError | undefined {
  if (isTraceStoreError(err) && err.code === "engine_unavailable") {
    log.warn({ ...where, cause: outageCause(err) }, "trace store unavailable");
    return new AppError("service_unavailable", "the trace store is unavailable; try again shortly", [], TRACE_STORE_RETRY_AFTER_SECONDS);
  }
  const outcome = outageOf(err);
  if (outcome === undefined) return undefined;
  const retryable = SAFE_METHODS.has(method) || (outcome === "not_applied" && committedTransactions() === commitsAtStart);
  if (retryable) {
    log.warn({ ...where, cause: outageCause(err) }, "database unavailable");
    return new AppError("service_unavailable", "the database is unavailable; try again shortly", [], DATABASE_RETRY_AFTER_SECONDS);
  }
  log.error({ ...where, cause: outageCause(err) }, "database connection lost during a write; it may or may not have been applied");
  return new AppError(
    "internal_error",
    "the database connection was lost while this request was being handled: it may or may not have been applied (check before sending it again); quote the request id when asking for support",
  );
}

export function toGroupABody(e: AppError, requestId: string) {
  return { error: { code: e.code === "invalid_signature" ? "forbidden" : e.code, message: e.message, request_id: requestId } };
}

export function toGroupBBody(e: AppError) {
  return e.details.length > 0 ? { error: e.message, details: e.details } : { error: e.message };
}

export function errorHandler(log: ErrorLogger): Middleware<AppState> {
  return async (ctx, next) => {
    const commitsAtStart = committedTransactions();
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
        const where = { requestId: ctx.state.requestId, method: ctx.method, path: ctx.path };
        const unavailable = unavailableStore(err, ctx.method, commitsAtStart, log, where);
        if (unavailable) e = unavailable;
        else {
          log.error({ err, requestId: ctx.state.requestId, path: ctx.path }, "unhandled error");
          e = new AppError("internal_error", "internal error; quote the request id when asking for support");
        }
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
