// Runs the control plane and sidecars as real child processes (`node bin/agentgov.js control-plane |
// sidecar`), so that tests can kill -9 them and restart them on the same DATA_DIR, plus a load
// generator that records which proxied requests got a complete response and their trace ids.
//
// Each process gets fixed ports (chosen free up front) so that a restart keeps its URLs, and writes its
// stderr (JSON logs) to <logDir>/<name>.log; `logTail()` shows the end of it when a test fails.
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, mkdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { generateApiKey } from "@agentgov/control-plane";
import { ApiClient, eventually } from "./stack.js";
import { ContractChecker } from "./contract.js";
import { uniqueName } from "./databases.js";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const CLI = join(REPO, "bin", "agentgov.js");

export async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      s.close(() => ok(port));
    });
  });
}

export interface ChildHandle {
  readonly name: string;
  readonly proc: ChildProcess;
  readonly pid: number;
  /** The JSON line the command printed on stdout once listening. */
  readonly info: Record<string, string>;
  readonly exited: Promise<number | null>;
  /** SIGKILL, and wait until the process is gone. */
  kill9(): Promise<void>;
  /** SIGTERM (graceful stop), and wait for the exit code. */
  stop(timeoutMs?: number): Promise<number | null>;
  logTail(lines?: number): string;
}

