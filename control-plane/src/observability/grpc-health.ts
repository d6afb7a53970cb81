// The standard gRPC health service (grpc.health.v1.Health) for Kubernetes gRPC probes,
// grpc_health_probe and load balancers. "" is the whole server (Postgres and ClickHouse reachable,
// not draining); governance.v1.SyncService needs Postgres; governance.v1.IngestService needs both.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { HealthCheckResponseSchema, HealthCheckResponse_ServingStatus as Status, type HealthCheckRequest, type HealthCheckResponse } from "@agentgov/proto";
import type { Readiness } from "./lifecycle.js";

export const HEALTH_SERVICES = ["", "governance.v1.SyncService", "governance.v1.IngestService"] as const;

function statusOf(service: string, r: Readiness): Status {
  if (r.draining) return Status.NOT_SERVING;
  const up = service === "governance.v1.SyncService" ? r.postgres : r.postgres && r.clickhouse;
  return up ? Status.SERVING : Status.NOT_SERVING;
}

export interface HealthOptions {
  /** How often Watch re-checks the stores (default 5 s). */
  watchIntervalMs?: number;
  /** Server shutdown: Watch reports the final status. */
  shutdown?: AbortSignal;
  /** Subscribes to serving-state changes (draining) so Watch reports them at once. */
  onChange?: (fn: () => void) => () => void;
}

export function healthHandlers(readiness: () => Promise<Readiness>, opts: HealthOptions = {}) {
  const known = new Set<string>(HEALTH_SERVICES);
  const every = opts.watchIntervalMs ?? 5000;
  return {
    async check(req: HealthCheckRequest): Promise<HealthCheckResponse> {
      if (!known.has(req.service)) throw new ConnectError(`unknown service "${req.service}"`, Code.NotFound);
      return create(HealthCheckResponseSchema, { status: statusOf(req.service, await readiness()) });
    },
    async *watch(req: HealthCheckRequest, ctx: HandlerContext): AsyncGenerator<HealthCheckResponse> {
      let last: Status | undefined;
      while (!ctx.signal.aborted) {
        const status = known.has(req.service) ? statusOf(req.service, await readiness()) : Status.SERVICE_UNKNOWN;
        if (status !== last) {
          last = status;
          yield create(HealthCheckResponseSchema, { status });
        }
        // On shutdown the stream reports NOT_SERVING (above) before the server ends it.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, every);
          const unsubscribe = opts.onChange?.(done);
          function done() {
            clearTimeout(timer);
            unsubscribe?.();
            ctx.signal.removeEventListener("abort", done);
            opts.shutdown?.removeEventListener("abort", done);
            resolve();
          }
          ctx.signal.addEventListener("abort", done);
          opts.shutdown?.addEventListener("abort", done);
        });
      }
    },
  };
}
