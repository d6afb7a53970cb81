// A real `node bin/agentgov.js start` process (control plane + sidecar): its logs are JSON lines with
// request ids that never contain a key, a secret or prompt text; and SIGTERM under load stops it
// gracefully: readiness fails first, in-flight requests finish, no request fails, and every trace of
// an answered request is in the trace store afterwards (found by a fresh control plane on the same stores).
import test from "ava";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startControlPlane, loadControlPlaneConfig, generateApiKey } from "@agentgov/control-plane";
import { createTestDatabase, uniqueName } from "../harness/databases.js";
import { eventually } from "../harness/stack.js";
import { startFakeProviders, type FakeProviders } from "../fakes/providers/index.js";
import { AgentGov } from "../../sdk/src/index.js";

const repo = join(fileURLToPath(import.meta.url), "..", "..", "..");
const adminKey = generateApiKey("api");
const providerKey = "sk-provider-SECRET-9c1d2e3f";
const webhookSecret = "whsec_ops_test_SECRET_5b6c7d";
const promptMarker = "SECRET-PROMPT-7f3a";
const ssn = "536-22-8726";

let fakes: FakeProviders;
let child: ChildProcess;
let exited: Promise<number | null>;
let stderr = "";
let urls: { restUrl: string; grpcUrl: string; sidecarUrl: string };
let dataDir: string;
let databaseUrl: string;
const clickhouseDatabase = uniqueName("agentgov");
let agentId: string;

test.before(async () => {
  fakes = await startFakeProviders();
  databaseUrl = await createTestDatabase();
  dataDir = mkdtempSync(join(tmpdir(), "agentgov-ops-"));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    CLICKHOUSE_DATABASE: clickhouseDatabase,
    ...(process.env.CLICKHOUSE_URL ? { CLICKHOUSE_URL: process.env.CLICKHOUSE_URL } : {}),
    PORT: "0",
    GRPC_PORT: "0",
    SIDECAR_PORT: "0",
    BOOTSTRAP_API_KEY: adminKey,
    IDP_WEBHOOK_SECRET: webhookSecret,
    PROVIDER_OPENAI_URL: fakes.urls.openai,
    LOG_LEVEL: "debug",
    SHUTDOWN_DRAIN_MS: "2000",
    SHUTDOWN_TIMEOUT_MS: "15000",
  };
  child = spawn(process.execPath, [join(repo, "bin", "agentgov.js"), "start"], { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"] });
  exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  child.stderr!.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
  urls = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (c: Buffer) => {
      out += c.toString("utf8");
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve(JSON.parse(line) as typeof urls);
    });
    void exited.then((code) => reject(new Error(`agentgov start exited (${code}):\n${stderr.slice(-3000)}`)));
  });
  const created = await fetch(`${urls.restUrl}/api/agents`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json", "x-request-id": "req-ops-log-1" },
    body: JSON.stringify({ name: "ops-agent", modelProvider: "openai", modelName: "gpt-4o-mini" }),
  });
  agentId = ((await created.json()) as { data: { id: string } }).data.id;
  fakes.script({ text: "ok" });
  await eventually(async () => (await chat("warm up")).status === 200);
});
test.after.always(async () => {
  if (child && child.exitCode === null) child.kill("SIGKILL");
  await fakes?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

function chat(content: string, headers: Record<string, string> = {}) {
  return fetch(`${urls.sidecarUrl}/v1/proxy/openai/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${providerKey}`, "x-service-key": adminKey, "x-service-agent": agentId, ...headers },
    body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content }] }),
  });
}

