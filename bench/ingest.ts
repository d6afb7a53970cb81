// Benchmark of ingest: sustained traces per second from N concurrent Ingest.Upload streams (4 by
// default, each like a sidecar's shipper: batches of 500, up to 8 unacknowledged) into a control plane
// running in its own process (embedded Postgres, chDB — or the ClickHouse server when the engine is
// "server" and CLICKHOUSE_URL is set). A trace counts when it is acknowledged, i.e. stored in
// ClickHouse and counted (tool counts, today's spend). After the run, the stored count (exact total of
// GET /api/traces and count() of the stats) is compared with what was acknowledged: end-to-end loss
// and duplicates must be 0. Target: ≥ 20,000 traces/s with chDB on a 2-core machine.
//
//   node --import tsx bench/ingest.ts [--seconds 20] [--streams 4] [--batch 500] [--engines chdb,server]
// Writes bench/results/ingest.json and .md (a run replaces only its own engines' entries).

import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { cpus, loadavg, platform, release, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import {
  PiiDetectionSchema, PolicyEvaluationSchema, QualityScoreSchema, SpanSchema, ToolCallSchema, TraceSchema, UploadResponseSchema,
  type Trace, type UploadResponse,
} from "@agentgov/proto";
import { newId } from "../control-plane/src/domain/ids.js";
import { startEmbeddedPostgres } from "../control-plane/src/stores/postgres/embedded.js";
import { ServerEngine } from "../control-plane/src/stores/clickhouse/engine-server.js";
import { sql, sqlIdent } from "../control-plane/src/stores/clickhouse/sql-literal.js";
import { startStack } from "../test/harness/stack.js";
import { uniqueName } from "../test/harness/databases.js";

const { values: args } = parseArgs({
  options: {
    seconds: { type: "string", default: "20" },
    streams: { type: "string", default: "4" },
    batch: { type: "string", default: "500" },
    "in-flight": { type: "string", default: "8" },
    engines: { type: "string" },
    serve: { type: "string" }, // internal: run the control plane for one engine in this process
    "profile-control-plane": { type: "string" }, // write a CPU profile of the control plane into this directory
    "node-options": { type: "string", default: "" }, // extra node flags for the control plane, e.g. "--max-semi-space-size=64"
  },
});
const SECONDS = Number(args.seconds);
const STREAMS = Number(args.streams);
const BATCH = Number(args.batch);
const IN_FLIGHT = Number(args["in-flight"]);
const WARMUP_MS = 3000;
const TARGET = 20_000;
const AGENTS = 20;
type Engine = "chdb" | "server";

interface Ready {
  grpcUrl: string;
  restUrl: string;
  adminKey: string;
  ingestKey: string;
  tenantId: string;
  agents: { id: string; name: string }[];
}

// ---- child: the control plane ----

async function serve(engine: Engine): Promise<void> {
  const database = uniqueName("bench_ingest");
  const env: Record<string, string> = { CLICKHOUSE_DATABASE: database, API_RATE_LIMIT_PER_MINUTE: "1000000", LOG_LEVEL: "warn" };
  if (engine === "server") env.CLICKHOUSE_URL = process.env.CLICKHOUSE_URL ?? "";
  else delete process.env.CLICKHOUSE_URL;
  const stack = await startStack(env);
  const agents: Ready["agents"] = [];
  for (let i = 0; i < AGENTS; i++) {
    const name = `bench-agent-${i}`;
    const r = await stack.api.post<{ data: { id: string } }>("/api/agents", { name, environment: ["production", "staging", "dev"][i % 3], configYaml: "budget_limit_daily: 100000\n" });
    agents.push({ id: r.body.data.id, name });
  }
  const key = await stack.api.post<{ data: { key: string } }>("/api/keys", { name: "bench sidecar", scope: "ingest" });
  const ready: Ready = { grpcUrl: stack.cp.grpcUrl, restUrl: stack.cp.restUrl, adminKey: stack.adminKey, ingestKey: key.body.data.key, tenantId: stack.cp.tenantId, agents };
  const cpu0 = process.cpuUsage();
  process.stdout.write(`READY ${JSON.stringify(ready)}\n`);
  // A line on stdin asks for the CPU time used since READY (all threads: JS, chDB, Postgres client).
  let buffered = "";
  process.stdin.on("data", (d: Buffer) => {
    buffered += d.toString("utf8");
    if (buffered.includes("cpu\n")) {
      buffered = "";
      const u = process.cpuUsage(cpu0);
      process.stdout.write(`CPU ${JSON.stringify({ ms: (u.user + u.system) / 1000 })}\n`);
    }
  });
  await new Promise<void>((r) => {
    process.stdin.resume();
    process.stdin.on("end", () => r());
  });
  await stack.stop();
  if (engine === "server") {
    const e = new ServerEngine({ url: process.env.CLICKHOUSE_URL ?? "" });
    await e.command(sql`DROP DATABASE IF EXISTS ${sqlIdent(database)}`).catch(() => undefined);
    await e.close();
  }
}

async function startChild(engine: Engine) {
  const profile = args["profile-control-plane"] ? ["--cpu-prof", "--cpu-prof-dir", args["profile-control-plane"]] : [];
  const extra = (args["node-options"] ?? "").split(" ").filter(Boolean);
  const child = spawn(process.execPath, [...extra, ...profile, "--import", "tsx", fileURLToPath(import.meta.url), "--serve", engine], { stdio: ["pipe", "pipe", "inherit"], env: process.env });
  const ready = await new Promise<Ready>((ok, fail) => {
    let buf = "";
    child.stdout.on("data", (d: Buffer) => {
      buf += d.toString("utf8");
      const line = buf.split("\n").find((l) => l.startsWith("READY "));
      if (line) ok(JSON.parse(line.slice(6)) as Ready);
    });
    child.once("exit", (code) => fail(new Error(`control plane exited with ${code}`)));
  });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString("utf8")));
  return {
    ready,
    /** CPU time (ms, every thread) the control plane used since it was ready. */
    async cpuMs(): Promise<number> {
      out = "";
      child.stdin.write("cpu\n");
      for (let i = 0; i < 200; i++) {
        const line = out.split("\n").find((l) => l.startsWith("CPU "));
        if (line) return (JSON.parse(line.slice(4)) as { ms: number }).ms;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error("the control plane did not report its CPU time");
    },
    async stop() {
      const exited = new Promise((ok) => child.once("exit", ok));
      child.stdin.end();
      await exited;
    },
  };
}

