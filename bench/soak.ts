// Soak benchmark of sidecar resilience: a steady rate of proxied requests (fake OpenAI provider) through
// a sidecar process for N minutes while the control-plane process is restarted every minute
// (alternately SIGKILL and SIGTERM, same DATA_DIR), then: traces answered vs stored (must be equal,
// each stored once), the spool's high-water mark, and the sidecar's RSS over time (trend = least-squares
// slope after the first minute).
//
//   node --import tsx bench/soak.ts [--minutes 10] [--rate 25] [--restart-every 60]
// Postgres: DATABASE_URL when set (a database is created in it), else an embedded Postgres for the run;
// ClickHouse: CLICKHOUSE_URL when set, else chDB in the control plane's DATA_DIR.
// Writes bench/results/soak.json and .md.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startEmbeddedPostgres } from "@agentgov/control-plane";
import { createTestDatabase } from "../test/harness/databases.js";
import { startFakeProviders } from "../test/fakes/providers/index.js";
import {
  apiClient, controlPlaneSpec, readiness, sidecarSpec, startControlPlaneProcess, startSidecarProcess, storedTraceIds,
  type ControlPlaneProcess,
} from "../test/harness/processes.js";

const { values: args } = parseArgs({
  options: {
    minutes: { type: "string", default: "10" },
    rate: { type: "string", default: "25" },
    "restart-every": { type: "string", default: "60" },
  },
});
const MINUTES = Number(args.minutes);
const RATE = Number(args.rate);
const RESTART_EVERY_MS = Number(args["restart-every"]) * 1000;
const SAMPLE_MS = 5000;

function machine() {
  return {
    cpu: os.cpus()[0]?.model ?? "unknown",
    cores: os.cpus().length,
    memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Math.round((Number(m[1]) / 1024) * 10) / 10 : Number.NaN;
}

function slopePerMinute(points: { tMs: number; v: number }[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, p) => s + p.tMs, 0) / n;
  const my = points.reduce((s, p) => s + p.v, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.tMs - mx) * (p.v - my);
    den += (p.tMs - mx) ** 2;
  }
  return den === 0 ? 0 : (num / den) * 60_000;
}

