// Starts the control plane: stores, migrations, bootstrap, REST (Koa) and gRPC (Sync, Ingest).
import { createServer, type Server } from "node:http";
import { join, resolve } from "node:path";
import type { Logger } from "pino";
import type { ControlPlaneConfig } from "./config/env.js";
import { openDb, type Db } from "./stores/postgres/db.js";
import { migrate } from "./stores/postgres/migrate.js";
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from "./stores/postgres/embedded.js";
import { DATA_DIR_MODE, privateDir } from "./stores/private-dir.js";
import { openTraceStore, type TraceStore } from "./stores/clickhouse/index.js";
import { createRestApp } from "./http/app.js";
import { startGrpcServer, type GrpcServer } from "./grpc/server.js";
import { RollupRefresher } from "./ingest/rollup-refresher.js";
import { SyncHub } from "./sync/hub.js";
import { IngestWriter } from "./ingest/writer.js";
import { makeAfterInsert, pruneTraceReceipts } from "./ingest/after-insert.js";
import { ensureBootstrap } from "./tenants/provision.js";
import { closeHttpServer, createControlPlaneOps, createServiceLogger, meterStoredTraces, type ControlPlaneOps } from "./observability/index.js";

export interface ControlPlane {
  restUrl: string;
  grpcUrl: string;
  restPort: number;
  grpcPort: number;
  databaseUrl: string;
  db: Db;
  traces: TraceStore;
  tenantId: string;
  /** Set only when this start created the first admin key (print it once). */
  createdApiKey?: string;
  log: Logger;
  /** Metrics registry and lifecycle (draining flag). */
  ops: ControlPlaneOps;
  /**
   * Graceful stop: readiness fails at once (draining), the REST and gRPC servers keep serving for
   * SHUTDOWN_DRAIN_MS, then stop accepting; in-flight requests get SHUTDOWN_TIMEOUT_MS; ingest
   * batches are flushed; stores are closed.
   */
  stop(): Promise<void>;
}

export function createLogger(level: string): Logger {
  return createServiceLogger({ service: "control-plane", level });
}