// ---- parent: the load ----

const uploadDef = {
  path: "/governance.v1.IngestService/Upload",
  requestStream: true,
  responseStream: true,
  requestSerialize: (b: Buffer) => b,
  requestDeserialize: (b: Buffer) => b,
  responseSerialize: (m: UploadResponse) => Buffer.from(toBinary(UploadResponseSchema, m)),
  responseDeserialize: (b: Buffer) => fromBinary(UploadResponseSchema, b),
};
const GrpcClient = grpc.makeGenericClientConstructor({ Upload: uploadDef } as unknown as grpc.ServiceDefinition, "Ingest");
interface IngestClient extends grpc.Client {
  Upload(md: grpc.Metadata): grpc.ClientDuplexStream<Buffer, UploadResponse>;
}

const WORDS = "the quick brown fox jumps over a lazy dog while agents call tools and models answer questions".split(" ");

/** Realistic traces (prompts 200–800 characters, spans, evaluations, sometimes PII and tools); ids are replaced per send. */
function templates(ready: Ready, n: number): Trace[] {
  const now = Date.now();
  let seed = 1;
  const rnd = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
  return Array.from({ length: n }, (_, i) => {
    const agent = ready.agents[Math.floor(rnd() * rnd() * ready.agents.length)]!;
    const r = rnd();
    const status = r < 0.85 ? "success" : r < 0.95 ? "error" : "blocked";
    const input = 20 + Math.floor(rnd() * 3000);
    const output = status === "success" ? Math.floor(rnd() * 1000) : 0;
    let prompt = "";
    while (prompt.length < 200 + rnd() * 600) prompt += WORDS[Math.floor(rnd() * WORDS.length)] + " ";
    const provider = 100 + -Math.log(1 - rnd()) * 700;
    const pii = rnd() < 0.1;
    return create(TraceSchema, {
      id: "",
      tenantId: ready.tenantId,
      agentId: agent.id,
      agentName: agent.name,
      environment: ["production", "staging", "dev"][i % 3]!,
      sessionId: rnd() < 0.5 ? `sess_${i}` : undefined,
      provider: "openai",
      model: "gpt-4o-mini",
      status,
      timestampMs: BigInt(now - i),
      requestId: `req_${i}`,
      httpStatus: status === "success" ? 200 : status === "error" ? 500 : 403,
      inputTokens: input,
      outputTokens: output,
      costUsd: (input * 0.15 + output * 0.6) / 1e6,
      inputCost: (input * 0.15) / 1e6,
      outputCost: (output * 0.6) / 1e6,
      pricePerMillionInput: 0.15,
      pricePerMillionOutput: 0.6,
      priceVersion: "2026-11-01",
      latencyMs: provider + 3,
      providerMs: provider,
      overheadMs: 3,
      spans: ["policy_eval", "pii_scan", "provider", "quality_score"].map((stage) => create(SpanSchema, { stage, durationMs: stage === "provider" ? provider : 1 })),
      injectionScore: Math.round(rnd() * rnd() * 1000) / 1000,
      piiScanEnabled: true,
      piiDetections: pii ? [create(PiiDetectionSchema, { entityType: "email", start: 5, end: 20, source: "prompt", score: 0.95 })] : [],
      policyEvaluations: [create(PolicyEvaluationSchema, { policyId: "pol_1", policyName: "pii", result: status === "blocked" ? "fail" : "pass", actionTaken: status === "blocked" ? "block" : "none" })],
      policiesFired: status === "blocked" ? ["pii"] : [],
      policiesEvaluated: 1,
      policiesBlocked: status === "blocked" ? 1 : 0,
      qualityScores: [create(QualityScoreSchema, { scorer: "relevance", score: rnd() })],
      toolCalls: rnd() < 0.2 ? [create(ToolCallSchema, { name: ["search", "lookup", "send_email"][i % 3]!, id: `call_${i}` })] : [],
      prompt,
      completion: status === "success" ? prompt.slice(0, 300) : "",
    });
  });
}