const percentile = (xs: number[], q: number) => {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

async function main(): Promise<void> {
  const dir = mkdtempSync(join(os.tmpdir(), "agentgov-soak-"));
  let stopPg: (() => Promise<void>) | undefined;
  if (!process.env.TEST_DATABASE_URL) {
    if (process.env.DATABASE_URL) process.env.TEST_DATABASE_URL = process.env.DATABASE_URL;
    else {
      // Its own temp directory (under root, embedded Postgres runs as the postgres user and must reach it).
      const pgDir = mkdtempSync(join(os.tmpdir(), "agentgov-soak-pg-"));
      const pg = await startEmbeddedPostgres(pgDir);
      process.env.TEST_DATABASE_URL = pg.url;
      stopPg = async () => {
        await pg.stop();
        rmSync(pgDir, { recursive: true, force: true });
      };
    }
  }
  const fakes = await startFakeProviders({ text: "steady answer", usage: { inputTokens: 12, outputTokens: 4 } });
  const spec = await controlPlaneSpec(join(dir, "cp"), await createTestDatabase());
  spec.env = { LOG_LEVEL: "warn" };
  let cp: ControlPlaneProcess = await startControlPlaneProcess(spec, "control-plane-0");
  const api = await apiClient(cp.restUrl, spec.adminKey);
  const agentId = (await api.post<{ data: { id: string } }>("/api/agents", { name: "soak", modelProvider: "openai", modelName: "gpt-4o-mini" })).body.data.id;
  const key = (await api.post<{ data: { key: string } }>("/api/keys", { name: "soak sidecar", scope: "ingest" })).body.data.key;
  const scSpec = await sidecarSpec(join(dir, "sc"), cp.grpcUrl, key, { PROVIDER_OPENAI_URL: fakes.urls.openai, LOG_LEVEL: "warn" });
  const sc = await startSidecarProcess(scSpec);
  for (let i = 0; i < 300 && (await readiness(sc.url)).status !== "ready"; i++) await new Promise((r) => setTimeout(r, 100));
  const since = new Date(Date.now() - 60_000);
  process.stderr.write(`soak: ${MINUTES} min at ${RATE} req/s, control plane restarted every ${RESTART_EVERY_MS / 1000} s; data in ${dir}\n`);

  // Steady open-loop load.
  const answered: string[] = [];
  const latencies: number[] = [];
  let sent = 0;
  let failed = 0;
  const statuses: Record<number, number> = {};
  const inflight = new Set<Promise<void>>();
  const t0 = Date.now();
  const endAt = t0 + MINUTES * 60_000;
  const one = async (n: number) => {
    const ts = performance.now();
    try {
      const r = await fetch(`${sc.url}/v1/proxy/openai/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer sk-soak", "x-service-key": key, "x-service-agent": agentId },
        body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: `soak request ${n}` }] }),
        signal: AbortSignal.timeout(30_000),
      });
      await r.arrayBuffer();
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      const id = r.headers.get("x-service-trace-id");
      if (id) answered.push(id);
      latencies.push(performance.now() - ts);
    } catch {
      failed++;
    }
  };
  const loadDone = (async () => {
    const interval = 1000 / RATE;
    let next = Date.now();
    while (Date.now() < endAt) {
      const p = one(sent++).finally(() => inflight.delete(p));
      inflight.add(p);
      next += interval;
      const wait = next - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    await Promise.all(inflight);
  })();

  // Restarts and samples.
  const samples: { tSec: number; rssMiB: number; spoolDepth: number; spoolBytes: number; connected: boolean; answered: number }[] = [];
  const restarts: { tSec: number; signal: string; stopMs: number; downMs: number }[] = [];
  let nextRestart = t0 + RESTART_EVERY_MS;
  let nextSample = t0;
  let restartNo = 0;
  let restarting: Promise<void> | undefined;
  const restart = async (no: number) => {
    const signal = no % 2 === 1 ? "SIGKILL" : "SIGTERM";
    const down = Date.now();
    if (signal === "SIGKILL") await cp.kill9();
    else await cp.stop();
    const stoppedMs = Date.now() - down;
    cp = await startControlPlaneProcess(spec, `control-plane-${no}`);
    restarts.push({ tSec: Math.round((down - t0) / 1000), signal, stopMs: stoppedMs, downMs: Date.now() - down });
    process.stderr.write(`  ${Math.round((Date.now() - t0) / 1000)} s: control plane restarted (${signal}), ${answered.length} answered so far\n`);
  };
  // Samples keep their 5 s pace while a restart is under way.
  while (Date.now() < endAt) {
    const now = Date.now();
    if (now >= nextSample) {
      nextSample += SAMPLE_MS;
      const r = await readiness(sc.url);
      samples.push({ tSec: Math.round((now - t0) / 1000), rssMiB: rssMiB(sc.pid), spoolDepth: r.spool.depth, spoolBytes: r.spool.bytes, connected: r.connected, answered: answered.length });
    }
    if (now >= nextRestart && !restarting && now < endAt - 5000) {
      nextRestart += RESTART_EVERY_MS;
      const no = ++restartNo;
      restarting = restart(no).finally(() => (restarting = undefined));
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  await restarting;
  await loadDone;
  const loadEnd = Date.now();

  // Drain: the spool empties and every answered trace is stored.
  const api2 = await apiClient(cp.restUrl, spec.adminKey);
  let stored: string[] = [];
  const answeredSet = new Set(answered);
  const drainDeadline = Date.now() + 5 * 60_000;
  for (;;) {
    const r = await readiness(sc.url);
    if (r.spool.depth === 0) {
      stored = await storedTraceIds(api2, agentId, since);
      if (answered.every((id) => stored.includes(id)) || Date.now() > drainDeadline) break;
    } else if (Date.now() > drainDeadline) break;
    await new Promise((res) => setTimeout(res, 1000));
  }
  const drainMs = Date.now() - loadEnd;
  const storedSet = new Set(stored);
  const final = await readiness(sc.url);
  const afterWarmup = samples.filter((s) => s.tSec >= 60).map((s) => ({ tMs: s.tSec * 1000, v: s.rssMiB }));
  const rss = samples.map((s) => s.rssMiB);

  const result = {
    date: new Date().toISOString(),
    machine: machine(),
    engine: process.env.CLICKHOUSE_URL ? "ClickHouse server" : "chDB",
    params: { minutes: MINUTES, ratePerSecond: RATE, restartEverySeconds: RESTART_EVERY_MS / 1000 },
    requests: { sent, answered: answered.length, failed, statuses, latencyMs: { p50: Math.round(percentile(latencies, 0.5) * 10) / 10, p99: Math.round(percentile(latencies, 0.99) * 10) / 10, max: Math.round(Math.max(0, ...latencies)) } },
    traces: {
      answered: answered.length,
      stored: stored.length,
      storedDistinct: storedSet.size,
      missing: answered.filter((id) => !storedSet.has(id)).length,
      extra: stored.filter((id) => !answeredSet.has(id)).length,
      equal: stored.length === answered.length && storedSet.size === stored.length && answered.every((id) => storedSet.has(id)),
      drainSeconds: Math.round(drainMs / 100) / 10,
    },
    spool: { highWaterDepth: final.spool.highWaterDepth, highWaterBytes: final.spool.highWaterBytes, droppedTotal: final.spool.droppedTotal, quarantinedRanges: final.spool.quarantinedRanges },
    sync: final.sync,
    restarts,
    rss: {
      firstMiB: rss[0] ?? 0,
      maxMiB: Math.max(...rss),
      lastMiB: rss.at(-1) ?? 0,
      slopeMiBPerMinuteAfterFirstMinute: Math.round(slopePerMinute(afterWarmup) * 100) / 100,
    },
    samples,
  };

  await sc.stop();
  await cp.stop();
  await fakes.close();
  await stopPg?.();
  rmSync(dir, { recursive: true, force: true });

  mkdirSync("bench/results", { recursive: true });
  writeFileSync("bench/results/soak.json", `${JSON.stringify(result, null, 2)}\n`);
  const md = [
    "# Soak: steady load through a sidecar while the control plane restarts",
    "",
    `Date: ${result.date}  `,
    `Machine: ${result.machine.cpu}, ${result.machine.cores} cores, ${result.machine.memoryGiB} GiB, ${result.machine.platform}, node ${result.machine.node}  `,
    `Trace store: ${result.engine}; Postgres: ${process.env.DATABASE_URL ? "DATABASE_URL" : "embedded"}  `,
    `Run: \`node --import tsx bench/soak.ts --minutes ${MINUTES} --rate ${RATE} --restart-every ${RESTART_EVERY_MS / 1000}\``,
    "",
    `${MINUTES} min at ${RATE} req/s (open loop) through one sidecar process to the fake OpenAI provider; the control-plane`,
    `process was restarted ${restarts.length} times (alternately SIGKILL and SIGTERM, same DATA_DIR).`,
    "",
    "| measure | value |",
    "|---|---:|",
    `| requests sent | ${sent} |`,
    `| answered (complete response) | ${answered.length} |`,
    `| failed (no response) | ${failed} |`,
    `| traces stored (distinct) | ${stored.length} (${storedSet.size}) |`,
    `| missing / extra | ${result.traces.missing} / ${result.traces.extra} |`,
    `| **sent vs stored equal** | **${result.traces.equal ? "yes" : "NO"}** |`,
    `| drain after the load stopped | ${result.traces.drainSeconds} s |`,
    `| spool high-water mark | ${result.spool.highWaterDepth} traces, ${(result.spool.highWaterBytes / 1024).toFixed(1)} KiB |`,
    `| spool drops / quarantined ranges | ${result.spool.droppedTotal} / ${result.spool.quarantinedRanges} |`,
    `| Sync: snapshots / deltas / reconnects | ${final.sync.snapshots} / ${final.sync.deltas} / ${final.sync.reconnects} |`,
    `| response latency p50 / p99 / max | ${result.requests.latencyMs.p50} / ${result.requests.latencyMs.p99} / ${result.requests.latencyMs.max} ms |`,
    `| sidecar RSS first / max / last | ${result.rss.firstMiB} / ${result.rss.maxMiB} / ${result.rss.lastMiB} MiB |`,
    `| RSS trend after the first minute | ${result.rss.slopeMiBPerMinuteAfterFirstMinute} MiB/min |`,
    "",
    "Control-plane restarts (time into the run, signal, time the old process took to exit, time until the new one listened):",
    "",
    restarts.map((r) => `- ${r.tSec} s ${r.signal}: exited after ${(r.stopMs / 1000).toFixed(1)} s, new process listening after ${(r.downMs / 1000).toFixed(1)} s`).join("\n"),
    "",
    "Sidecar RSS and spool depth over time (every 5 s):",
    "",
    "| t (s) | RSS MiB | spool depth | spool KiB | Sync connected |",
    "|---:|---:|---:|---:|:--:|",
    ...samples.map((s) => `| ${s.tSec} | ${s.rssMiB} | ${s.spoolDepth} | ${(s.spoolBytes / 1024).toFixed(1)} | ${s.connected ? "yes" : "no"} |`),
    "",
  ].join("\n");
  writeFileSync("bench/results/soak.md", md);
  process.stderr.write(`${md.split("\n").slice(0, 25).join("\n")}\n`);
  if (!result.traces.equal) process.exitCode = 1;
}

main().catch((e: unknown) => {
  process.stderr.write(`soak failed: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
