// The control plane's gRPC endpoint: Sync and Ingest over HTTP/2 (h2c), served by connect-node so
// that any standard gRPC client (grpc-js, grpc-go…) can call them, plus the standard health service
// (grpc.health.v1.Health) and a metrics interceptor.
import http2 from "node:http2";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { Code, type ConnectRouter, type ConnectRouterOptions, type Interceptor } from "@connectrpc/connect";
import type { DescService } from "@bufbuild/protobuf";
import { Health, IngestService, SyncService } from "@agentgov/proto";
import type { Db } from "../stores/postgres/db.js";
import type { TraceStore } from "../stores/clickhouse/index.js";
import type { SyncHub } from "../sync/hub.js";
import type { IngestWriter } from "../ingest/writer.js";
import { syncHandlers } from "./sync-service.js";
import { ingestHandlers } from "./ingest-service.js";
import { grpcMetricsInterceptor, healthHandlers, type ControlPlaneOps } from "../observability/index.js";
import { bearerKey } from "./auth.js";
import { unavailableInterceptor } from "./unavailable.js";

// Limits against unauthenticated clients (connect and node:http2 set none by default: messages up to
// ~4 GiB, applied after gzip inflation; unlimited concurrent streams; no timeout on a request's arrival).
/** Largest Sync/Health request message, after decompression: a WatchRequest is a version and a sidecar id. */
export const SMALL_REQUEST_MAX_BYTES = 64 * 1024;
/**
 * Largest Ingest.Upload message, after decompression. The sidecar's batches are ~1 MiB (BATCH_BYTES in
 * data-plane/src/trace/shipper.ts), but a batch holds at least one trace, and one trace may be as large
 * as the spool takes (MAX_PAYLOAD_BYTES, 64 MiB, data-plane/src/trace/spool-format.ts; a prompt alone
 * may be a 10 MiB proxied body): a legitimate trace refused here would stall its sidecar's spool for good.
 * Upload authenticates before it reads any message, so only a valid key's stream gets this far.
 */
export const UPLOAD_MAX_BYTES = 65 * 1024 * 1024;
/** Concurrent streams per HTTP/2 connection (a sidecar uses two, Watch and Upload, plus health checks). */
export const MAX_CONCURRENT_STREAMS = 100;
/**
 * A request message of a method that takes one (all but Ingest.Upload) must have fully arrived within
 * this time, else its stream is reset. Only the request is timed: Watch responses stream for hours, and
 * Upload's request stream is long-lived by design (and authenticated before any of it is read).
 */
export const REQUEST_ARRIVAL_TIMEOUT_MS = 30_000;

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
  // Per-service options replace the router's protocol choice (connect enables any protocol not set to
  // false), so every registration repeats it.
  const protocols = { grpc: true, grpcWeb: false, connect: false } as const;
  const uploadOptions: ConnectRouterOptions = { ...protocols, readMaxBytes: UPLOAD_MAX_BYTES };
  const routes = (router: ConnectRouter) => {
    router.service(SyncService, syncHandlers(opts.db, opts.hub));
    router.service(IngestService, ingestHandlers(opts.db, opts.writer), uploadOptions);
    router.service(Health, healthHandlers(readiness, { shutdown: shutdown.signal, ...(ops ? { onChange: (fn: () => void) => ops.lifecycle.onChange(fn) } : {}) }));
  };
  // The first is the outermost: the metrics count the status the unavailable mapping gives.
  const interceptors: Interceptor[] = [...(opts.ops ? [grpcMetricsInterceptor(opts.ops.metrics)] : []), unavailableInterceptor()];
  const handler = connectNodeAdapter({ routes, ...protocols, readMaxBytes: SMALL_REQUEST_MAX_BYTES, shutdownSignal: shutdown.signal, interceptors });
  const server = http2.createServer({ settings: { maxConcurrentStreams: MAX_CONCURRENT_STREAMS } }, guarded(handler));
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

const SIDECAR_SERVICES = new Set([SyncService, IngestService].map((s) => `/${s.typeName}/`));
/** Methods whose request is one message (timed by REQUEST_ARRIVAL_TIMEOUT_MS). */
const ONE_MESSAGE_PATHS = new Set(
  ([SyncService, IngestService, Health] as DescService[]).flatMap((s) =>
    s.methods.filter((m) => m.methodKind === "unary" || m.methodKind === "server_streaming").map((m) => `/${s.typeName}/${m.name}`),
  ),
);

/**
 * Checks that come before connect reads a request. Sync and Ingest refuse a missing or malformed
 * `authorization` at once, from the headers. The key itself is looked up by the handlers
 * (authenticateSidecar): connect calls a Watch handler only once its request message is read, so a
 * well-formed but unknown key still gets up to SMALL_REQUEST_MAX_BYTES read, within REQUEST_ARRIVAL_TIMEOUT_MS.
 */
function guarded(handler: (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void) {
  return (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse): void => {
    const path = req.url.split("?", 1)[0] ?? "";
    if (SIDECAR_SERVICES.has(path.slice(0, path.lastIndexOf("/") + 1)) && !bearerKey(req.headers.authorization)) {
      // A gRPC "trailers-only" answer; the request body, if any, is never read.
      const stream = req.stream;
      stream.respond(
        { ":status": 200, "content-type": "application/grpc", "grpc-status": String(Code.Unauthenticated), "grpc-message": "missing or invalid API key" },
        { endStream: true },
      );
      stream.close(http2.constants.NGHTTP2_NO_ERROR);
      return;
    }
    if (ONE_MESSAGE_PATHS.has(path)) {
      const timer = setTimeout(() => req.stream.close(http2.constants.NGHTTP2_CANCEL), REQUEST_ARRIVAL_TIMEOUT_MS);
      timer.unref();
      const done = () => clearTimeout(timer);
      req.once("end", done);
      req.stream.once("close", done);
    }
    handler(req, res);
  };
}
