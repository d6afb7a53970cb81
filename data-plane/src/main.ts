// Starts a sidecar: the governance state (persisted snapshot, then Sync), the durable trace spool and
// its shipper, and the proxy server (/healthz, /readyz with sync and spool state, /metrics).
import { createServer, type Server, type ServerResponse } from "node:http";
import { chmodSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { createHash, randomUUID } from "node:crypto";
import { Agent as UndiciAgent } from "undici";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { Logger } from "pino";
import type { Trace } from "@agentgov/proto";
import { providerBaseUrls, type SidecarConfig } from "./config/env.js";
import { EMPTY_STATE, type GovernanceState } from "./state/governance-state.js";
import { loadSnapshot } from "./sync/snapshot-file.js";
import { SyncClient } from "./sync/client.js";
import type { TraceQueue } from "./trace/queue.js";
import { DurableSpool } from "./trace/spool.js";
import { GatedServerResponse, ResponseGate } from "./trace/response-gate.js";
import { TraceShipper } from "./trace/shipper.js";
import { renderMetrics, readiness } from "./sidecar-status.js";
import { RateLimiter } from "./limits/rate-limiter.js";
import { BudgetLedger } from "./limits/budget.js";
import { restoreSpendFromSpool } from "./limits/spool-spend.js";
import { createProxyHandler } from "./proxy/handler.js";
import { answerClientError } from "./proxy/client-error.js";
import { governStream } from "./policy/stream/index.js";
import { DEFAULT_REDACTED_THINKING_LIMITS, RedactedThinkingStore } from "./policy/thinking/index.js";
import { closeHttpServer, createServiceLogger, createSidecarOps, otlpConfigFromEnv, type SidecarOps } from "./observability/index.js";

export interface Sidecar {
  url: string;
  port: number;
  state(): GovernanceState;
  /** Resolves when the control plane first answered (snapshot, or deltas/heartbeat on a resume). */
  synced: Promise<void>;
  queue: TraceQueue;
  /** What /readyz answers. */
  status(): ReturnType<typeof readiness>;
  /** Metrics registry, OTLP exporter, draining state. */
  ops: SidecarOps;
  log: Logger;
  /**
   * Graceful stop: /readyz fails at once (draining), the proxy keeps serving for SHUTDOWN_DRAIN_MS,
   * then stops accepting; in-flight requests get SHUTDOWN_TIMEOUT_MS; their traces are spooled and
   * shipped (what is not acknowledged stays on disk for the next start); OTLP spans are flushed.
   */
  stop(): Promise<void>;
}

export function createSidecarLogger(level: string, logSensitive = false): Logger {
  return createServiceLogger({ service: "sidecar", level, logSensitive });
}

export async function startSidecar(config: SidecarConfig, log: Logger = createSidecarLogger(config.LOG_LEVEL, config.LOG_SENSITIVE)): Promise<Sidecar> {
  const dataDir = resolve(config.DATA_DIR, "sidecar");
  // The sidecar's state (snapshot, spool of traces with prompts, redacted thinking) is its process's alone:
  // 0700, also when an older version made it 0755 (DATA_DIR itself may be a platform-owned volume: left as is).
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  const snapshotPath = join(dataDir, "snapshot.bin");
  // A snapshot saved under another key (another tenant, or a key since revoked) is not ours to serve or resume.
  const loaded = loadSnapshot(snapshotPath);
  const persisted = loaded && loaded.state.keysByHash.has(createHash("sha256").update(config.SIDECAR_KEY).digest("hex")) ? loaded : undefined;
  if (loaded && !persisted) log.warn({ path: snapshotPath }, "persisted snapshot ignored: it does not list this sidecar's key");
  let state: GovernanceState = persisted?.state ?? EMPTY_STATE;
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
        // The ledger remembers the last figure per agent and day: every figure is reported (limits/budget.ts).
        for (const [agentId, next] of s.spend) budget.onControlPlaneSpend(agentId, next.day, 0, next.spentUsd);
        state = s;
      },
      onConnected: (c) => log.info({ connected: c }, "sync connection"),
      onError: (e) => log.warn({ err: String(e) }, "sync error"),
      // An Ack lost only makes the next write answer once the change was handed, not applied (sync/ack-sender.ts).
      onAckError: (e) => log.debug({ err: String(e) }, "sync acknowledgement not delivered"),
    },
    `sc_${randomUUID()}`,
    { persistedAtMs: persisted?.savedAtMs ?? 0 },
  );
  sync.start();

  const queue = await DurableSpool.open({
    dir: join(dataDir, "spool"),
    maxBytes: config.SPOOL_MAX_BYTES,
    resolveOn: config.SPOOL_GATE,
    syncIntervalMs: config.SPOOL_FSYNC_INTERVAL_MS,
    log,
  });
  const gate = new ResponseGate(config.SPOOL_COMMIT_WAIT_MS);
  // Spend of traces the control plane has not acknowledged yet still counts against budgets after a restart.
  await restoreSpendFromSpool(queue, budget);
  const shipper = new TraceShipper(transport, config.SIDECAR_KEY, queue, {
    onError: (e) => log.warn({ err: String(e) }, "ingest error; unacknowledged traces will be sent again"),
    onRejected: (id, reason) => log.error({ traceId: id, reason }, "trace rejected by the control plane"),
    onAcknowledged: (ids, spend) => {
      // The figures include the traces that just left the spool: persisted with the state (a restart
      // before Sync delivers them keeps that spend), then the ledger stops counting those traces locally.
      sync.raiseSpend(spend);
      budget.acknowledged(ids, spend);
    },
  });
  shipper.start();

  // Originals of signed thinking blocks a redaction changed, sealed (with the sidecar's own key mixed in:
  // rotating SIDECAR_KEY makes the blocks kept before unopenable), kept across restarts (policy/thinking).
  // A thinking directory or file that cannot be used does not stop the sidecar: memory only.
  const redactedThinking = new RedactedThinkingStore(DEFAULT_REDACTED_THINKING_LIMITS, Date.now, {
    dir: join(dataDir, "thinking"),
    secret: Buffer.from(config.SIDECAR_KEY, "utf8"),
    onError: (e) => log.error({ err: String(e) }, "redacted thinking file unusable; blocks are kept in memory only until the sidecar restarts"),
  });

  const ops = createSidecarOps({ log, otlp: otlpConfigFromEnv(config), logSensitive: config.LOG_SENSITIVE, extraMetrics: () => renderMetrics(status()) });
  const dispatcher = new UndiciAgent({ connections: config.UPSTREAM_CONNECTIONS, connect: { timeout: config.UPSTREAM_CONNECT_TIMEOUT_MS }, keepAliveTimeout: 30_000 });
  const handle = createProxyHandler({
    state: () => state,
    baseUrls: providerBaseUrls(config),
    dispatcher,
    limiter: new RateLimiter(),
    budget,
    emit: ops.traced((t: Trace, res: ServerResponse) => gate.traceEmitted(res, queue.append(t))),
    amend: (id, fields) => queue.amend(id, fields),
    answersWaitForTraces: config.SPOOL_COMMIT_WAIT_MS > 0,
    storeRawPii: config.TRACE_STORE_RAW_PII,
    upstreamTimeoutMs: config.UPSTREAM_TIMEOUT_MS,
    sseKeepAliveMs: config.SSE_KEEPALIVE_MS,
    askStreamUsage: config.OPENAI_STREAM_USAGE,
    streamGovernor: governStream,
    redactedThinking,
    onError: (e, where) => log.error({ err: String(e), where }, "proxy error"),
  });

  const status = () => readiness(state, sync.stats(), queue.stats(), shipper.stats(), gate.stats(), budget.stats());
  // ops.listener serves /metrics (prom-client registry + renderMetrics), fails /readyz while draining, meters requests.
  const server: Server = createServer({ keepAliveTimeout: 65_000, ServerResponse: GatedServerResponse }, ops.listener((req, res: GatedServerResponse) => {
    const url = req.url ?? "/";
    if (url === "/healthz") {
      res.writeHead(200, { "content-type": "application/json" }).end('{"status":"ok"}');
      return;
    }
    if (url === "/readyz") {
      const body = status();
      res.writeHead(body.status === "ready" ? 200 : 503, { "content-type": "application/json" }).end(JSON.stringify(body));
      return;
    }
    gate.run(res, () => handle(req, res)).catch((e: unknown) => {
      log.error({ err: String(e) }, "unhandled proxy error");
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" }).end('{"error":{"code":"internal_error","message":"internal error"}}');
      else res.destroy();
    });
  }));
  server.on("clientError", answerClientError);
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
    status,
    ops,
    log,
    async stop() {
      if (stopped) return;
      stopped = true;
      ops.startDraining();
      if (config.SHUTDOWN_DRAIN_MS > 0) await new Promise((r) => setTimeout(r, config.SHUTDOWN_DRAIN_MS));
      const t0 = Date.now();
      if (!(await closeHttpServer(server, config.SHUTDOWN_TIMEOUT_MS))) log.warn({ timeoutMs: config.SHUTDOWN_TIMEOUT_MS }, "in-flight proxy requests cut at the shutdown deadline");
      await ops.settled(Math.max(1000, config.SHUTDOWN_TIMEOUT_MS - (Date.now() - t0)));
      // Everything is on disk; give the shipper a bounded moment to deliver it (the rest is replayed at next start).
      await queue.flush();
      // The shipper may not have opened its stream yet for traces of the last moment: wait for it too,
      // unless a stream fails meanwhile (the control plane is away: the spool keeps them).
      const deadline = Date.now() + 5000;
      const failures = shipper.stats().streamFailures;
      while (queue.size() > 0 && shipper.stats().streamFailures === failures && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await shipper.stop();
      await sync.stop();
      await queue.close();
      redactedThinking.close();
      await dispatcher.close();
      await ops.close();
    },
  };
}