interface StreamResult {
  sent: number;
  acked: number;
  rejected: number;
  ackLatenciesMs: number[];
}

const ULID_LENGTH = 26;

/**
 * Batches of the pool's traces encoded once as UploadRequest bytes, with the offset of every trace's
 * id: a send copies the bytes and writes fresh ULIDs in place, so the load generator spends almost no
 * CPU (a sidecar pays for its own encoding on its own machine) and the control plane gets exactly the
 * wire bytes a sidecar sends. protobuf-es writes fields in number order, so `id` (field 1) leads
 * every Trace: tag 0x0a, length 30, "trc_", then the ULID.
 */
function encodedBatches(pool: Trace[], batch: number): { bytes: Uint8Array; idOffsets: number[] }[] {
  const out: { bytes: Uint8Array; idOffsets: number[] }[] = [];
  const varint = (n: number) => {
    const b: number[] = [];
    while (n > 127) {
      b.push((n & 127) | 128);
      n >>>= 7;
    }
    b.push(n);
    return b;
  };
  for (let i = 0; i + batch <= pool.length; i += batch) {
    const parts: Uint8Array[] = [Uint8Array.from([0x08, 0x01])]; // batch_id = 1, rewritten per send
    const idOffsets: number[] = [];
    let offset = 2;
    for (const t of pool.slice(i, i + batch)) {
      const b = toBinary(TraceSchema, { ...t, id: "trc_" + "0".repeat(ULID_LENGTH) });
      if (b[0] !== 0x0a || b[1] !== 30) throw new Error("unexpected Trace encoding: id is not the first field");
      // Field 3, encoded_traces: each trace as the bytes a sidecar spooled (as current sidecars send).
      const head = Uint8Array.from([0x1a, ...varint(b.length)]);
      parts.push(head, b);
      idOffsets.push(offset + head.length + 2 + 4);
      offset += head.length + b.length;
    }
    const bytes = new Uint8Array(offset);
    let o = 0;
    for (const p of parts) {
      bytes.set(p, o);
      o += p.length;
    }
    out.push({ bytes, idOffsets });
  }
  return out;
}

