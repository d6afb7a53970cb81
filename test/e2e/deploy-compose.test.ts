// deploy/docker-compose.yml, checked offline: it matches the Compose schema subset it uses, its
// variables interpolate, each program's environment is a configuration that program accepts, services
// point at each other consistently (database credentials, ClickHouse, the control plane's gRPC port,
// the mock provider), and paths exist. Then the sample agent runs against a live control plane and
// sidecar (its mock provider standing in for OpenAI) and its calls are traced.
import test from "ava";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { runInNewContext } from "node:vm";
import { parse } from "yaml";
import { generateApiKey } from "@agentgov/control-plane";
import { EnvSchema, loadControlPlaneConfig } from "../../control-plane/src/config/env.js";
import { SidecarEnvSchema, loadSidecarConfig } from "../../data-plane/src/config/env.js";
import { ComposeFile } from "../harness/deploy-schemas.js";
import { startStack, eventually } from "../harness/stack.js";

const deployDir = join(fileURLToPath(import.meta.url), "..", "..", "..", "deploy");
const composePath = join(deployDir, "docker-compose.yml");
const apiKey = generateApiKey("api");

/** Compose variable interpolation: ${V}, ${V:-d}, ${V-d}, ${V:?e}, ${V?e}, $$. */
function interpolate(value: string, env: Record<string, string | undefined>): string {
  return value.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])((?:[^}])*))?\}/g, (m, name: string | undefined, op: string | undefined, arg: string | undefined) => {
    if (m === "$$") return "$";
    const v = env[name!];
    const unsetOrEmpty = v === undefined || (op?.startsWith(":") && v === "");
    if (op?.endsWith("-")) return unsetOrEmpty ? (arg ?? "") : v!;
    if (op?.endsWith("?")) {
      if (unsetOrEmpty) throw new Error(`required variable ${name}: ${arg}`);
      return v!;
    }
    return v ?? "";
  });
}

const raw = parse(readFileSync(composePath, "utf8")) as unknown;
const compose = ComposeFile.parse(raw);
const services = compose.services;
const envOf = (service: string, vars: Record<string, string | undefined> = { AGENTGOV_API_KEY: apiKey }) =>
  Object.fromEntries(Object.entries(services[service]?.environment ?? {}).map(([k, v]) => [k, interpolate(v, vars)]));

test("the compose file matches the schema and has the five services", (t) => {
  t.true(ComposeFile.safeParse(raw).success);
  t.deepEqual(Object.keys(services).sort(), ["agent", "clickhouse", "control-plane", "postgres", "sidecar"]);
  for (const [name, s] of Object.entries(services)) {
    if (s.image) t.false(s.image.endsWith(":latest") || !s.image.includes(":"), `${name}: pinned image`);
    for (const [dep, cond] of Object.entries(s.depends_on ?? {})) {
      t.truthy(services[dep], `${name} depends on unknown ${dep}`);
      if (cond.condition === "service_healthy") t.truthy(services[dep]?.healthcheck, `${name} waits for ${dep} to be healthy, which has no healthcheck`);
    }
    for (const v of s.volumes ?? []) {
      const source = v.split(":")[0]!;
      if (source.startsWith(".")) t.true(existsSync(resolve(deployDir, source)), `${name}: ${source}`);
      else t.true(source in (compose.volumes ?? {}), `${name}: volume ${source} is not declared`);
    }
    if (s.build) {
      const context = resolve(deployDir, s.build.context);
      t.true(existsSync(join(context, "package.json")), `${name}: build context is the repository root`);
      t.true(existsSync(join(context, s.build.dockerfile)), `${name}: ${s.build.dockerfile}`);
    }
  }
});

test("a required key is demanded, not defaulted", (t) => {
  t.throws(() => envOf("control-plane", {}), { message: /required variable AGENTGOV_API_KEY/ });
});

test("deploy/.env.example's key generator always makes a key BOOTSTRAP_API_KEY and SIDECAR_KEY accept", (t) => {
  const example = readFileSync(join(deployDir, ".env.example"), "utf8");
  const command = /^#\s+(node -e "(.*)")\s*$/m.exec(example);
  if (!command) return t.fail("no `node -e \"…\"` key generator in .env.example");
  const accepts = (key: string) => {
    t.is(loadControlPlaneConfig({ BOOTSTRAP_API_KEY: key }).BOOTSTRAP_API_KEY, key);
    t.is(loadSidecarConfig({ SIDECAR_KEY: key }).SIDECAR_KEY, key);
  };
  // The command as a shell runs it, once.
  accepts(execFileSync("sh", ["-c", command[1]!], { encoding: "utf8" }).trim());
  // Its script 2,000 times in this process (a random key that is valid only most of the time is not valid).
  const keys = new Set<string>();
  const refused: string[] = [];
  for (let i = 0; i < 2000; i++) {
    let key = "";
    runInNewContext(command[2]!, { require: createRequire(import.meta.url), console: { log: (s: string) => (key += s) } });
    keys.add(key);
    try {
      loadControlPlaneConfig({ BOOTSTRAP_API_KEY: key });
    } catch {
      refused.push(key);
    }
  }
  t.deepEqual(refused.slice(0, 3), [], `${refused.length} of 2,000 keys refused`);
  t.is(keys.size, 2000, "no key twice");
});

