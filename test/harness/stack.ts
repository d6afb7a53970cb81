// Starts a real control plane (own Postgres database, chDB or the ClickHouse server) and sidecars for a test.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startControlPlane, loadControlPlaneConfig, generateApiKey, type ControlPlane } from "@agentgov/control-plane";
import type { Sidecar } from "@agentgov/data-plane";
import { createTestDatabase, uniqueName } from "./databases.js";
import { ContractChecker } from "./contract.js";

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

export interface Stack {
  cp: ControlPlane;
  adminKey: string;
  dataDir: string;
  api: ApiClient;
  sidecar(env?: Record<string, string>): Promise<Sidecar>;
  stop(): Promise<void>;
}

export class ApiClient {
  readonly problems: string[] = [];
  constructor(
    readonly baseUrl: string,
    private readonly checker: ContractChecker,
    readonly key?: string,
  ) {}

  withKey(key: string | undefined): ApiClient {
    return new ApiClient(this.baseUrl, this.checker, key);
  }

  async call<T = Record<string, unknown>>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> {
    const h: Record<string, string> = { ...headers };
    if (this.key) h.authorization = `Bearer ${this.key}`;
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === "string" ? body : JSON.stringify(body);
      h["content-type"] ??= "application/json";
    }
    const res = await fetch(`${this.baseUrl}${path}`, { method, headers: h, body: payload });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    const pathOnly = path.split("?")[0]!;
    if (pathOnly.startsWith("/v1/") || pathOnly.startsWith("/api/")) {
      const problems = this.checker.check(method, pathOnly, res.status, parsed);
      if (problems.length > 0) throw new Error(`response breaks the OpenAPI contract:\n${problems.join("\n")}\nbody: ${text.slice(0, 500)}`);
    }
    return { status: res.status, headers: res.headers, body: parsed as T };
  }

  get<T = Record<string, unknown>>(path: string) {
    return this.call<T>("GET", path);
  }
  post<T = Record<string, unknown>>(path: string, body: unknown) {
    return this.call<T>("POST", path, body);
  }
}

export async function startStack(env: Record<string, string> = {}): Promise<Stack> {
  const dataDir = mkdtempSync(join(tmpdir(), "agentgov-stack-"));
  const databaseUrl = await createTestDatabase();
  const adminKey = generateApiKey("api");
  const config = loadControlPlaneConfig({
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    CLICKHOUSE_DATABASE: uniqueName("agentgov"),
    PORT: "0",
    GRPC_PORT: "0",
    BOOTSTRAP_API_KEY: adminKey,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
    ...(process.env.CLICKHOUSE_URL ? { CLICKHOUSE_URL: process.env.CLICKHOUSE_URL } : {}),
    ...env,
  });
  const cp = await startControlPlane(config);
  const doc = (await (await fetch(`${cp.restUrl}/openapi.json`)).json()) as ConstructorParameters<typeof ContractChecker>[0];
  const checker = new ContractChecker(doc);
  const sidecars: Sidecar[] = [];
  const api = new ApiClient(cp.restUrl, checker, adminKey);
  return {
    cp,
    adminKey,
    dataDir,
    api,
    async sidecar(scEnv = {}) {
      let key = scEnv.SIDECAR_KEY;
      if (!key) {
        const r = await api.post<{ data: { key: string } }>("/api/keys", { name: `sidecar ${sidecars.length + 1}`, scope: "ingest" });
        key = r.body.data.key;
      }
      const { startSidecar, loadSidecarConfig } = await import("@agentgov/data-plane");
      const sc = await startSidecar(
        loadSidecarConfig({
          DATA_DIR: join(dataDir, `sc${sidecars.length + 1}`),
          SIDECAR_PORT: "0",
          CONTROL_PLANE_GRPC_URL: cp.grpcUrl,
          LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
          ...scEnv,
          SIDECAR_KEY: key,
        }),
      );
      sidecars.push(sc);
      await sc.synced;
      return sc;
    },
    async stop() {
      for (const sc of sidecars) await sc.stop();
      await cp.stop();
      rmSync(dataDir, { recursive: true, force: true });
      // A ClickHouse server outlives the run: drop this stack's database (chDB's went with dataDir).
      if (config.CLICKHOUSE_URL) {
        await fetch(config.CLICKHOUSE_URL, { method: "POST", body: `DROP DATABASE IF EXISTS ${config.CLICKHOUSE_DATABASE}` }).catch(() => undefined);
      }
    },
  };
}

/** Polls until fn returns a truthy value (for eventually-consistent effects such as ingest and Sync). */
export async function eventually<T>(fn: () => Promise<T | undefined | false>, timeoutMs = 15_000, stepMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ""}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
