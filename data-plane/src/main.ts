// Starts a sidecar: the governance state (persisted snapshot, then Sync), the trace queue and shipper,
// and the proxy server.
import { createServer, type Server } from "node:http";
import { join, resolve } from "node:path";
import { randomUUID } from "node:crypto";
import { Agent as UndiciAgent } from "undici";
import { createGrpcTransport } from "@connectrpc/connect-node";
import pino, { type Logger } from "pino";
import type { Trace } from "@agentgov/proto";
import { providerBaseUrls, type SidecarConfig } from "./config/env.js";
import { EMPTY_STATE, type GovernanceState } from "./state/governance-state.js";
import { loadSnapshot } from "./sync/snapshot-file.js";
import { SyncClient } from "./sync/client.js";
import { MemoryTraceQueue, type TraceQueue } from "./trace/queue.js";
import { TraceShipper } from "./trace/shipper.js";
import { RateLimiter } from "./limits/rate-limiter.js";
import { BudgetLedger } from "./limits/budget.js";
import { createProxyHandler } from "./proxy/handler.js";

export interface Sidecar {
  url: string;
  port: number;
  state(): GovernanceState;
  /** Resolves when the first snapshot from the control plane has been applied. */
  synced: Promise<void>;
  queue: TraceQueue;
  log: Logger;
  stop(): Promise<void>;
}

export function createSidecarLogger(level: string): Logger {
  return pino({ level, base: { service: "sidecar" } }, pino.destination(2));
}

export async function startSidecar(config: SidecarConfig, log: Logger = createSidecarLogger(config.LOG_LEVEL)): Promise<Sidecar> {
  const dataDir = resolve(config.DATA_DIR, "sidecar");
  const snapshotPath = join(dataDir, "snapshot.bin");
  const persisted = loadSnapshot(snapshotPath);
  let state: GovernanceState = persisted?.state ?? EMPTY_STATE;
  let connected = false;
  let lastSyncMs = persisted?.savedAtMs ?? 0;
  if (persisted) log.info({ version: String(state.version), ageMs: Date.now() - persisted.savedAtMs }, "serving from persisted snapshot until the control plane answers");

  const budget = new BudgetLedger({
    controlPlaneSpend: (agentId, day) => {
      const s = state.spend.get(agentId);
      return s && s.day === day ? s.spentUsd : 0;
    },
  });
  const transport = createGrpcTransport({ baseUrl: config.CONTROL_PLANE_GRPC_URL, pingIntervalMs: 10_000, pingTimeoutMs: 5_000, pingIdleConnection: true });
  const sync = new SyncClient(
    transport,
    config.SIDECAR_KEY,
    state,
    snapshotPath,
    {
      onState: (s) => {
        for (const [agentId, next] of s.spend) {
          const prev = state.spend.get(agentId);
          if (prev && prev.day === next.day) budget.onControlPlaneSpend(agentId, next.day, prev.spentUsd, next.spentUsd);
          else if (!prev) budget.onControlPlaneSpend(agentId, next.day, 0, next.spentUsd);
        }
        state = s;
        lastSyncMs = Date.now();
      },
      onConnected: (c) => {
        connected = c;
        log.info({ connected: c }, "sync connection");
      },
      onError: (e) => log.warn({ err: String(e) }, "sync error"),
    },
    `sc_${randomUUID()}`,
  );
  sync.start();

  const queue: TraceQueue = new MemoryTraceQueue();
  const shipper = new TraceShipper(transport, config.SIDECAR_KEY, queue, {
    onError: (e) => log.warn({ err: String(e) }, "ingest error; unacknowledged traces will be sent again"),
    onRejected: (id, reason) => log.error({ traceId: id, reason }, "trace rejected by the control plane"),
  });
  shipper.start();

  const dispatcher = new UndiciAgent({ connections: config.UPSTREAM_CONNECTIONS, connect: { timeout: config.UPSTREAM_CONNECT_TIMEOUT_MS }, keepAliveTimeout: 30_000 });
  const handle = createProxyHandler({
    state: () => state,
    baseUrls: providerBaseUrls(config),
    dispatcher,
    limiter: new RateLimiter(),
    budget,
    emit: (t: Trace) => queue.append(t),
    storeRawPii: config.TRACE_STORE_RAW_PII,
    upstreamTimeoutMs: config.UPSTREAM_TIMEOUT_MS,
    onError: (e, where) => log.error({ err: String(e), where }, "proxy error"),
  });

  const server: Server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    const url = req.url ?? "/";
    if (url === "/healthz") {
      res.writeHead(200, { "content-type": "application/json" }).end('{"status":"ok"}');
      return;
    }
    if (url === "/readyz") {
      const ready = state.version > 0n || state.tenantId !== "";
      const body = JSON.stringify({ status: ready ? "ready" : "not_ready", connected, snapshotVersion: String(state.version), snapshotAgeMs: lastSyncMs ? Date.now() - lastSyncMs : null, queuedTraces: queue.size() });
      res.writeHead(ready ? 200 : 503, { "content-type": "application/json" }).end(body);
      return;
    }
    handle(req, res).catch((e: unknown) => {
      log.error({ err: String(e) }, "unhandled proxy error");
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" }).end('{"error":{"code":"internal_error","message":"internal error"}}');
      else res.destroy();
    });
  });
  await new Promise<void>((ok, fail) => {
    server.once("error", fail);
    server.listen(config.SIDECAR_PORT, config.SIDECAR_HOST, () => ok());
  });
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : config.SIDECAR_PORT;
  log.info({ port }, "sidecar listening");
  let stopped = false;
  return {
    url: `http://${config.SIDECAR_HOST}:${port}`,
    port,
    state: () => state,
    synced: sync.firstSync,
    queue,
    log,
    async stop() {
      if (stopped) return;
      stopped = true;
      await new Promise<void>((ok) => {
        server.close(() => ok());
        server.closeIdleConnections();
      });
      // Give the shipper a bounded moment to deliver what is queued.
      const deadline = Date.now() + 5000;
      while (queue.size() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await shipper.stop();
      await sync.stop();
      await queue.close();
      await dispatcher.close();
    },
  };
}
