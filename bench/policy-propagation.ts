// Benchmark: policy change → enforcement delay with many connected sidecars (issue 3; target p99 250 ms).
// Starts a control plane in its own process (embedded Postgres unless DATABASE_URL/TEST_DATABASE_URL is
// set; chDB) and N real sidecars in this process, connected over gRPC Sync, then makes policy changes through the REST API (create a blocking
// policy, disable it, re-enable it, delete it) and records, per change and per sidecar, when the change
// is in force at that sidecar: its governance state (what the next request is judged by) shows it.
// After every change each sidecar is sent one request that the change decides, and the answer is checked
// (blocked 403 policy_violation, or served 200), so "in force" is verified, not assumed.
//
//   node --import tsx bench/policy-propagation.ts [--sidecars 50] [--cycles 25] [--profile-control-plane DIR]
// Writes bench/results/policy-propagation.json and .md.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, platform, release, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { loadSidecarConfig, startSidecar, type Sidecar } from "@agentgov/data-plane";
import { startEmbeddedPostgres } from "../control-plane/src/stores/postgres/embedded.js";
import { startStack } from "../test/harness/stack.js";
import { startFakeProviders } from "../test/fakes/providers/index.js";

const { values: args } = parseArgs({
  options: {
    sidecars: { type: "string", default: "50" },
    cycles: { type: "string", default: "25" },
    "serve-control-plane": { type: "boolean", default: false },
    "profile-control-plane": { type: "string" },
  },
});
const SIDECARS = Number(args.sidecars);
const CYCLES = Number(args.cycles);
const TARGET_P99_MS = 250;
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? "300");
const TIMEOUT_MS = 15_000;

type GovernanceState = ReturnType<Sidecar["state"]>;
type Kind = "create" | "disable" | "enable" | "delete";

interface Phase {
  name: "quiet" | "busy";
  settle: boolean;
  samples: Sample[];
  writeMs: number[];
}

type Summary = ReturnType<typeof summary>;

interface Sample {
  kind: Kind;
  /** From sending the REST write to the change being in force at this sidecar. */
  fromRequestMs: number;
  /** From the REST answer (the commit is acknowledged) to the change being in force; negative when the delta won. */
  fromAnswerMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function percentile(sortedValues: number[], p: number): number {
  if (sortedValues.length === 0) return 0;
  const idx = Math.min(sortedValues.length - 1, Math.max(0, Math.ceil((p / 100) * sortedValues.length) - 1));
  return sortedValues[idx]!;
}

function summary(values: number[]) {
  const s = [...values].sort((a, b) => a - b);
  const r = (x: number) => Math.round(x * 10) / 10;
  return { n: s.length, p50: r(percentile(s, 50)), p90: r(percentile(s, 90)), p99: r(percentile(s, 99)), max: r(s[s.length - 1] ?? 0), mean: r(s.reduce((a, b) => a + b, 0) / Math.max(1, s.length)) };
}

/** Child process mode: runs the control plane alone and prints its URLs; stops when stdin closes. */
async function serveControlPlane(): Promise<void> {
  const stack = await startStack();
  process.stdout.write(`READY ${JSON.stringify({ restUrl: stack.cp.restUrl, grpcUrl: stack.cp.grpcUrl, adminKey: stack.adminKey })}\n`);
  process.stdin.resume();
  await new Promise<void>((ok) => process.stdin.once("end", () => ok()));
  await stack.stop();
}

interface Rest {
  call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
}

function restClient(baseUrl: string, key: string): Rest {
  return {
    async call<T>(method: string, path: string, body?: unknown) {
      const res = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      });
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
    },
  };
}

