// Revocation delay benchmark (issue 9, DESIGN.md §3): how long after `DELETE /api/keys/:id` answers
// does a sidecar refuse the key (401)? 50 Sync streams are connected to one control plane: `--real` of
// them are real sidecars (the proxy, governance state, snapshot file), the others raw Sync clients that
// decode every message as a sidecar does, so the control plane serves 50 streams while this one process
// does not also carry 50 sidecars' work (in production each sidecar has its own pod). Each trial
// creates an api key, waits until every stream knows it, deletes it and measures from the moment the
// DELETE response has been read:
//   - at every real sidecar, when its governance state dropped the key (the proxy answers 401 from that
//     state, so from then on its answer is 401; checked every 1 ms);
//   - at one probe sidecar per trial (round robin), when a real proxy request first gets 401 (requests
//     2 ms apart);
//   - at every raw Sync stream, when the delta removing the key arrived.
// A second scenario does the same for `user.deactivated` through the identity webhook (the user's keys
// stop everywhere). The control plane runs as its own process (`agentgov control-plane`: embedded
// Postgres and chDB under a temporary DATA_DIR, or DATABASE_URL when set). Target: p99 < 250 ms.
//
//   node --import tsx bench/revocation.ts [--streams 50] [--real 5] [--trials 100] [--deactivations 30]
// `--real 50` puts 50 real sidecars in this process (every stream a sidecar). Writes
// bench/results/revocation.json and .md; a run replaces only the entry of its own streams/real mix.

import { spawn, type ChildProcess } from "node:child_process";
import { createHash, createHmac } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createInterface } from "node:readline";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { SyncService, WatchRequestSchema, create } from "@agentgov/proto";
import { generateApiKey } from "../control-plane/src/domain/api-keys.js";
import { loadSidecarConfig, startSidecar, type Sidecar } from "../data-plane/src/index.js";

const { values: args } = parseArgs({
  options: {
    streams: { type: "string", default: "50" },
    real: { type: "string", default: "5" },
    trials: { type: "string", default: "100" },
    deactivations: { type: "string", default: "30" },
  },
});
const STREAMS = Number(args.streams);
const REAL = Math.min(STREAMS, Math.max(1, Number(args.real)));
const TRIALS = Number(args.trials);
const DEACTIVATIONS = Number(args.deactivations);
const TARGET_P99_MS = 250;
const SECRET = "whsec_bench_revocation";
const REPO = fileURLToPath(new URL("../", import.meta.url));
const RESULTS_JSON = join(REPO, "bench/results/revocation.json");
const RESULTS_MD = join(REPO, "bench/results/revocation.md");

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (x: number) => Math.round(x * 100) / 100;

function machine(): Record<string, string | number> {
  return {
    cpu: os.cpus()[0]?.model ?? "unknown",
    cores: os.cpus().length,
    memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

type Summary = { samples: number; p50: number; p90: number; p99: number; max: number; mean: number };
function summary(samples: number[]): Summary {
  if (samples.some((x) => !Number.isFinite(x))) throw new Error("a sample is not a finite number");
  const s = [...samples].sort((a, b) => a - b);
  const r = (x: number) => Math.round(x * 10) / 10;
  return { samples: s.length, p50: r(percentile(s, 50)), p90: r(percentile(s, 90)), p99: r(percentile(s, 99)), max: r(s[s.length - 1] ?? NaN), mean: r(s.reduce((a, b) => a + b, 0) / (s.length || 1)) };
}

/** CPU time (user + system, ms) a process has used so far, from /proc (Linux); undefined elsewhere. */
function procCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, USER_HZ = 100
  } catch {
    return undefined;
  }
}

const selfCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function startControlPlane(dataDir: string, adminKey: string): Promise<{ child: ChildProcess; restUrl: string; grpcUrl: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: "0",
    GRPC_PORT: "0",
    BOOTSTRAP_API_KEY: adminKey,
    IDP_WEBHOOK_SECRET: SECRET,
    API_RATE_LIMIT_PER_MINUTE: "100000",
    LOG_LEVEL: "warn",
  };
  const child = spawn(process.execPath, ["bin/agentgov.js", "control-plane"], { cwd: REPO, env, stdio: ["ignore", "pipe", "inherit"] });
  const line = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`control plane exited with ${code}`)));
  });
  return { child, ...(JSON.parse(line) as { restUrl: string; grpcUrl: string }) };
}