export async function startControlPlane(config: ControlPlaneConfig, log: Logger = createLogger(config.LOG_LEVEL)): Promise<ControlPlane> {
  const dataDir = resolve(config.DATA_DIR);
  privateDir(dataDir, DATA_DIR_MODE, (m) => log.warn(m));
  let embedded: EmbeddedPostgresHandle | undefined;
  let databaseUrl = config.DATABASE_URL;
  if (!databaseUrl) {
    embedded = await startEmbeddedPostgres(dataDir, (m) => log.warn(m));
    databaseUrl = embedded.url;
    log.info({ dataDir }, "embedded postgres started");
  }
  const db = openDb(databaseUrl);
  const applied = await migrate(db);
  if (applied.length) log.info({ applied }, "migrations applied");
  // The store keeps its files in <this>/chdb (DATA_DIR/chdb/chdb, tightened when chDB opens): both levels private.
  const chdbDir = join(dataDir, "chdb");
  if (!config.CLICKHOUSE_URL) privateDir(chdbDir, DATA_DIR_MODE, (m) => log.warn(m));
  const traces = await openTraceStore({
    url: config.CLICKHOUSE_URL,
    user: config.CLICKHOUSE_USER,
    password: config.CLICKHOUSE_PASSWORD,
    database: config.CLICKHOUSE_DATABASE,
    dataDir: chdbDir,
    retentionDays: config.TRACE_RETENTION_DAYS,
    storeRawPii: config.TRACE_STORE_RAW_PII,
    logger: log,
  });

  let stopped = false;
  const hub = new SyncHub(databaseUrl, (e) => {
    // Postgres stopping (57P01 admin_shutdown, 57P03 cannot_connect_now) is news, not a fault: the
    // listener reconnects once it is back. Under `npm start` the terminal's Ctrl-C reaches the embedded
    // Postgres too, which ends its connections while the servers drain; once stopping, it is expected.
    const code = (e as { code?: unknown } | undefined)?.code;
    if (stopped) log.debug({ err: e }, "sync listener error while stopping");
    else if (code === "57P01" || code === "57P03") log.info({ code }, "sync listener: postgres is shutting down; reconnecting when it is back");
    else log.warn({ err: e }, "sync listener error");
  });
  await hub.start();
  const ops = createControlPlaneOps();
  const writer = new IngestWriter(traces, meterStoredTraces(ops.metrics, makeAfterInsert(db, traces, (t) => hub.bump(t))), { log });
  const grpc: GrpcServer = await startGrpcServer({ host: config.HOST, port: config.GRPC_PORT, db, hub, writer, traces, ops });

  const { app } = createRestApp({ db, traces, config, log, ops, sync: hub });
  const server: Server = createServer({ keepAliveTimeout: 65_000 }, app.callback());
  await new Promise<void>((ok, fail) => {
    server.once("error", fail);
    server.listen(config.PORT, config.HOST, () => ok());
  });
  // After both listeners are up: a first start that fails on a busy port must not leave behind an admin
  // key that was never shown (the next start would not make another).
  const boot = await ensureBootstrap(db, {
    tenantName: config.BOOTSTRAP_TENANT,
    idpOrgId: config.BOOTSTRAP_IDP_ORG_ID,
    adminEmail: config.BOOTSTRAP_ADMIN_EMAIL,
    apiKey: config.BOOTSTRAP_API_KEY,
  });
  const addr = server.address();
  const restPort = typeof addr === "object" && addr ? addr.port : config.PORT;
  const enforceRetention = () => {
    traces.dropExpiredPartitions(new Date()).catch((e: unknown) => log.warn({ err: e }, "retention failed"));
    pruneTraceReceipts(db).catch((e: unknown) => log.warn({ err: e }, "pruning trace receipts failed"));
  };
  const retention = setInterval(enforceRetention, 3600_000);
  retention.unref();
  // Also once at start, so that a control plane restarted more often than hourly still enforces it.
  const firstRetention = setTimeout(enforceRetention, 5_000);
  firstRetention.unref();
  const rollups = new RollupRefresher(traces, log);
  rollups.start();

  log.info({ rest: restPort, grpc: grpc.port }, "control plane listening");
  return {
    restUrl: `http://${config.HOST}:${restPort}`,
    grpcUrl: `http://${config.HOST}:${grpc.port}`,
    restPort,
    grpcPort: grpc.port,
    databaseUrl,
    db,
    traces,
    tenantId: boot.tenantId,
    createdApiKey: boot.apiKey,
    log,
    ops,
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(retention);
      clearTimeout(firstRetention);
      await rollups.stop();
      const t0 = Date.now();
      ops.lifecycle.startDraining();
      const drainLeft = config.SHUTDOWN_DRAIN_MS - ops.lifecycle.drainingForMs();
      if (drainLeft > 0) {
        log.info({ drainMs: drainLeft }, "draining: readiness fails, still serving");
        await new Promise((r) => setTimeout(r, drainLeft));
      }
      const tClose = Date.now();
      const closed = await closeHttpServer(server, config.SHUTDOWN_TIMEOUT_MS);
      if (!closed) log.warn({ timeoutMs: config.SHUTDOWN_TIMEOUT_MS }, "in-flight REST requests cut at the shutdown deadline");
      await grpc.close(Math.max(1000, config.SHUTDOWN_TIMEOUT_MS - (Date.now() - tClose)));
      await writer.drain().catch((e: unknown) => log.error({ err: e }, "final ingest flush failed; the sidecars will resend"));
      await hub.close();
      await traces.close();
      await db.close();
      await embedded?.stop();
      log.info({ ms: Date.now() - t0 }, "control plane stopped");
    },
  };
}