async function startControlPlaneProcess(): Promise<{ restUrl: string; grpcUrl: string; adminKey: string; stop(): Promise<void> }> {
  const profile = args["profile-control-plane"] ? ["--cpu-prof", `--cpu-prof-dir=${args["profile-control-plane"]}`] : [];
  const child = spawn(process.execPath, [...profile, "--import", "tsx", fileURLToPath(import.meta.url), "--serve-control-plane"], {
    stdio: ["pipe", "pipe", "inherit"],
    env: process.env,
  });
  const info = await new Promise<{ restUrl: string; grpcUrl: string; adminKey: string }>((ok, fail) => {
    let buf = "";
    child.stdout.on("data", (d: Buffer) => {
      buf += d.toString("utf8");
      const line = buf.split("\n").find((l) => l.startsWith("READY "));
      if (line) ok(JSON.parse(line.slice(6)) as { restUrl: string; grpcUrl: string; adminKey: string });
    });
    child.once("exit", (code) => fail(new Error(`control plane exited with ${code}`)));
  });
  return {
    ...info,
    async stop() {
      const exited = new Promise((ok) => child.once("exit", ok));
      child.stdin.end();
      await exited;
    },
  };
}

async function main(): Promise<void> {
  let stopPg: (() => Promise<void>) | undefined;
  let pgDir: string | undefined;
  if (!process.env.TEST_DATABASE_URL) {
    if (process.env.DATABASE_URL) process.env.TEST_DATABASE_URL = process.env.DATABASE_URL;
    else {
      pgDir = mkdtempSync(join(tmpdir(), "agentgov-bench-pg-"));
      const pg = await startEmbeddedPostgres(pgDir);
      process.env.TEST_DATABASE_URL = pg.url;
      stopPg = pg.stop;
    }
  }
  const loadBefore = loadavg();
  const fakes = await startFakeProviders();
  const dataDir = mkdtempSync(join(tmpdir(), "agentgov-bench-sidecars-"));
  let cp: Awaited<ReturnType<typeof startControlPlaneProcess>> | undefined;
  const sidecars: Sidecar[] = [];
  try {
    cp = await startControlPlaneProcess();
    const rest = restClient(cp.restUrl, cp.adminKey);
    const api = {
      post: <T>(path: string, body: unknown) => rest.call<T>("POST", path, body),
      call: <T>(method: string, path: string, body?: unknown) => rest.call<T>(method, path, body),
    };
    const agent = await api.post<{ data: { id: string } }>("/api/agents", { name: "bench-agent", modelProvider: "openai", modelName: "gpt-4o-mini" });
    const agentId = agent.body.data.id;
    const key = (await api.post<{ data: { key: string } }>("/api/keys", { name: "bench sidecars", scope: "ingest" })).body.data.key;
    const t0 = performance.now();
    for (let i = 0; i < SIDECARS; i++) {
      const sc = await startSidecar(
        loadSidecarConfig({ DATA_DIR: join(dataDir, `sc${i}`), SIDECAR_PORT: "0", CONTROL_PLANE_GRPC_URL: cp.grpcUrl, LOG_LEVEL: "silent", PROVIDER_OPENAI_URL: fakes.urls.openai, SIDECAR_KEY: key }),
      );
      sidecars.push(sc);
      await sc.synced;
    }
    process.stderr.write(`${SIDECARS} sidecars connected in ${Math.round(performance.now() - t0)} ms\n`);

    const ask = async (sc: Sidecar, content: string): Promise<number> => {
      const res = await fetch(`${sc.url}/v1/proxy/openai/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer sk-bench", "x-service-key": key, "x-service-agent": agentId },
        body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content }] }),
      });
      await res.arrayBuffer();
      return res.status;
    };

    let wrongAnswers = 0;
    let checkedAnswers = 0;
    const phases: Phase[] = [
      { name: "quiet", settle: true, samples: [], writeMs: [] },
      { name: "busy", settle: false, samples: [], writeMs: [] },
    ];

    /** Makes one change and records when each sidecar has it in force. */
    const measure = async (phase: Phase, kind: Kind, write: () => Promise<number>, inForce: (s: GovernanceState) => boolean): Promise<void> => {
      const arrivals = new Array<number | undefined>(sidecars.length);
      const start = performance.now();
      let answeredAt = 0;
      const written = write().then((status) => {
        answeredAt = performance.now();
        if (status >= 300) throw new Error(`${kind}: REST answered ${status}`);
      });
      let left = sidecars.length;
      while (left > 0) {
        for (let i = 0; i < sidecars.length; i++) {
          if (arrivals[i] === undefined && inForce(sidecars[i]!.state())) {
            arrivals[i] = performance.now();
            left--;
          }
        }
        if (left === 0) break;
        if (performance.now() - start > TIMEOUT_MS) throw new Error(`${kind}: ${left} sidecars did not get the change within ${TIMEOUT_MS} ms`);
        await sleep(1);
      }
      await written;
      phase.writeMs.push(answeredAt - start);
      for (const at of arrivals) phase.samples.push({ kind, fromRequestMs: at! - start, fromAnswerMs: at! - answeredAt });
    };

    /** One request per sidecar that the change decides; in the quiet phase, then waits until their traces are shipped. */
    const verify = async (phase: Phase, prompt: string, want: number): Promise<void> => {
      const statuses = await Promise.all(sidecars.map((sc) => ask(sc, prompt)));
      checkedAnswers += statuses.length;
      wrongAnswers += statuses.filter((s) => s !== want).length;
      if (!phase.settle) return;
      const deadline = performance.now() + TIMEOUT_MS;
      while (sidecars.some((sc) => sc.queue.size() > 0) && performance.now() < deadline) await sleep(10);
      await sleep(SETTLE_MS);
    };

    let round = 0;
    for (const phase of phases) {
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        const word = `forbidden-word-${++round}`;
        let policyId = "";
        await measure(
          phase,
          "create",
          async () => {
            const r = await api.post<{ id: string }>("/v1/policies", { name: `bench ${round}`, action: "block", priority: 1, conditions: { keywords: [word] } });
            policyId = r.body.id;
            return r.status;
          },
          (s) => policyId !== "" && s.policies.get(policyId)?.status === "active",
        );
        await verify(phase, `please say ${word}`, 403);
        await measure(phase, "disable", async () => (await api.call("PATCH", `/v1/policies/${policyId}`, { status: "disabled" })).status, (s) => s.policies.get(policyId)?.status === "disabled");
        await verify(phase, `please say ${word}`, 200);
        await measure(phase, "enable", async () => (await api.call("PATCH", `/v1/policies/${policyId}`, { status: "active" })).status, (s) => s.policies.get(policyId)?.status === "active");
        await verify(phase, `please say ${word}`, 403);
        await measure(phase, "delete", async () => (await api.call("DELETE", `/v1/policies/${policyId}`)).status, (s) => !s.policies.has(policyId));
        await verify(phase, `please say ${word}`, 200);
        process.stderr.write(`${phase.name} cycle ${cycle + 1}/${CYCLES}\n`);
      }
    }

    const kinds: Kind[] = ["create", "disable", "enable", "delete"];
    const report = (phase: Phase) => {
      const all = summary(phase.samples.map((x) => x.fromRequestMs));
      return {
        fromRequestMs: all,
        fromAnswerMs: summary(phase.samples.map((x) => x.fromAnswerMs)),
        byKind: Object.fromEntries(kinds.map((k) => [k, summary(phase.samples.filter((x) => x.kind === k).map((x) => x.fromRequestMs))])) as Record<Kind, Summary>,
        restWriteMs: summary(phase.writeMs),
      };
    };
    const quiet = report(phases[0]!);
    const busy = report(phases[1]!);
    const result = {
      benchmark: "policy-propagation",
      date: new Date().toISOString(),
      machine: { cpu: cpus()[0]?.model ?? "unknown", cores: cpus().length, memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10, node: process.version, platform: `${platform()} ${release()}` },
      setup: {
        sidecars: SIDECARS,
        changesPerPhase: CYCLES * kinds.length,
        postgres: pgDir ? "embedded" : "DATABASE_URL",
        clickhouse: process.env.CLICKHOUSE_URL ? "server" : "chDB",
        process: "the control plane runs in its own Node.js process; the sidecars and the measuring loop share another; Postgres is a third",
        loadAverageBefore: loadBefore.map((x) => Math.round(x * 100) / 100),
        loadAverageAfter: loadavg().map((x) => Math.round(x * 100) / 100),
      },
      targetP99Ms: TARGET_P99_MS,
      quiet,
      busy,
      enforcementChecks: { requests: checkedAnswers, wrong: wrongAnswers },
      meetsTarget: quiet.fromRequestMs.p99 <= TARGET_P99_MS && wrongAnswers === 0,
    };
    const dir = join(process.cwd(), "bench", "results");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "policy-propagation.json"), `${JSON.stringify(result, null, 2)}\n`);
    const row = (name: string, x: Summary) => `| ${name} | ${x.n} | ${x.p50} | ${x.p90} | ${x.p99} | ${x.max} |`;
    const table = (title: string, r: ReturnType<typeof report>) => [
      `| ${title} | samples | p50 ms | p90 ms | p99 ms | max ms |`,
      "|---|---|---|---|---|---|",
      row("all changes, from the REST write request", r.fromRequestMs),
      ...kinds.map((k) => row(`${k}, from the REST write request`, r.byKind[k])),
      row("all changes, from the REST answer (commit acknowledged)", r.fromAnswerMs),
      row("REST write latency", r.restWriteMs),
    ];
    const md = [
      "# Policy propagation benchmark",
      "",
      `Date: ${result.date}`,
      `Machine: ${result.machine.cpu}, ${result.machine.cores} cores, ${result.machine.memoryGiB} GiB, Node ${result.machine.node}, ${result.machine.platform};`,
      `load average (1, 5, 15 min) ${result.setup.loadAverageBefore.join(", ")} before the run and ${result.setup.loadAverageAfter.join(", ")} after`,
      "(the machine is shared: latencies stretch with the load).",
      "",
      `Setup: ${SIDECARS} real sidecars connected to one control plane over gRPC Sync; Postgres ${result.setup.postgres}, ClickHouse ${result.setup.clickhouse};`,
      `${result.setup.process}. Each phase makes ${result.setup.changesPerPhase} policy changes through the REST API (${CYCLES} cycles of`,
      "create a blocking policy → disable → enable → delete). A sample is one change at one sidecar: the time until that sidecar's",
      "governance state, which its next request is judged by, has the change. After every change each sidecar gets one request that",
      "the change decides, and its answer is checked.",
      "",
      "- **quiet**: before the next change, the checking requests' traces are shipped and the system idles",
      `  ${SETTLE_MS} ms — the propagation delay itself.`,
      `- **busy**: the next change follows at once, while the control plane ingests the ${SIDECARS} checking traces, recomputes`,
      "  spend and pushes the spend deltas to every sidecar.",
      "",
      `Target: p99 ≤ ${TARGET_P99_MS} ms from the change request. Quiet: **p99 ${quiet.fromRequestMs.p99} ms** (${quiet.fromRequestMs.p99 <= TARGET_P99_MS ? "meets" : "misses"} the target);`,
      `busy: **p99 ${busy.fromRequestMs.p99} ms** (${busy.fromRequestMs.p99 <= TARGET_P99_MS ? "meets" : "misses"} the target).`,
      "",
      ...table("quiet", quiet),
      "",
      ...table("busy", busy),
      "",
      `Enforcement checks: ${checkedAnswers} requests, ${wrongAnswers} answered otherwise than the change decides.`,
      "",
      "Run: `node --import tsx bench/policy-propagation.ts [--sidecars 50] [--cycles 25]` (`BENCH_SETTLE_MS` sets the quiet pause, default 300).",
      "",
    ].join("\n");
    writeFileSync(join(dir, "policy-propagation.md"), md);
    process.stdout.write(md);
  } finally {
    for (const sc of sidecars) await sc.stop();
    await cp?.stop();
    await fakes.close();
    rmSync(dataDir, { recursive: true, force: true });
    await stopPg?.();
    if (pgDir) rmSync(pgDir, { recursive: true, force: true });
  }
}

if (args["serve-control-plane"]) await serveControlPlane();
else await main();