async function rest<T>(base: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const r = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, body: (text ? JSON.parse(text) : undefined) as T };
}

async function webhook(base: string, event: Record<string, unknown>): Promise<number> {
  const body = JSON.stringify(event);
  const t = Math.floor(Date.now() / 1000);
  const sig = createHmac("sha256", SECRET).update(`${t}.${body}`).digest("hex");
  const r = await fetch(`${base}/api/auth/webhook`, { method: "POST", headers: { "content-type": "application/json", "x-idp-signature": `t=${t},v1=${sig}` }, body });
  await r.arrayBuffer();
  return r.status;
}

async function proxyStatus(sc: Sidecar, key: string): Promise<number> {
  const r = await fetch(`${sc.url}/v1/proxy/openai/chat/completions`, {
    method: "POST",
    headers: { "x-service-key": key, "x-service-agent": "agt_00000000000000000000000000", authorization: "Bearer sk-unused", "content-type": "application/json" },
    body: "{}",
  });
  await r.arrayBuffer();
  return r.status;
}

/** A Sync stream that decodes every message and tracks the key hashes it holds, as a sidecar does. */
class RawSyncStream {
  readonly hashes = new Set<string>();
  /** key hash → when the delta removing it arrived */
  readonly removedAt = new Map<string, number>();
  private readonly ids = new Map<string, string>();
  private readonly abort = new AbortController();
  readonly ready: Promise<void>;
  private done: Promise<void> | undefined;

  constructor(grpcUrl: string, key: string) {
    let ready!: () => void;
    this.ready = new Promise((r) => (ready = r));
    const client = createClient(SyncService, createGrpcTransport({ baseUrl: grpcUrl }));
    this.done = (async () => {
      const stream = client.watch(create(WatchRequestSchema, { resumeFromVersion: 0n, sidecarId: `raw_${Math.random()}` }), {
        signal: this.abort.signal,
        headers: { authorization: `Bearer ${key}` },
      });
      try {
        for await (const msg of stream) {
          if (msg.kind.case === "snapshot") {
            for (const k of msg.kind.value.keys) this.add(k.id, k.keyHash);
            ready();
          } else if (msg.kind.case === "delta") {
            for (const k of msg.kind.value.upsertKeys) this.add(k.id, k.keyHash);
            const now = performance.now();
            for (const id of msg.kind.value.removedKeyIds) {
              const h = this.ids.get(id);
              if (h && this.hashes.delete(h)) this.removedAt.set(h, now);
            }
          }
        }
      } catch (e) {
        if (!this.abort.signal.aborted) throw e;
      }
    })();
  }

  private add(id: string, hash: string): void {
    this.ids.set(id, hash);
    this.hashes.add(hash);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.done?.catch(() => undefined);
  }
}

async function waitAll(sidecars: Sidecar[], raws: RawSyncStream[], hash: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!sidecars.every((s) => s.state().keysByHash.has(hash)) || !raws.every((r) => r.hashes.has(hash))) {
    if (Date.now() > deadline) throw new Error(`streams did not learn a key within ${timeoutMs} ms`);
    await sleep(2);
  }
}

/** Resolves with the time (performance.now()) each sidecar's state, and each raw stream, dropped `hash`. */
function watchDrops(sidecars: Sidecar[], raws: RawSyncStream[], hash: string): Promise<{ sidecars: number[]; raws: number[] }> {
  return new Promise((resolve, reject) => {
    const out: (number | undefined)[] = sidecars.map(() => undefined);
    const started = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      sidecars.forEach((s, i) => {
        if (out[i] === undefined && !s.state().keysByHash.has(hash)) out[i] = now;
      });
      if (out.every((x) => x !== undefined) && raws.every((r) => r.removedAt.has(hash))) {
        clearInterval(timer);
        resolve({ sidecars: out.map((x) => x!), raws: raws.map((r) => r.removedAt.get(hash)!) });
      } else if (now - started > 10_000) {
        clearInterval(timer);
        reject(new Error("a stream kept a revoked key for 10 s"));
      }
    }, 1);
  });
}

