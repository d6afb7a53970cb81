// A store that cannot be reached is a gRPC UNAVAILABLE, not INTERNAL: "try again later", which is what
// gRPC clients, proxies and retry policies act on (grpc-js retries and hedges only the codes a service
// config names, and UNAVAILABLE is the one conventionally named). The REST groups map the same failures
// to 503 service_unavailable (http/middleware/errors.ts); this interceptor is the gRPC side's one place
// for that mapping, for unary calls, for errors before a stream starts and for errors inside one.
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { isDatabaseUnavailable } from "../errors/database-unavailable.js";
import { isTraceStoreError } from "../stores/clickhouse/index.js";

/** The ConnectError a store outage becomes, or undefined when `e` is no such outage. */
export function unavailableError(e: unknown): ConnectError | undefined {
  if (e instanceof ConnectError) return undefined; // already a status the handler chose
  if (isTraceStoreError(e) && e.code === "engine_unavailable") {
    return new ConnectError("the trace store is unavailable; try again shortly", Code.Unavailable, undefined, undefined, e);
  }
  if (isDatabaseUnavailable(e)) return new ConnectError("the database is unavailable; try again shortly", Code.Unavailable, undefined, undefined, e);
  return undefined;
}

const mapped = (e: unknown): unknown => unavailableError(e) ?? e;

export function unavailableInterceptor(): Interceptor {
  return (next) => async (req) => {
    let res;
    try {
      res = await next(req);
    } catch (e) {
      throw mapped(e);
    }
    if (!res.stream) return res;
    const source = res.message;
    return {
      ...res,
      message: (async function* () {
        try {
          yield* source;
        } catch (e) {
          throw mapped(e);
        }
      })(),
    };
  };
}