test("the control plane's environment is a valid configuration pointing at the compose Postgres and ClickHouse", (t) => {
  const env = envOf("control-plane");
  const known = new Set(Object.keys(EnvSchema.shape));
  t.deepEqual(Object.keys(env).filter((k) => !known.has(k)), []);
  const config = loadControlPlaneConfig(env);
  t.is(config.HOST, "0.0.0.0");
  t.is(config.BOOTSTRAP_API_KEY, apiKey);
  const db = new URL(config.DATABASE_URL!);
  const pg = envOf("postgres");
  t.is(db.hostname, "postgres");
  t.is(decodeURIComponent(db.username), pg.POSTGRES_USER ?? "(unset)");
  t.is(decodeURIComponent(db.password), pg.POSTGRES_PASSWORD ?? "(unset)");
  t.is(db.pathname, `/${pg.POSTGRES_DB}`);
  const ch = envOf("clickhouse");
  t.is(new URL(config.CLICKHOUSE_URL!).hostname, "clickhouse");
  t.is(config.CLICKHOUSE_USER, ch.CLICKHOUSE_USER);
  t.is(config.CLICKHOUSE_PASSWORD, ch.CLICKHOUSE_PASSWORD);
  const ports = (services["control-plane"]?.ports ?? []).map((p) => Number(p.split(":").at(-1)));
  t.deepEqual(ports.sort(), [config.PORT, config.GRPC_PORT].sort());
  t.true(services["control-plane"]!.healthcheck!.test.join(" ").includes(`127.0.0.1:${config.PORT}/readyz`));
});

test("the sidecar's environment is valid and points at the control plane's gRPC port and the agent's mock provider", (t) => {
  const env = envOf("sidecar");
  const known = new Set(Object.keys(SidecarEnvSchema.shape));
  t.deepEqual(Object.keys(env).filter((k) => !known.has(k)), []);
  const config = loadSidecarConfig(env);
  const cp = loadControlPlaneConfig(envOf("control-plane"));
  const grpc = new URL(config.CONTROL_PLANE_GRPC_URL);
  t.is(grpc.hostname, "control-plane");
  t.is(Number(grpc.port), cp.GRPC_PORT);
  t.is(config.SIDECAR_HOST, "0.0.0.0");
  t.false("DATA_DIR" in env, "the compose file leaves DATA_DIR to the image (/data)");
  t.true((services.sidecar?.volumes ?? []).some((v) => v.endsWith(":/data")), "the spool is on a volume");
  const mock = new URL(config.PROVIDER_OPENAI_URL);
  t.is(mock.hostname, "agent");
  t.is(mock.port, envOf("agent").MOCK_PORT ?? "(unset)");
  t.is(envOf("agent").SIDECAR_URL, `http://sidecar:${config.SIDECAR_PORT}`);
  t.is(envOf("agent").AGENTGOV_URL, `http://control-plane:${cp.PORT}`);
});

/**
 * A free port, held open until release(): the stack started in between listens on port 0 too, and a
 * port closed right away could be handed to it (EADDRINUSE when the sample agent's mock listens later).
 */
async function reservePort(): Promise<{ port: number; release(): Promise<void> }> {
  return new Promise((ok) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const addr = s.address();
      ok({ port: typeof addr === "object" && addr ? addr.port : 0, release: () => new Promise<void>((r) => s.close(() => r())) });
    });
  });
}

test("the sample agent registers itself and calls its model through the sidecar; the calls are traced", async (t) => {
  const reserved = await reservePort();
  const mockPort = reserved.port;
  const stack = await startStack();
  try {
    const sidecar = await stack.sidecar({ PROVIDER_OPENAI_URL: `http://127.0.0.1:${mockPort}` });
    const agentScript = join(dirname(composePath), "sample-agent", "agent.mjs");
    await reserved.release();
    const child = spawn(process.execPath, [agentScript], {
      env: { PATH: process.env.PATH, AGENTGOV_URL: stack.cp.restUrl, AGENTGOV_API_KEY: stack.adminKey, SIDECAR_URL: sidecar.url, MOCK_PORT: String(mockPort), ITERATIONS: "3", INTERVAL_MS: "10", AGENT_NAME: "compose-sample" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (out += c.toString()));
    const code = await new Promise<number | null>((r) => child.once("exit", r));
    t.is(code, 0, out);
    const lines = out
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { status?: number; traceId?: string; agentId?: string; reply?: string });
    const calls = lines.filter((l) => l.status !== undefined);
    t.is(calls.length, 3, out);
    t.true(calls.every((c) => c.status === 200 && /^trc_/.test(c.traceId ?? "") && (c.reply ?? "").startsWith("(mock)")));
    const agentId = lines.find((l) => l.agentId)?.agentId;
    const traced = await eventually(async () => {
      const r = await stack.api.get<{ data: { id: string }[] }>(`/v1/traces?agent_id=${agentId}`);
      return r.body.data.length >= 3 ? r.body.data : undefined;
    });
    t.deepEqual(traced.map((x) => x.id).sort(), calls.map((c) => c.traceId!).sort());
  } finally {
    await reserved.release();
    await stack.stop();
  }
});
