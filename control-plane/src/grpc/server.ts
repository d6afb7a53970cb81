// The control plane's gRPC endpoint: Sync and Ingest over HTTP/2 (h2c), served by connect-node so
// that any standard gRPC client (grpc-js, grpc-go…) can call them, plus the standard health service
// (grpc.health.v1.Health) and a metrics interceptor.
import http2 from "node:http2";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { Health, IngestService, SyncService } from "@agentgov/proto";
import type { Db } from "../stores/postgres/db.js";
import type { TraceStore } from "../stores/clickhouse/index.js";
import type { SyncHub } from "../sync/hub.js";
import type { IngestWriter } from "../ingest/writer.js";
import { syncHandlers } from "./sync-service.js";
import { ingestHandlers } from "./ingest-service.js";
import { grpcMetricsInterceptor, healthHandlers, type ControlPlaneOps } from "../observability/index.js";

export interface GrpcServer {
  port: number;
  /** Ends streams (Sync watchers reconnect elsewhere; unacknowledged uploads are resent), then closes; bounded by timeoutMs. */
  close(timeoutMs?: number): Promise<void>;
}

export interface GrpcServerOptions {
  host: string;
  port: number;
  db: Db;
  hub: SyncHub;
  writer: IngestWriter;
  /** For the health service (ClickHouse reachability); without it only Postgres is checked. */
  traces?: Pick<TraceStore, "ping">;
  ops?: ControlPlaneOps;
}

export async function startGrpcServer(opts: GrpcServerOptions): Promise<GrpcServer> {
  const shutdown = new AbortController();
  const ops = opts.ops;
  const traces = opts.traces ?? { ping: async () => true };
  const readiness = () =>
    opts.ops ? opts.ops.lifecycle.readiness(opts.db, traces) : opts.db.query("SELECT 1").then(() => ({ ready: true, draining: false, postgres: true, clickhouse: true }), () => ({ ready: false, draining: false, postgres: false, clickhouse: false }));
  const routes = (router: ConnectRouter) => {
    router.service(SyncService, syncHandlers(opts.db, opts.hub));
    router.service(IngestService, ingestHandlers(opts.db, opts.writer));
    router.service(Health, healthHandlers(readiness, { shutdown: shutdown.signal, ...(ops ? { onChange: (fn: () => void) => ops.lifecycle.onChange(fn) } : {}) }));
  };
  const interceptors: Interceptor[] = opts.ops ? [grpcMetricsInterceptor(opts.ops.metrics)] : [];
  const server = http2.createServer(connectNodeAdapter({ routes, grpc: true, grpcWeb: false, connect: false, shutdownSignal: shutdown.signal, interceptors }));
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  await new Promise<void>((ok, fail) => {
    server.once("error", fail);
    server.listen(opts.port, opts.host, () => ok());
  });
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : opts.port;
  return {
    port,
    close: (timeoutMs = 5000) =>
      new Promise<void>((ok) => {
        shutdown.abort();
        // GOAWAY on every session: no new streams; running ones end (the shutdown signal aborts them).
        for (const s of sessions) s.close();
        const force = setTimeout(() => {
          for (const s of sessions) s.destroy();
        }, timeoutMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          ok();
        });
      }),
  };
}
