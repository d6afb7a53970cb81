// The control plane's gRPC endpoint: Sync and Ingest over HTTP/2 (h2c), served by connect-node so
// that any standard gRPC client (grpc-js, grpc-go…) can call them.
import http2 from "node:http2";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { ConnectRouter } from "@connectrpc/connect";
import { IngestService, SyncService } from "@agentgov/proto";
import type { Db } from "../stores/postgres/db.js";
import type { SyncHub } from "../sync/hub.js";
import type { IngestWriter } from "../ingest/writer.js";
import { syncHandlers } from "./sync-service.js";
import { ingestHandlers } from "./ingest-service.js";

export interface GrpcServer {
  port: number;
  close(): Promise<void>;
}

export async function startGrpcServer(opts: { host: string; port: number; db: Db; hub: SyncHub; writer: IngestWriter }): Promise<GrpcServer> {
  const shutdown = new AbortController();
  const routes = (router: ConnectRouter) => {
    router.service(SyncService, syncHandlers(opts.db, opts.hub));
    router.service(IngestService, ingestHandlers(opts.db, opts.writer));
  };
  const server = http2.createServer(connectNodeAdapter({ routes, grpc: true, grpcWeb: false, connect: false, shutdownSignal: shutdown.signal }));
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
    close: () =>
      new Promise<void>((ok) => {
        shutdown.abort();
        server.close(() => ok());
        for (const s of sessions) s.close();
        setTimeout(() => {
          for (const s of sessions) s.destroy();
        }, 2000).unref();
      }),
  };
}