/** One stream like a sidecar's shipper (grpc-js, pre-encoded batches): up to IN_FLIGHT unacknowledged. */
async function runStream(ready: Ready, batches: { bytes: Uint8Array; idOffsets: number[] }[], stopAt: number, ackLog: { t: number; n: number }[]): Promise<StreamResult> {
  const client = new GrpcClient(ready.grpcUrl.replace("http://", ""), grpc.credentials.createInsecure()) as unknown as IngestClient;
  const res: StreamResult = { sent: 0, acked: 0, rejected: 0, ackLatenciesMs: [] };
  const sentAt = new Map<bigint, number>();
  const md = new grpc.Metadata();
  md.set("authorization", `Bearer ${ready.ingestKey}`);
  const call = client.Upload(md);
  if (IN_FLIGHT > 127) throw new Error("--in-flight must be at most 127");
  let next = Math.floor(Math.random() * batches.length);
  // batch_id is one byte at offset 1 (values 1…IN_FLIGHT ≤ 127), taken from and returned to a free list.
  const free = Array.from({ length: IN_FLIGHT }, (_, i) => i + 1);
  const send = () => {
    while (free.length > 0 && Date.now() < stopAt) {
      const tpl = batches[next++ % batches.length]!;
      const bytes = Buffer.from(tpl.bytes); // a copy
      for (const off of tpl.idOffsets) bytes.write(newId("trc").slice(4), off, ULID_LENGTH, "latin1");
      const id = free.pop()!;
      bytes[1] = id;
      sentAt.set(BigInt(id), Date.now());
      res.sent += tpl.idOffsets.length;
      call.write(bytes);
    }
    if (sentAt.size === 0 && Date.now() >= stopAt) call.end();
  };
  await new Promise<void>((resolve, reject) => {
    call.on("data", (r: UploadResponse) => {
      const t0 = sentAt.get(r.batchId);
      sentAt.delete(r.batchId);
      const now = Date.now();
      if (t0 !== undefined) res.ackLatenciesMs.push(now - t0);
      res.acked += r.ackedTraceIds.length;
      res.rejected += r.rejected.length;
      ackLog.push({ t: now, n: r.ackedTraceIds.length });
      free.push(Number(r.batchId));
      send();
    });
    call.on("error", reject);
    call.on("end", () => resolve());
    send();
  });
  client.close();
  return res;
}

const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
const pct = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;

interface EngineResult {
  engine: Engine;
  engineVersion: string;
  date: string;
  streams: number;
  batch: number;
  inFlightPerStream: number;
  seconds: number;
  sent: number;
  acknowledged: number;
  rejected: number;
  storedTotal: number;
  storedCount: number;
  lost: number;
  duplicates: number;
  sustainedTracesPerSecond: number;
  overallTracesPerSecond: number;
  ackLatencyMs: { p50: number; p95: number; p99: number; max: number };
  /** CPU time of the control plane process (all threads) per acknowledged trace: independent of other load on the machine. */
  controlPlaneCpuUsPerTrace: number;
  loadGeneratorCpuUsPerTrace: number;
  targetMet: boolean;
  /** 1-minute load average of the machine (shared with other work) before and after the run. */
  loadAverageBefore: number[];
  loadAverageAfter: number[];
}