test.serial("logs are JSON lines with request ids and never carry a key, a secret or prompt text", async (t) => {
  const r = await chat(`${promptMarker} my SSN is ${ssn}`, { "x-request-id": "req-ops-proxy-1" });
  t.is(r.status, 200);
  await fetch(`${urls.restUrl}/v1/agents`, { headers: { authorization: "Bearer svc_api_wrongwrongwrongwrongwrongwrongwrong1", "x-request-id": "req-ops-log-2" } });
  await fetch(`${urls.restUrl}/api/auth/webhook`, { method: "POST", headers: { "content-type": "application/json", "x-idp-signature": "t=1,v1=00" }, body: JSON.stringify({ type: "user.created", data: { email: "a@b.c" } }) });
  const sidecarKey = readFileSync(join(dataDir, "sidecar.key"), "utf8").trim();

  const lines = await eventually(async () => {
    const parsed = stderr
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    // Each process writes its log lines asynchronously: wait until all three requests have theirs.
    const ids = new Set(parsed.map((l) => l.requestId));
    return ["req-ops-log-1", "req-ops-log-2", "req-ops-proxy-1"].every((id) => ids.has(id)) ? parsed : undefined;
  });
  t.true(lines.every((l) => typeof l.level === "number" && typeof l.time === "string" && typeof l.service === "string" && typeof l.msg === "string"));
  t.like(lines.find((l) => l.requestId === "req-ops-log-1"), { service: "control-plane", msg: "request", route: "/api/agents", status: 201 });
  t.like(lines.find((l) => l.requestId === "req-ops-log-2"), { service: "control-plane", status: 401 });
  t.like(lines.find((l) => l.requestId === "req-ops-proxy-1"), { service: "sidecar", msg: "proxied", agentId, provider: "openai", status: "success" });
  for (const [what, secret] of Object.entries({ adminKey, sidecarKey, providerKey, webhookSecret, promptMarker, ssn, databaseUrl })) {
    t.false(stderr.includes(secret), `the logs contain the ${what}`);
  }
});

test.serial("SIGTERM under load: readiness fails, in-flight requests finish, no request fails, no trace is lost", async (t) => {
  fakes.script({ text: "slow answer", delayMs: 250 });
  const started = Date.now();
  const results: { status: number; traceId: string | null }[] = [];
  const failures: string[] = [];
  let stop = false;
  let inFlight = 0;
  let inFlightAtSignal = -1;
  const worker = async () => {
    while (!stop) {
      inFlight++;
      try {
        const r = await chat("under load");
        await r.arrayBuffer();
        results.push({ status: r.status, traceId: r.headers.get("x-service-trace-id") });
        if (r.status !== 200) failures.push(`HTTP ${r.status}`);
      } catch (e) {
        failures.push(String((e as Error).cause ?? e));
      } finally {
        inFlight--;
      }
    }
  };
  const workers = Array.from({ length: 8 }, () => worker());
  await new Promise((r) => setTimeout(r, 1500));
  stop = true;
  inFlightAtSignal = inFlight;
  child.kill("SIGTERM");
  // During the drain window the sidecar and the control plane still answer, but not ready (as soon
  // as the signal has been handled).
  const notReady = (url: string) => eventually(async () => ((await fetch(`${url}/readyz`)).status === 503 ? 503 : undefined), 1500, 20).catch(() => 200);
  const [readyz, cpReadyz] = await Promise.all([notReady(urls.sidecarUrl), notReady(urls.restUrl)]);
  await Promise.all(workers);
  const code = await exited;

  t.is(code, 0, stderr.slice(-2000));
  t.true(inFlightAtSignal > 0, "requests were in flight when SIGTERM arrived");
  t.deepEqual(failures, []);
  t.true(results.length >= 16);
  t.is(readyz, 503);
  t.is(cpReadyz, 503);
  t.regex(stderr, /SIGTERM: shutting down gracefully/);

  // A fresh control plane on the same stores finds every trace.
  const cp = await startControlPlane(
    loadControlPlaneConfig({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl, CLICKHOUSE_DATABASE: clickhouseDatabase, PORT: "0", GRPC_PORT: "0", BOOTSTRAP_API_KEY: adminKey, LOG_LEVEL: "silent", ...(process.env.CLICKHOUSE_URL ? { CLICKHOUSE_URL: process.env.CLICKHOUSE_URL } : {}) }),
  );
  try {
    const ag = new AgentGov({ baseUrl: cp.restUrl, apiKey: adminKey });
    const stored = new Set<string>();
    for await (const trace of ag.paginate("/v1/traces", { params: { query: { agent_id: agentId, since: new Date(started - 60_000).toISOString(), limit: 200 } } })) stored.add(trace.id);
    const missing = results.map((r) => r.traceId ?? "(no trace id)").filter((id) => !stored.has(id));
    t.deepEqual(missing, [], `${missing.length} of ${results.length} traces are missing`);
  } finally {
    await cp.stop();
  }
});