/** Starts `node bin/agentgov.js <command>` with `env` (added to this process's environment). */
export async function spawnAgentgov(command: "control-plane" | "sidecar", name: string, env: Record<string, string>, logDir: string, startTimeoutMs = 60_000): Promise<ChildHandle> {
  mkdirSync(logDir, { recursive: true });
  const logPath = join(logDir, `${name}.log`);
  const logStream = createWriteStream(logPath, { flags: "a" });
  const proc = spawn(process.execPath, [CLI, command], {
    cwd: REPO,
    env: { ...process.env, LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  proc.stderr!.pipe(logStream);
  const exited = new Promise<number | null>((r) => proc.once("exit", (code) => r(code)));
  const logTail = (n = 40) => {
    try {
      return readFileSync(logPath, "utf8").split("\n").slice(-n).join("\n");
    } catch {
      return "";
    }
  };
  const info = await new Promise<Record<string, string>>((ok, fail) => {
    let buf = "";
    const timer = setTimeout(() => fail(new Error(`${name} did not start within ${startTimeoutMs} ms:\n${logTail()}`)), startTimeoutMs);
    proc.stdout!.on("data", (chunk: Buffer) => {
      buf += chunk.toString("utf8");
      const nl = buf.indexOf("\n");
      if (nl >= 0) {
        clearTimeout(timer);
        try {
          ok(JSON.parse(buf.slice(0, nl)) as Record<string, string>);
        } catch (e) {
          fail(e as Error);
        }
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      fail(new Error(`${name} exited with ${code} before it was ready:\n${logTail()}`));
    });
  });
  return {
    name,
    proc,
    pid: proc.pid!,
    info,
    exited,
    async kill9() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
      await exited;
    },
    async stop(timeoutMs = 30_000) {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      proc.kill("SIGTERM");
      const t = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
    logTail,
  };
}

export interface ControlPlaneProcess extends ChildHandle {
  restUrl: string;
  grpcUrl: string;
}

export interface ControlPlaneSpec {
  dataDir: string;
  databaseUrl: string;
  adminKey: string;
  clickhouseDatabase: string;
  restPort: number;
  grpcPort: number;
  env?: Record<string, string>;
}

/** A control-plane spec with free ports and a fresh admin key; start it (again and again) with `startControlPlaneProcess`. */
export async function controlPlaneSpec(dataDir: string, databaseUrl: string, adminKey = generateApiKey("api"), clickhouseDatabase = uniqueName("agentgov")): Promise<ControlPlaneSpec> {
  return { dataDir, databaseUrl, adminKey, clickhouseDatabase, restPort: await freePort(), grpcPort: await freePort() };
}

export async function startControlPlaneProcess(spec: ControlPlaneSpec, name = "control-plane"): Promise<ControlPlaneProcess> {
  const h = await spawnAgentgov(
    "control-plane",
    name,
    {
      DATA_DIR: spec.dataDir,
      DATABASE_URL: spec.databaseUrl,
      BOOTSTRAP_API_KEY: spec.adminKey,
      CLICKHOUSE_DATABASE: spec.clickhouseDatabase,
      PORT: String(spec.restPort),
      GRPC_PORT: String(spec.grpcPort),
      ...(process.env.CLICKHOUSE_URL ? { CLICKHOUSE_URL: process.env.CLICKHOUSE_URL } : {}),
      ...spec.env,
    },
    join(spec.dataDir, "logs"),
  );
  return Object.assign(h, { restUrl: h.info.restUrl!, grpcUrl: h.info.grpcUrl! });
}

export interface SidecarProcess extends ChildHandle {
  url: string;
}

export interface SidecarSpec {
  dataDir: string;
  grpcUrl: string;
  key: string;
  port: number;
  env?: Record<string, string>;
}

export async function sidecarSpec(dataDir: string, grpcUrl: string, key: string, env: Record<string, string> = {}): Promise<SidecarSpec> {
  return { dataDir, grpcUrl, key, port: await freePort(), env };
}

export async function startSidecarProcess(spec: SidecarSpec, name = "sidecar"): Promise<SidecarProcess> {
  const h = await spawnAgentgov(
    "sidecar",
    name,
    { DATA_DIR: spec.dataDir, CONTROL_PLANE_GRPC_URL: spec.grpcUrl, SIDECAR_KEY: spec.key, SIDECAR_PORT: String(spec.port), ...spec.env },
    join(spec.dataDir, "logs"),
  );
  return Object.assign(h, { url: h.info.sidecarUrl! });
}

/** An ApiClient for a control plane's REST URL (responses checked against its OpenAPI document). */
export async function apiClient(restUrl: string, key: string): Promise<ApiClient> {
  const doc = (await (await fetch(`${restUrl}/openapi.json`)).json()) as ConstructorParameters<typeof ContractChecker>[0];
  return new ApiClient(restUrl, new ContractChecker(doc), key);
}

export interface SidecarReadiness {
  status: string;
  connected: boolean;
  snapshotVersion: string;
  snapshotAgeMs: number | null;
  queuedTraces: number;
  sync: { snapshots: number; deltas: number; heartbeats: number; reconnects: number };
  spool: { depth: number; bytes: number; droppedTotal: number; replayedTotal: number; quarantinedBytes: number; quarantinedRanges: number; highWaterDepth: number; highWaterBytes: number; oldestAgeMs: number };
}

export async function readiness(sidecarUrl: string): Promise<SidecarReadiness> {
  return (await (await fetch(`${sidecarUrl}/readyz`)).json()) as SidecarReadiness;
}

/** Every trace id of an agent stored since `since` (all pages of GET /v1/traces). */
export async function storedTraceIds(api: ApiClient, agentId: string, since: Date): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  const until = new Date(Date.now() + 60_000).toISOString();
  for (;;) {
    const q = `/v1/traces?agent_id=${agentId}&limit=200&since=${encodeURIComponent(since.toISOString())}&until=${encodeURIComponent(until)}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    const r = await api.get<{ data: { id: string }[]; has_more: boolean; next_cursor?: string }>(q);
    if (r.status !== 200) throw new Error(`GET /v1/traces answered ${r.status}`);
    ids.push(...r.body.data.map((t) => t.id));
    if (!r.body.has_more || !r.body.next_cursor) return ids;
    cursor = r.body.next_cursor;
  }
}

export interface LoadResult {
  /** Trace ids of requests that received a complete, traced response (any status but 401/404). */
  answered: string[];
  /** Requests that got no complete response (connection refused or cut). */
  failed: number;
  statuses: Record<number, number>;
}

export interface Load {
  stop(): Promise<LoadResult>;
  /** Resolves once `n` more requests have been answered. */
  answeredAtLeast(n: number): Promise<void>;
  result(): LoadResult;
}

/**
 * Sends OpenAI chat requests through a sidecar from `concurrency` workers until stopped; a request
 * counts as answered only when its whole body was read. `prompt(i)` makes the i-th prompt.
 */
export function startLoad(opts: { url: () => string; key: string; agentId: string; concurrency: number; prompt?: (i: number) => string; pauseMs?: number }): Load {
  const res: LoadResult = { answered: [], failed: 0, statuses: {} };
  let stopped = false;
  let i = 0;
  const worker = async () => {
    while (!stopped) {
      const n = i++;
      try {
        const r = await fetch(`${opts.url()}/v1/proxy/openai/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: "Bearer sk-load", "x-service-key": opts.key, "x-service-agent": opts.agentId },
          body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: opts.prompt?.(n) ?? `load request ${n}` }] }),
          signal: AbortSignal.timeout(30_000),
        });
        await r.arrayBuffer();
        const traceId = r.headers.get("x-service-trace-id");
        res.statuses[r.status] = (res.statuses[r.status] ?? 0) + 1;
        // 401/404 are refusals before the agent is known: answered, but not traced (DESIGN.md §11).
        if (traceId && r.status !== 401 && r.status !== 404) res.answered.push(traceId);
      } catch {
        res.failed++;
        await new Promise((r) => setTimeout(r, 20));
      }
      if (opts.pauseMs) await new Promise((r) => setTimeout(r, opts.pauseMs));
    }
  };
  const workers = Array.from({ length: opts.concurrency }, worker);
  return {
    result: () => res,
    async answeredAtLeast(n: number) {
      const target = res.answered.length + n;
      await eventually(async () => res.answered.length >= target, 120_000, 20);
    },
    async stop() {
      stopped = true;
      await Promise.all(workers);
      return res;
    },
  };
}