async function runEngine(engine: Engine): Promise<EngineResult> {
  const loadBefore = loadavg().map((x) => round(x, 2));
  const child = await startChild(engine);
  try {
    const { ready } = child;
    const batches = encodedBatches(templates(ready, 4000), BATCH);
    const cpuBefore = await child.cpuMs();
    const loadCpu0 = process.cpuUsage();
    const start = Date.now();
    const stopAt = start + SECONDS * 1000;
    const ackLog: { t: number; n: number }[] = [];
    const results = await Promise.all(Array.from({ length: STREAMS }, () => runStream(ready, batches, stopAt, ackLog)));
    const end = Date.now();
    const cpuDuring = (await child.cpuMs()) - cpuBefore;
    const loadCpu = process.cpuUsage(loadCpu0);
    const sent = results.reduce((s, r) => s + r.sent, 0);
    const acked = results.reduce((s, r) => s + r.acked, 0);
    const rejected = results.reduce((s, r) => s + r.rejected, 0);
    // Sustained rate: acknowledgements between the end of the warm-up and the stop of the senders.
    const steady = ackLog.filter((a) => a.t >= start + WARMUP_MS && a.t <= stopAt).reduce((s, a) => s + a.n, 0);
    const steadySeconds = (stopAt - start - WARMUP_MS) / 1000;
    const headers = { authorization: `Bearer ${ready.adminKey}` };
    const list = (await (await fetch(`${ready.restUrl}/api/traces?limit=1`, { headers })).json()) as { total: number };
    const stats = (await (await fetch(`${ready.restUrl}/api/traces/stats?period=1h`, { headers })).json()) as { summary: { totalTraces: number } };
    const lat = results.flatMap((r) => r.ackLatenciesMs).sort((a, b) => a - b);
    const version = engine === "server" ? await serverVersion() : "chDB (embedded)";
    const sustained = Math.round(steady / steadySeconds);
    return {
      engine,
      engineVersion: version,
      date: new Date().toISOString(),
      streams: STREAMS,
      batch: BATCH,
      inFlightPerStream: IN_FLIGHT,
      seconds: SECONDS,
      sent,
      acknowledged: acked,
      rejected,
      storedTotal: list.total,
      storedCount: stats.summary.totalTraces,
      lost: acked - Math.min(list.total, stats.summary.totalTraces),
      duplicates: Math.max(list.total, stats.summary.totalTraces) - acked,
      sustainedTracesPerSecond: sustained,
      overallTracesPerSecond: Math.round(acked / ((end - start) / 1000)),
      ackLatencyMs: { p50: pct(lat, 0.5), p95: pct(lat, 0.95), p99: pct(lat, 0.99), max: lat[lat.length - 1] ?? 0 },
      controlPlaneCpuUsPerTrace: round((cpuDuring * 1000) / Math.max(1, acked)),
      loadGeneratorCpuUsPerTrace: round((loadCpu.user + loadCpu.system) / Math.max(1, acked)),
      targetMet: sustained >= TARGET && acked === sent && list.total === acked && stats.summary.totalTraces === acked,
      loadAverageBefore: loadBefore,
      loadAverageAfter: loadavg().map((x) => round(x, 2)),
    };
  } finally {
    await child.stop();
  }
}

async function serverVersion(): Promise<string> {
  const e = new ServerEngine({ url: process.env.CLICKHOUSE_URL ?? "" });
  try {
    const rows = await e.query(sql`SELECT version() AS v`);
    return `ClickHouse server ${String(rows[0]?.["v"] ?? "?")}`;
  } finally {
    await e.close();
  }
}

function machine() {
  return { cpu: cpus()[0]?.model ?? "unknown", cores: cpus().length, memoryGiB: round(totalmem() / 2 ** 30), os: `${platform()} ${release()}`, node: process.version };
}