/**
 * Proxy requests until the first 401 (ms after `t0`), 2 ms apart: the probe shares the event loop with
 * the sidecars, and back-to-back requests would slow the very propagation being measured.
 */
async function firstHttp401(sc: Sidecar, key: string, t0: number): Promise<number> {
  for (;;) {
    const status = await proxyStatus(sc, key);
    if (status === 401) return performance.now() - t0;
    if (performance.now() - t0 > 10_000) throw new Error("no 401 within 10 s");
    await sleep(2);
  }
}

interface Scenario {
  firstHttp401AtProbeSidecarMs: Summary;
  keyDroppedAtRealSidecarsMs: Summary;
  deltaAtRawStreamsMs: Summary;
}

async function main(): Promise<void> {
  const loadBefore = os.loadavg().map(round);
  const dataDir = mkdtempSync(join(os.tmpdir(), "agentgov-bench-revocation-"));
  chmodSync(dataDir, 0o755); // embedded Postgres under root runs as the postgres user and must reach its directory
  const adminKey = generateApiKey("api");
  const sidecars: Sidecar[] = [];
  const raws: RawSyncStream[] = [];
  let cp: Awaited<ReturnType<typeof startControlPlane>> | undefined;
  try {
    process.stderr.write(`starting the control plane (${process.env.DATABASE_URL ? "DATABASE_URL" : "embedded Postgres"}) …\n`);
    cp = await startControlPlane(join(dataDir, "cp"), adminKey);
    const base = cp.restUrl;
    process.stderr.write(`connecting ${STREAMS} Sync streams (${REAL} real sidecars) …\n`);
    for (let i = 0; i < STREAMS; i++) {
      const k = await rest<{ data: { key: string } }>(base, adminKey, "POST", "/api/keys", { name: `bench stream ${i}`, scope: "ingest" });
      if (i < REAL) {
        sidecars.push(
          await startSidecar(loadSidecarConfig({ DATA_DIR: join(dataDir, `sc${i}`), SIDECAR_PORT: "0", CONTROL_PLANE_GRPC_URL: cp.grpcUrl, SIDECAR_KEY: k.body.data.key, LOG_LEVEL: "silent" })),
        );
      } else {
        raws.push(new RawSyncStream(cp.grpcUrl, k.body.data.key));
      }
    }
    await Promise.all([...sidecars.map((s) => s.synced), ...raws.map((r) => r.ready)]);

    const run = async (trials: number, revoke: (trial: number) => Promise<{ key: string; go: () => Promise<void> }>) => {
      const probeDelays: number[] = [];
      const sidecarDelays: number[] = [];
      const rawDelays: number[] = [];
      const requestMs: number[] = [];
      const cpCpu: number[] = [];
      const localCpu: number[] = [];
      let early = 0;
      for (let trial = 0; trial < trials; trial++) {
        const { key, go } = await revoke(trial);
        const hash = sha256(key);
        await waitAll(sidecars, raws, hash);
        const probe = sidecars[trial % sidecars.length]!;
        if ((await proxyStatus(probe, key)) !== 404) throw new Error("the probe sidecar does not accept the new key");
        const drops = watchDrops(sidecars, raws, hash);
        const cp0 = procCpuMs(cp!.child.pid);
        const self0 = selfCpuMs();
        const sent = performance.now();
        await go();
        const t0 = performance.now();
        requestMs.push(t0 - sent);
        probeDelays.push(await firstHttp401(probe, key, t0));
        const d = await drops;
        for (const x of [...d.sidecars, ...d.raws]) if (x < t0) early++;
        sidecarDelays.push(...d.sidecars.map((x) => Math.max(0, x - t0)));
        rawDelays.push(...d.raws.map((x) => Math.max(0, x - t0)));
        const cp1 = procCpuMs(cp!.child.pid);
        if (cp0 !== undefined && cp1 !== undefined) cpCpu.push(cp1 - cp0);
        localCpu.push(selfCpuMs() - self0);
      }
      const scenario: Scenario = {
        firstHttp401AtProbeSidecarMs: summary(probeDelays),
        keyDroppedAtRealSidecarsMs: summary(sidecarDelays),
        deltaAtRawStreamsMs: summary(rawDelays),
      };
      return { ...scenario, requestMs: summary(requestMs), refusedBeforeResponseRead: early, cpuMs: { controlPlane: summary(cpCpu), benchProcess: summary(localCpu) } };
    };

    process.stderr.write(`${TRIALS} key deletions …\n`);
    const keyDelete = await run(TRIALS, async (trial) => {
      const created = await rest<{ data: { id: string; key: string } }>(base, adminKey, "POST", "/api/keys", { name: `bench ${trial}`, scope: "api" });
      const { id, key } = created.body.data;
      return {
        key,
        go: async () => {
          const del = await rest(base, adminKey, "DELETE", `/api/keys/${id}`);
          if (del.status !== 200) throw new Error(`DELETE: ${del.status}`);
        },
      };
    });

    process.stderr.write(`${DEACTIVATIONS} user deactivations …\n`);
    const userDeactivated = await run(DEACTIVATIONS, async (trial) => {
      const idp = `idp_bench_${trial}`;
      if ((await webhook(base, { type: "user.created", createdAt: new Date().toISOString(), data: { userId: idp, orgId: "org_default", email: `${idp}@example.com` } })) !== 200) throw new Error("user.created failed");
      const users = await rest<{ data: { id: string; idpUserId: string }[] }>(base, adminKey, "GET", "/api/users?limit=5");
      const userId = users.body.data.find((u) => u.idpUserId === idp)!.id;
      const k = await rest<{ data: { key: string } }>(base, adminKey, "POST", "/api/keys", { name: `bench user ${trial}`, scope: "ingest", userId });
      return {
        key: k.body.data.key,
        go: async () => {
          const status = await webhook(base, { type: "user.deactivated", createdAt: new Date().toISOString(), data: { userId: idp, orgId: "org_default" } });
          if (status !== 200) throw new Error(`user.deactivated: ${status}`);
        },
      };
    });

    const loadAfter = os.loadavg().map(round);
    const worstP99 = Math.max(...[keyDelete.firstHttp401AtProbeSidecarMs, keyDelete.keyDroppedAtRealSidecarsMs, keyDelete.deltaAtRawStreamsMs].filter((x) => x.samples > 0).map((x) => x.p99));
    const entryName = `${STREAMS} streams, ${REAL} real sidecars`;
    const entry = {
      date: new Date().toISOString(),
      machine: machine(),
      setup: {
        syncStreams: STREAMS,
        realSidecars: REAL,
        rawSyncStreams: STREAMS - REAL,
        trials: TRIALS,
        deactivations: DEACTIVATIONS,
        controlPlane: "separate process (agentgov control-plane), embedded Postgres, chDB",
        streamsIn: "the benchmark process (one event loop)",
        loadAverageBefore: loadBefore,
        loadAverageAfter: loadAfter,
      },
      targetP99Ms: TARGET_P99_MS,
      pass: worstP99 < TARGET_P99_MS,
      worstP99Ms: worstP99,
      keyDelete,
      userDeactivated,
    };
    mkdirSync(join(REPO, "bench/results"), { recursive: true });
    let all: { benchmark: string; runs: Record<string, typeof entry> } = { benchmark: "revocation", runs: {} };
    if (existsSync(RESULTS_JSON)) {
      try {
        const prev = JSON.parse(readFileSync(RESULTS_JSON, "utf8")) as typeof all;
        if (prev.runs) all = prev;
      } catch {
        /* an older format: start over */
      }
    }
    all.runs[entryName] = entry;
    writeFileSync(RESULTS_JSON, `${JSON.stringify(all, null, 2)}\n`);
    writeFileSync(RESULTS_MD, markdown(all.runs));
    process.stdout.write(`${JSON.stringify({ entry: entryName, pass: entry.pass, worstP99Ms: worstP99, keyDelete: keyDelete.firstHttp401AtProbeSidecarMs, dropped: keyDelete.keyDroppedAtRealSidecarsMs, raw: keyDelete.deltaAtRawStreamsMs })}\n`);
  } finally {
    for (const s of sidecars) await s.stop().catch(() => undefined);
    for (const r of raws) await r.stop();
    if (cp) {
      cp.child.kill("SIGTERM");
      await new Promise((r) => cp!.child.once("exit", r));
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
}

type Run = {
  date: string;
  machine: Record<string, string | number>;
  setup: { syncStreams: number; realSidecars: number; rawSyncStreams: number; trials: number; deactivations: number; loadAverageBefore: number[]; loadAverageAfter: number[] };
  pass: boolean;
  worstP99Ms: number;
  keyDelete: Scenario & { requestMs: Summary; refusedBeforeResponseRead: number; cpuMs: { controlPlane: Summary; benchProcess: Summary } };
  userDeactivated: Scenario & { requestMs: Summary };
};

function markdown(runs: Record<string, Run>): string {
  const row = (name: string, s: Summary) => (s.samples > 0 ? `| ${name} | ${s.p50} | ${s.p90} | ${s.p99} | ${s.max} | ${s.samples} |` : undefined);
  const out: (string | undefined)[] = [
    "# Revocation delay benchmark",
    "",
    "How long after `DELETE /api/keys/:id` (or the identity webhook's 200 for `user.deactivated`) has been read by the client",
    "do sidecars refuse the key? Sync streams connect to one control plane (its own process; embedded Postgres, chDB); some",
    "are real sidecars (proxy, governance state, snapshot file), the others raw Sync clients that decode every message.",
    "A real sidecar's state is checked every 1 ms (its proxy answers from that state); a probe sidecar per trial gets a proxy",
    "request every 2 ms until it answers 401. All streams share the benchmark's one event loop, and the machine is shared",
    "with other work (load averages below), so the numbers are pessimistic against one sidecar per pod.",
    "",
    `Target: p99 < ${TARGET_P99_MS} ms.`,
    "",
  ];
  for (const [name, r] of Object.entries(runs)) {
    const m = r.machine;
    out.push(
      `## ${name}`,
      "",
      `Date: ${r.date}  `,
      `Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.platform}, Node ${m.node}  `,
      `Load average (1, 5, 15 min): ${r.setup.loadAverageBefore.join(", ")} before, ${r.setup.loadAverageAfter.join(", ")} after  `,
      `${r.setup.trials} key deletions, ${r.setup.deactivations} user deactivations. Target **${r.pass ? "met" : "NOT met"}** (worst key-deletion p99 ${r.worstP99Ms} ms).`,
      "",
      "| measure (ms after the answer was read) | p50 | p90 | p99 | max | samples |",
      "|---|---:|---:|---:|---:|---:|",
      row("DELETE → first HTTP 401 at the probe sidecar", r.keyDelete.firstHttp401AtProbeSidecarMs),
      row("DELETE → key dropped at every real sidecar", r.keyDelete.keyDroppedAtRealSidecarsMs),
      row("DELETE → removing delta at every raw Sync stream", r.keyDelete.deltaAtRawStreamsMs),
      row("user.deactivated → first HTTP 401 at the probe sidecar", r.userDeactivated.firstHttp401AtProbeSidecarMs),
      row("user.deactivated → key dropped at every real sidecar", r.userDeactivated.keyDroppedAtRealSidecarsMs),
      row("user.deactivated → removing delta at every raw Sync stream", r.userDeactivated.deltaAtRawStreamsMs),
      row("the DELETE request itself", r.keyDelete.requestMs),
      "",
      "| CPU time per deletion (ms), request to last stream | p50 | p90 | p99 | max | samples |",
      "|---|---:|---:|---:|---:|---:|",
      row("control plane process (10 ms resolution)", r.keyDelete.cpuMs.controlPlane),
      row("benchmark process (sidecars, streams, measuring)", r.keyDelete.cpuMs.benchProcess),
      "",
      `Removals seen before the client had read the answer (counted as 0): ${r.keyDelete.refusedBeforeResponseRead}.`,
      "",
    );
  }
  out.push("Run: `node --import tsx bench/revocation.ts [--streams 50] [--real 5] [--trials 100] [--deactivations 30]`.", "");
  return out.filter((line) => line !== undefined).join("\n");
}

await main();