function markdown(doc: { date: string; machine: ReturnType<typeof machine>; results: EngineResult[] }): string {
  const m = doc.machine;
  const lines = [
    "# Ingest benchmark",
    "",
    `Last run: ${doc.date}  `,
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.os}, Node ${m.node}`,
    "",
    `Target: ≥ ${TARGET.toLocaleString("en-US")} traces/s sustained with chDB, end-to-end loss 0.`,
    "",
    "| engine | streams × batch × in flight | seconds | sustained traces/s | overall traces/s | acknowledged | stored (total / count()) | lost | duplicates | ack p50 / p95 / p99 ms | control plane CPU µs/trace | load generator CPU µs/trace | load avg before | target |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|",
  ];
  for (const r of doc.results) {
    lines.push(
      `| ${r.engineVersion} | ${r.streams} × ${r.batch} × ${r.inFlightPerStream} | ${r.seconds} | ${r.sustainedTracesPerSecond.toLocaleString("en-US")} | ${r.overallTracesPerSecond.toLocaleString("en-US")} | ${r.acknowledged.toLocaleString("en-US")} | ${r.storedTotal.toLocaleString("en-US")} / ${r.storedCount.toLocaleString("en-US")} | ${r.lost} | ${r.duplicates} | ${r.ackLatencyMs.p50} / ${r.ackLatencyMs.p95} / ${r.ackLatencyMs.p99} | ${r.controlPlaneCpuUsPerTrace} | ${r.loadGeneratorCpuUsPerTrace} | ${r.loadAverageBefore[0] ?? "?"} | ${r.targetMet ? "met" : "missed"} |`,
    );
  }
  lines.push("", ...doc.results.map((r) => `- ${r.engineVersion}: run ${r.date}.`));
  lines.push(
    "",
    "## How it is measured",
    "",
    "- The control plane runs in its own process (embedded Postgres; chDB in-process, or the ClickHouse server over HTTP); the load generator is a second process on the same 2 cores.",
    "- Each stream behaves like a sidecar's shipper: batches of realistic traces (prompts 200–800 characters, four spans, a policy evaluation, 10 % with PII, 20 % with a tool call, 20 agents), up to the in-flight limit unacknowledged; every trace gets a fresh `trc_<ULID>` id.",
    "- A trace counts when it is acknowledged: stored in ClickHouse, tool counts and today's spend updated in Postgres. The sustained rate counts acknowledgements after a 3 s warm-up until the senders stop.",
    "- Loss and duplicates: after the run, the exact total of `GET /api/traces` and `count()` of `GET /api/traces/stats` are compared with the number of acknowledged traces.",
    "- CPU per trace is the control plane process's CPU time (every thread: JS, chDB, Postgres client) over the run divided by the traces acknowledged; unlike traces/s it does not depend on what else the shared machine runs. With both cores free the ceiling is about 2,000,000 / (control plane + load generator µs) traces/s.",
    "- Query latency over 10 million traces is measured by `bench/trace-store.ts` (results in `trace-store.md`).",
    "",
    "## Where the control plane's time goes",
    "",
    "Sidecars ship each trace as the protobuf bytes they spooled (`UploadRequest.encoded_traces`); the control plane reads the few",
    "fields it checks and transcodes the rest straight into TabSeparated rows (control-plane/src/stores/clickhouse/trace-transcoder.ts),",
    "without building Trace objects or JSON. Before that change (decode with @bufbuild/protobuf, JSONEachRow rows) the same run measured",
    "13,882 traces/s on chDB at 108 µs of control-plane CPU per trace and 16,324/s on the server at 59 µs: the event loop was saturated by",
    "protobuf decoding (~19 µs), row JSON (~15 µs) and the garbage both left (~23 µs). What remains with chDB is mostly chDB's own",
    "parsing and merging on its threads; with the server the insert work leaves the process.",
    "",
  );
  return lines.join("\n");
}

async function main(): Promise<void> {
  if (args.serve) return serve(args.serve as Engine);
  const engines = (args.engines ?? (process.env.CLICKHOUSE_URL ? "chdb,server" : "chdb")).split(",") as Engine[];
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
  const results: EngineResult[] = [];
  try {
    for (const engine of engines) {
      process.stderr.write(`ingest bench: ${engine}, ${STREAMS} streams, ${SECONDS} s\n`);
      const r = await runEngine(engine);
      process.stderr.write(`${JSON.stringify(r)}\n`);
      results.push(r);
    }
  } finally {
    await stopPg?.();
    if (pgDir) rmSync(pgDir, { recursive: true, force: true });
  }
  const dir = join(fileURLToPath(new URL(".", import.meta.url)), "results");
  mkdirSync(dir, { recursive: true });
  const jsonPath = join(dir, "ingest.json");
  const previous = existsSync(jsonPath) ? ((JSON.parse(readFileSync(jsonPath, "utf8")) as { results?: EngineResult[] }).results ?? []) : [];
  const merged = [...previous.filter((p) => !results.some((r) => r.engine === p.engine)), ...results].sort((a, b) => a.engine.localeCompare(b.engine));
  const doc = { date: new Date().toISOString(), machine: machine(), results: merged };
  writeFileSync(jsonPath, JSON.stringify(doc, null, 2) + "\n");
  writeFileSync(join(dir, "ingest.md"), markdown(doc));
  process.stdout.write(markdown(doc));
}

await main();
