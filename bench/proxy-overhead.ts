// Proxy overhead benchmark (issue 5): how much latency does the sidecar add to a model call, how many
// requests per second does one sidecar process sustain, what does it add to a stream's time to first
// byte, and how much memory does it use?
//
// Four processes (the same file, one role each):
//   main     — orchestrates, and plays a stub control plane (gRPC Sync: one snapshot with the agent, the
//              policies and the key; gRPC Ingest: acknowledges every trace batch without storing it, so
//              the control plane's own work does not compete for the two cores with the sidecar);
//   upstream — an OpenAI-compatible server that answers at once (JSON; or an SSE stream: its first event at
//              once, the other 22 in one write 2 ms later);
//   sidecar  — one real sidecar (startSidecar: Sync client, durable trace spool with its group commit and
//              response gate, shipper, node:http + undici proxy);
//   loadgen  — the load generator (undici pools, one per target; autocannon is not installed and wrk
//              cannot interleave two targets, so this small generator is used: closed-loop sequential
//              calls, open-loop fixed-rate phases, closed-loop max-throughput runs). The fixed-rate
//              phases are sent by support/rate-client.c (compiled with gcc when installed; else by the
//              node open loop), so that the generator's CPU and GC pauses stay off the measured cores.
// Governance is all on: three PII policies (block SSN/card inbound, redact email/phone both ways, log
// IP/IBAN both ways), an injection policy (block at score ≥ 0.8), a rate limit high enough not to refuse
// (1,000,000/min), a daily budget high enough (1,000,000 USD). Prompts are 1 KB and 8 KB of English text
// without PII, unique per request (a counter in front), in an OpenAI chat body with max_tokens 256.
// "Added latency" = sidecar minus direct, measured in the same run with the two targets interleaved
// (every other request when sequential; alternating 1-second phases under fixed-rate load). Fixed-rate
// load is open loop at a constant rate (one request every 1000/rps ms, timed by a pacer thread, as
// vegeta sends), and each latency counts from the request's scheduled time.
//
//   node --import tsx bench/proxy-overhead.ts [--quick] [--gate-off-too] [--fsync-too] [--bare-too] [--memory-limit-mib N]
// (--memory-limit-mib: the sidecar runs in a memory cgroup of N MiB, as in a container; needs root.) Writes bench/results/proxy-overhead.json and bench/results/proxy-overhead.md.
// Diagnostics (print only): --rate-only <rps> [--phases N] [--profile F] [--heap-profile F] runs just the
// fixed-rate phases (1 KB) and prints the sidecar's own X-Service-Overhead-Ms at that rate, its event-loop
// delay (only with BENCH_LOOP_DELAY=1: the probe's 1 ms timer wakes the measured process), GC pauses by kind, time its main thread waited for a CPU, and the CPU each process used (also
// for the bare proxy with --bare-too); BENCH_SIDECAR_EXEC_ARGV passes V8/Node flags
// to the sidecar; BENCH_HEAP_SNAPSHOT_AT=<s> writes a heap snapshot that far into the run;
// BENCH_SLOW_DUMP=<file> writes every fixed-rate request (target, phase, index, latency, the sidecar's
// X-Service-Overhead-Ms, scheduled time in epoch ms) to find when the slow ones came, and
// BENCH_GC_DUMP=<file> the sidecar's GC pauses (epoch ms, duration) to set beside them. --pin (any mode) gives the sidecar the last
// CPU to itself and the other processes the rest (taskset). BENCH_FIXTURE_EXEC_ARGV replaces the node
// flags of the load generator, the upstream and this process (FIXTURE_NODE_FLAGS). --ab (with --rate-only)
// starts a second sidecar B with BENCH_AB_EXEC_ARGV / BENCH_AB_CONFIG and interleaves its phases with
// the first's (direct, A, direct, B, ...; --phases counts direct phases): a paired comparison of one
// setting, since the same setting's p99 moves by ±0.4 ms from one run to the next here.

import { fork, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { Worker } from "node:worker_threads";
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import http2 from "node:http2";
import { LeanPool, leanUpstream, requestBytes } from "./support/lean-http.js";
import { createMemoryCgroup, type MemoryCgroup } from "./support/memory-cgroup.js";
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay, performance, PerformanceObserver } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { getHeapStatistics } from "node:v8";
import { parseArgs } from "node:util";
import { Pool } from "undici";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { traceKeyFields, walkFields } from "../data-plane/src/trace/spool-format.js";
import type { ConnectRouter } from "@connectrpc/connect";
import {
  AgentSchema, AgentSpendSchema, ApiKeySchema, DeltaSchema, HeartbeatSchema, IngestService, PolicyConditionsSchema, PolicySchema, SnapshotSchema, SyncService,
  UploadResponseSchema, WatchResponseSchema, create, type UploadRequest,
} from "@agentgov/proto";

const { values: args } = parseArgs({
  options: {
    role: { type: "string", default: "main" },
    quick: { type: "boolean", default: false },
    "gate-off-too": { type: "boolean", default: false },
    /** Also measure SPOOL_GATE=fsync (answers wait for their trace's fdatasync). */
    "fsync-too": { type: "boolean", default: false },
    /** Write a CPU profile of the sidecar under closed-loop load to this file and stop (no results written). */
    profile: { type: "string" },
    /** Only the sequential JSON/stream measurements, printed, nothing written (for quick experiments). */
    "seq-only": { type: "boolean", default: false },
    /** Also measure a bare Node.js proxy (node:http + undici, nothing else) as the floor of one hop. */
    "bare-too": { type: "boolean", default: false },
    /** Only the fixed-rate runs at this rate (1 KB), printed with the sidecar's event-loop delay and GC pauses, nothing written. */
    "rate-only": { type: "string" },
    /** Prompt bytes for --rate-only (default 1024). */
    size: { type: "string" },
    /** With --rate-only: write a sampled allocation profile (all allocations, collected or not) of the sidecar to this file. */
    "heap-profile": { type: "string" },
    /** Seconds of sidecar phases for --rate-only (default 10). */
    phases: { type: "string" },
    /** Pin the sidecar (all its threads) to the last CPU and every other process (load generator, upstream, stub control plane, wrk) to the others. */
    pin: { type: "boolean", default: false },
    ab: { type: "boolean", default: false },
    repeats: { type: "string" },
    /** Run the sidecar in a memory cgroup with this limit (MiB), as a container would; needs root (support/memory-cgroup.ts). */
    "memory-limit-mib": { type: "string" },
  },
});
const QUICK = args.quick === true;
/**
 * How many times the full run measures 1,000 rps per prompt size and variant (--repeats N; 3, or 1 with
 * --quick). The p99 of one 20-phase measure moves by ±0.4 ms from one run to the next on this machine,
 * so the report gives the measure with the median added p99 and lists every repeat's.
 */
const REPEATS_AT_1000 = Math.max(1, Number(args.repeats ?? (QUICK ? 1 : 3)));
const MEMORY_LIMIT_MIB = args["memory-limit-mib"] ? Number(args["memory-limit-mib"]) : undefined;
if (MEMORY_LIMIT_MIB !== undefined && !(MEMORY_LIMIT_MIB > 0)) throw new Error("--memory-limit-mib takes a positive number of MiB");
if (args.profile && args["heap-profile"]) throw new Error("--profile and --heap-profile use the same inspector session: pass one of them");
const HERE = fileURLToPath(import.meta.url);
const REPO = fileURLToPath(new URL("../", import.meta.url));

// ───────────────────────────── shared ─────────────────────────────

type Msg = { id?: number; type: string; [k: string]: unknown };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}
const sortNum = (a: number[]) => [...a].sort((x, y) => x - y);
const r3 = (v: number) => Math.round(v * 1000) / 1000;

interface Dist {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}
function dist(values: number[]): Dist {
  const s = sortNum(values);
  const mean = s.reduce((a, b) => a + b, 0) / Math.max(1, s.length);
  return { n: s.length, p50: r3(percentile(s, 50)), p90: r3(percentile(s, 90)), p99: r3(percentile(s, 99)), max: r3(s[s.length - 1] ?? NaN), mean: r3(mean) };
}

const FILLER =
  "The quarterly planning meeting covered the roadmap for the analytics service, the migration of the reporting jobs, " +
  "the onboarding guide for new engineers and the support rotation. Please summarise the open questions, list the owners " +
  "of each item and suggest a realistic order of work for the next six weeks, keeping the answer short and practical. ";

/** An OpenAI chat body whose user message is `size` bytes of text, unique per call (counter in front). */
function chatBody(size: number, n: number | string, stream: boolean): Buffer {
  let text = `Request ${n}. `;
  while (text.length < size) text += FILLER;
  text = text.slice(0, size);
  return Buffer.from(
    JSON.stringify({
      model: "gpt-4o-mini",
      max_tokens: 256,
      ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
      messages: [
        { role: "system", content: "You are a concise assistant for an engineering team." },
        { role: "user", content: text },
      ],
    }),
  );
}

// ───────────────────────────── role: upstream ─────────────────────────────

/** BENCH_GC_DUMP: this helper process's GC pauses too (epoch ms, duration), to `<file>.<role>`. */
function dumpGcPauses(role: string): void {
  const file = process.env.BENCH_GC_DUMP;
  if (!file) return;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) appendFileSync(`${file}.${role}`, `${(performance.timeOrigin + e.startTime).toFixed(2)} ${e.duration.toFixed(3)}\n`);
  }).observe({ entryTypes: ["gc"] });
}

/**
 * A streamed answer's first event (role, empty content) goes out with the headers; the other events follow
 * this many ms later in one write, so that the first body byte measures the way to the client of a first
 * event, as it arrives from a provider, and not the sidecar's work on the whole answer.
 */
const STREAM_REST_AFTER_MS = 2;

function runUpstream(): void {
  dumpGcPauses("upstream");
  const completion = "Here are the open questions, their owners and a suggested order of work for the next six weeks.";
  const json = Buffer.from(
    JSON.stringify({
      id: "chatcmpl-bench",
      object: "chat.completion",
      created: 1767225600,
      model: "gpt-4o-mini-2024-07-18",
      choices: [{ index: 0, message: { role: "assistant", content: completion, refusal: null }, finish_reason: "stop" }],
      usage: { prompt_tokens: 512, completion_tokens: 21, total_tokens: 533 },
    }),
  );
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1767225600, model: "gpt-4o-mini-2024-07-18", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const words = completion.split(/(?<= )/);
  const first = Buffer.from(chunk({ role: "assistant", content: "" }));
  const rest = Buffer.from(
    words.map((w) => chunk({ content: w })).join("") +
      chunk({}, "stop") +
      `data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1767225600, model: "gpt-4o-mini-2024-07-18", choices: [], usage: { prompt_tokens: 512, completion_tokens: 21, total_tokens: 533 } })}\n\n` +
      "data: [DONE]\n\n",
  );
  // Plain sockets, not node:http: the upstream's CPU is CPU the sidecar may wait for (support/lean-http.ts).
  const server = leanUpstream(json, { first, rest, restAfterMs: STREAM_REST_AFTER_MS });
  server.listen(0, "127.0.0.1", () => {
    const addr = server.address();
    process.send!({ type: "ready", url: `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}` });
  });
}

// ───────────────────────────── role: sidecar ─────────────────────────────

async function runSidecar(): Promise<void> {
  const { loadSidecarConfig, startSidecar } = await import("../data-plane/src/index.js");
  const env = JSON.parse(process.env.BENCH_SIDECAR_ENV ?? "{}") as Record<string, string>;
  // BENCH_SIDECAR_TIMES=<file>: when each request reached the sidecar's handler and when its answer was
  // handed to the kernel (epoch ms), to split a slow request's time into before, inside and after the sidecar.
  const times: string[] = [];
  if (process.env.BENCH_SIDECAR_TIMES) {
    const { Server } = await import("node:http");
    const emit = Server.prototype.emit;
    Server.prototype.emit = function (this: InstanceType<typeof Server>, event: string, ...rest: unknown[]) {
      if (event === "request") {
        const at = performance.timeOrigin + performance.now();
        const res = rest[1] as import("node:http").ServerResponse;
        res.once("finish", () => times.push(`${at.toFixed(3)} ${(performance.timeOrigin + performance.now()).toFixed(3)}`));
      }
      return Reflect.apply(emit, this, [event, ...rest]) as boolean;
    } as typeof emit;
    setInterval(() => writeFileSync(process.env.BENCH_SIDECAR_TIMES!, times.join("\n")), 2000).unref(); // killed, not stopped
  }
  // BENCH_STALL_DUMP=<file>: every gap of more than 3 ms between 1 ms ticks of the sidecar's event loop,
  // with what its main thread did meanwhile (ms on a CPU, ms runnable but waiting for one; the rest it
  // was blocked in a system call), to tell its own work from the scheduler from the disk.
  if (process.env.BENCH_STALL_DUMP) {
    const file = process.env.BENCH_STALL_DUMP;
    const sched = () => readFileSync("/proc/thread-self/schedstat", "utf8").split(" ").map(Number);
    let last = performance.now();
    let lastSched = sched();
    const stalls: string[] = [];
    setInterval(() => {
      const now = performance.now();
      const cur = sched();
      if (now - last > 3) stalls.push(`${(performance.timeOrigin + last).toFixed(2)} ${(now - last).toFixed(2)} ${((cur[0]! - lastSched[0]!) / 1e6).toFixed(2)} ${((cur[1]! - lastSched[1]!) / 1e6).toFixed(2)}`);
      last = now;
      lastSched = cur;
    }, 1).unref();
    setInterval(() => writeFileSync(file, stalls.join("\n")), 2000).unref();
  }
  const sc = await startSidecar(loadSidecarConfig({ ...process.env, ...env }));
  await sc.synced;
  const probe = processProbe(() => {
    const status = sc.status();
    return { spool: status.spool, budgetEntries: status.budget.localEntries, gate: status.responses };
  });
  process.on("message", (m: Msg) => {
    if (probe(m)) return;
    if (m.type === "stop") {
      // bounded: the measurements are done, the spool only needs to be closed cleanly
      void Promise.race([sc.stop(), sleep(8000)]).finally(() => process.exit(0));
    }
  });
  process.send!({ type: "ready", url: sc.url });
}

/**
 * What a proxy process (sidecar or bare) answers the orchestrator: stats (RSS, CPU, event-loop delay, GC
 * pauses by kind, main-thread scheduler waits, plus `extraStats`) and the inspector commands (CPU profile,
 * allocation profile, heap snapshot). Returns a handler: true when it handled the message.
 */
function processProbe(extraStats: () => Record<string, unknown>): (m: Msg) => boolean {
  let maxRss = process.memoryUsage().rss;
  let profiler: import("node:inspector/promises").Session | undefined;
  // What the sidecar's own event loop saw: delay histogram and GC pauses (reset by stats with resetLoop).
  // Off unless BENCH_LOOP_DELAY=1: its 1 ms timer wakes the measured process 1,000 times a second, as
  // many wake-ups as the requests themselves bring at 1,000 rps (more CPU, more chances to wait for a CPU).
  const loop = monitorEventLoopDelay({ resolution: 1 });
  if (process.env.BENCH_LOOP_DELAY === "1") loop.enable();
  let gcPauses: number[] = [];
  let gcKinds: Record<string, { n: number; ms: number; maxMs: number }> = {};
  const kindName: Record<number, string> = { 1: "minor", 2: "major", 4: "incremental", 8: "weakcb" };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gcPauses.push(e.duration);
      if (process.env.BENCH_GC_DUMP) appendFileSync(process.env.BENCH_GC_DUMP, `${(performance.timeOrigin + e.startTime).toFixed(2)} ${e.duration.toFixed(3)}\n`);
      const kind = kindName[(e as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0] ?? "other";
      const k = (gcKinds[kind] ??= { n: 0, ms: 0, maxMs: 0 });
      k.n++;
      k.ms += e.duration;
      k.maxMs = Math.max(k.maxMs, e.duration);
    }
  }).observe({ entryTypes: ["gc"] });
  setInterval(() => {
    maxRss = Math.max(maxRss, process.memoryUsage().rss);
  }, 50).unref();
  return (m: Msg): boolean => {
    if (m.type === "stats") {
      const mem = process.memoryUsage();
      const sorted = [...gcPauses].sort((a, b) => a - b);
      const loopMs = { p50: loop.percentile(50) / 1e6, p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 };
      const gc = { count: sorted.length, totalMs: sorted.reduce((a, b) => a + b, 0), p99Ms: percentile(sorted, 99), maxMs: sorted[sorted.length - 1] ?? 0, kinds: gcKinds };
      // main thread: ns on a CPU, ns waiting for one (runnable but not running), time slices (Linux)
      const sched = (() => {
        try {
          const [run, wait, slices] = readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").trim().split(" ").map(Number);
          return { runMs: run! / 1e6, waitMs: wait! / 1e6, slices: slices! };
        } catch {
          return undefined;
        }
      })();
      process.send!({ id: m.id, type: "stats", rss: mem.rss, heapUsed: mem.heapUsed, heapLimit: getHeapStatistics().heap_size_limit, maxRss, cpu: process.cpuUsage(), loopMs, gc, sched, ...extraStats() });
      if (m.resetPeak) maxRss = mem.rss;
      if (m.resetLoop) {
        loop.reset();
        gcPauses = [];
        gcKinds = {};
      }
    } else if (m.type === "profile-start") {
      void inspect(m, async () => {
        const session = await newInspectorSession();
        await session.post("Profiler.enable");
        await session.post("Profiler.setSamplingInterval", { interval: 200 });
        await session.post("Profiler.start");
        profiler = session;
      });
    } else if (m.type === "heap-start") {
      void inspect(m, async () => {
        const session = await newInspectorSession();
        await session.post("HeapProfiler.enable");
        // live: what is still alive at the end; promoted: what survived a minor GC (alive or collected by a major GC since); else everything allocated
        const sampling = m.live === "promoted" ? { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: false } : m.live ? { samplingInterval: 1024 } : { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true };
        await session.post("HeapProfiler.startSampling", sampling as never);
        profiler = session;
      });
    } else if (m.type === "heap-snapshot") {
      void inspect(m, async () => {
        const session = await newInspectorSession();
        const chunks: string[] = [];
        session.on("HeapProfiler.addHeapSnapshotChunk", (msg) => chunks.push(msg.params.chunk));
        await session.post("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
        session.disconnect();
        writeFileSync(String(m.file), chunks.join(""));
      });
    } else if (m.type === "heap-stop" || m.type === "profile-stop") {
      void inspect(m, async () => {
        const stopped = m.type === "heap-stop" ? profiler!.post("HeapProfiler.stopSampling") : profiler!.post("Profiler.stop");
        const { profile } = (await stopped) as { profile: unknown };
        writeFileSync(String(m.file), JSON.stringify(profile));
      });
    } else return false;
    return true;
  };
}

/** A V8 inspector session on this process (profiles, heap snapshots). */
async function newInspectorSession(): Promise<import("node:inspector/promises").Session> {
  const { Session } = await import("node:inspector/promises");
  const session = new Session();
  session.connect();
  return session;
}

/** Runs one inspector command for the orchestrator and answers it (an error is reported, not thrown). */
async function inspect(m: Msg, work: () => Promise<void>): Promise<void> {
  try {
    await work();
    process.send!({ id: m.id, type: "result", result: true });
  } catch (e) {
    process.send!({ id: m.id, type: "error", error: String(e) });
  }
}

// ───────────────────────────── role: bare (reference) ─────────────────────────────

/**
 * The floor of any Node.js proxy hop on this machine: node:http server + undici pool, headers copied,
 * body streamed through, no governance, no trace. Measured as a reference variant (--bare-too).
 */
function runBare(): void {
  const upstream = new Pool(process.env.BENCH_UPSTREAM ?? "", { connections: 256, keepAliveTimeout: 60_000 });
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      const body = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
      const headers: Record<string, string> = {};
      for (const k in req.headers) if (k !== "host" && k !== "connection" && !k.startsWith("x-service-")) headers[k] = String(req.headers[k]);
      upstream.request({ path: "/v1/chat/completions", method: "POST", headers, body }).then(
        async (up) => {
          const out: Record<string, string | string[]> = {};
          for (const k in up.headers) if (k !== "connection" && k !== "keep-alive" && k !== "transfer-encoding") out[k] = up.headers[k]!;
          res.writeHead(up.statusCode, out);
          for await (const chunk of up.body) res.write(chunk);
          res.end();
        },
        () => res.writeHead(502).end(),
      );
    });
  });
  const probe = processProbe(() => ({}));
  process.on("message", (m: Msg) => {
    if (!probe(m) && m.type === "stop") process.exit(0);
  });
  server.listen(0, "127.0.0.1", () => {
    const addr = server.address();
    process.send!({ type: "ready", url: `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}` });
  });
}

// ───────────────────────────── role: loadgen ─────────────────────────────

interface Targets {
  direct: string;
  sidecar: string;
  /** --ab: a second sidecar, measured in phases interleaved with the first's (diagnostics). */
  sidecarB?: string;
  headers: Record<string, string>;
}

/**
 * The open loop's clock: a thread that sleeps until each send time (Atomics.wait takes fractional
 * milliseconds; libuv timers only whole ones) and tells the load generator's event loop to send.
 * Sleeping, it costs no CPU; the message wakes the event loop within tens of µs, and that lateness is
 * part of every measured latency (they count from the scheduled time), for both targets alike.
 */
function startPacer(): { run(startAbsMs: number, intervalMs: number, count: number, send: (k: number) => void): Promise<void> } {
  const worker = new Worker(
    `const { parentPort } = require("node:worker_threads");
    const cell = new Int32Array(new SharedArrayBuffer(4));
    parentPort.on("message", ({ startAbsMs, intervalMs, count }) => {
      for (let k = 0; k < count; k++) {
        const wait = startAbsMs + k * intervalMs - (performance.timeOrigin + performance.now());
        if (wait > 0) Atomics.wait(cell, 0, 0, wait);
        parentPort.postMessage(k);
      }
    });`,
    { eval: true },
  );
  worker.unref();
  let onTick: ((k: number) => void) | undefined;
  worker.on("message", (k: number) => onTick?.(k));
  return {
    run: (startAbsMs, intervalMs, count, send) =>
      new Promise<void>((resolve) => {
        onTick = (k) => {
          send(k);
          if (k === count - 1) resolve();
        };
        worker.postMessage({ startAbsMs, intervalMs, count });
      }),
  };
}

function runLoadgen(): void {
  dumpGcPauses("loadgen");
  const pacer = startPacer();
  const t = JSON.parse(process.env.BENCH_TARGETS ?? "{}") as Targets;
  const pools = {
    direct: new Pool(t.direct, { connections: 512, keepAliveTimeout: 60_000 }),
    sidecar: new Pool(t.sidecar, { connections: 512, keepAliveTimeout: 60_000 }),
    sidecarB: new Pool(t.sidecarB ?? t.sidecar, { connections: 512, keepAliveTimeout: 60_000 }),
  };
  const paths = { direct: "/v1/chat/completions", sidecar: "/v1/proxy/openai/v1/chat/completions", sidecarB: "/v1/proxy/openai/v1/chat/completions" };
  let counter = 0;
  type Which = keyof typeof pools;

  /** One call; resolves with total ms, ms to headers and to the first body byte, and the sidecar's overhead header. */
  async function call(which: Which, size: number, stream: boolean): Promise<{ ms: number; headersMs: number; firstByteMs: number; overhead: number; ok: boolean }> {
    const body = chatBody(size, counter++, stream);
    const t0 = performance.now();
    const res = await pools[which].request({
      path: paths[which],
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-bench", ...(which === "direct" ? {} : t.headers) },
      body,
    });
    const headersMs = performance.now() - t0;
    let firstByteMs = 0;
    res.body.on("data", () => {
      if (firstByteMs === 0) firstByteMs = performance.now() - t0;
    });
    await new Promise<void>((resolve, reject) => {
      res.body.once("end", resolve);
      res.body.once("error", reject);
    });
    const ms = performance.now() - t0;
    const overhead = Number(res.headers["x-service-overhead-ms"] ?? NaN);
    return { ms, headersMs, firstByteMs, overhead, ok: res.statusCode === 200 };
  }

  // The fixed-rate phases send through plain sockets (support/lean-http.ts): the load generator's
  // CPU is CPU the sidecar may wait for on a small machine. Each body is unique: a template per
  // target and size with a counter written into it, in letters (a run of digits would look like a
  // phone number to the PII scan and set off the redact policy). The request buffers are reused once
  // their answer is in: a fresh 8 KB Buffer per request made the load generator's GC pause for up
  // to 12 ms (external memory), which both targets' latencies then carried.
  const lean = { direct: new LeanPool(t.direct), sidecar: new LeanPool(t.sidecar), sidecarB: new LeanPool(t.sidecarB ?? t.sidecar) };
  const templates = new Map<string, { bytes: Buffer; counterAt: number; free: Buffer[] }>();
  const COUNTER_WIDTH = 7;
  const counterWord = (n: number): string => {
    let w = "";
    for (let i = 0; i < COUNTER_WIDTH; i++, n = Math.floor(n / 26)) w = String.fromCharCode(97 + (n % 26)) + w;
    return w;
  };
  function template(which: Which, size: number) {
    const key = `${which} ${size}`;
    let tpl = templates.get(key);
    if (!tpl) {
      const bytes = requestBytes(
        which === "direct" ? t.direct : which === "sidecar" ? t.sidecar : (t.sidecarB ?? t.sidecar),
        paths[which],
        { "content-type": "application/json", authorization: "Bearer sk-bench", ...(which === "direct" ? {} : t.headers) },
        chatBody(size, counterWord(0), false),
      );
      tpl = { bytes, counterAt: bytes.indexOf(`Request ${counterWord(0)}. `) + "Request ".length, free: [] };
      templates.set(key, tpl);
    }
    return tpl;
  }
  async function leanCall(which: Which, size: number): Promise<{ ms: number; overhead: number; ok: boolean }> {
    const tpl = template(which, size);
    const request = tpl.free.pop() ?? Buffer.from(tpl.bytes);
    request.write(counterWord(counter++), tpl.counterAt, "latin1");
    const t0 = performance.now();
    try {
      const r = await lean[which].request(request);
      return { ms: performance.now() - t0, overhead: r.overheadMs, ok: r.status === 200 };
    } finally {
      tpl.free.push(request); // answered (or failed): the socket holds no reference to it any more
    }
  }

  async function sequential(size: number, n: number, stream: boolean) {
    const out = { direct: [] as number[], sidecar: [] as number[], directTtfb: [] as number[], sidecarTtfb: [] as number[], directHeaders: [] as number[], sidecarHeaders: [] as number[], overheadHeader: [] as number[], errors: 0 };
    for (let i = 0; i < n; i++) {
      // alternate the order so neither target always goes first
      for (const which of i % 2 === 0 ? (["direct", "sidecar"] as const) : (["sidecar", "direct"] as const)) {
        const r = await call(which, size, stream);
        if (!r.ok) out.errors++;
        out[which].push(r.ms);
        (which === "direct" ? out.directTtfb : out.sidecarTtfb).push(r.firstByteMs);
        (which === "direct" ? out.directHeaders : out.sidecarHeaders).push(r.headersMs);
        if (which === "sidecar") out.overheadHeader.push(r.overhead);
      }
    }
    return out;
  }

  /**
   * Open loop: `rps` requests per second, alternating 1-second phases direct/sidecar; latency from each
   * request's scheduled time. The send times come from a pacer thread (below), one request every
   * 1000/rps ms as vegeta sends them: a setTimeout loop ticks every ~1.1 ms here, so it sent about a
   * quarter of the requests in pairs and measured the second of each pair queueing behind the first.
   */
  async function openLoop(size: number, rps: number, phases: number) {
    if (RATE_CLIENT) return openLoopC(RATE_CLIENT, size, rps, phases);
    const out = { direct: [] as number[], sidecar: [] as number[], sidecarB: [] as number[], overheadHeader: [] as number[], errors: 0, sent: { direct: 0, sidecar: 0, sidecarB: 0 }, lateSends: 0 };
    const pending = new Set<Promise<void>>();
    const intervalMs = 1000 / rps;
    const slowDump: string[] = [];
    // with a second sidecar (--ab): direct, A, direct, B, ... so that both meet the same machine
    const cycle: Which[] = t.sidecarB ? ["direct", "sidecar", "direct", "sidecarB"] : ["direct", "sidecar"];
    for (let phase = 0; phase < phases * 2; phase++) {
      const which: Which = cycle[phase % cycle.length]!;
      const start = performance.now() + 2;
      await pacer.run(performance.timeOrigin + start, intervalMs, rps, (k) => {
        const scheduled = start + k * intervalMs;
        if (performance.now() - scheduled > 5) out.lateSends++;
        out.sent[which]++;
        const p = leanCall(which, size).then(
          (r) => {
            if (!r.ok) out.errors++;
            out[which].push(performance.now() - scheduled);
            if (which === "sidecar") out.overheadHeader.push(r.overhead);
            if (process.env.BENCH_SLOW_DUMP) slowDump.push(`${which} ${phase} ${k} ${(performance.now() - scheduled).toFixed(3)} ${r.overhead} ${(performance.timeOrigin + scheduled).toFixed(2)}`);
          },
          () => {
            out.errors++;
          },
        );
        pending.add(p);
        void p.finally(() => pending.delete(p));
      });
      await Promise.all(pending); // the next phase starts once this one's requests are answered
    }
    if (process.env.BENCH_SLOW_DUMP) writeFileSync(process.env.BENCH_SLOW_DUMP, slowDump.join("\n"));
    return out;
  }

  /**
   * The same open loop, sent by support/rate-client.c (compiled by the orchestrator when gcc is there):
   * one C thread instead of this process's event loop and pacer thread, so the load generator's CPU and
   * GC pauses stop competing with the targets for the two cores. Same templates, same phases and cycle,
   * same counting from the scheduled time; this process only waits for its output.
   */
  async function openLoopC(binary: string, size: number, rps: number, phases: number) {
    const out = { direct: [] as number[], sidecar: [] as number[], sidecarB: [] as number[], overheadHeader: [] as number[], errors: 0, sent: { direct: 0, sidecar: 0, sidecarB: 0 }, lateSends: 0, clientCpuMs: 0 };
    const cycle: Which[] = t.sidecarB ? ["direct", "sidecar", "direct", "sidecarB"] : ["direct", "sidecar"];
    const names = [...new Set(cycle)];
    const dir = mkdtempSync(join(os.tmpdir(), "agentgov-bench-rate-"));
    const targetArgs = names.flatMap((which) => {
      const tpl = template(which, size);
      const file = join(dir, `${which}.http`);
      writeFileSync(file, tpl.bytes);
      const url = new URL(which === "direct" ? t.direct : which === "sidecar" ? t.sidecar : (t.sidecarB ?? t.sidecar));
      return [url.hostname, url.port, file, String(tpl.counterAt)];
    });
    const argv = [String(rps), String(rps), String(phases * 2), cycle.map((w) => names.indexOf(w)).join(","), ...targetArgs];
    const child = spawn(PIN ? "taskset" : binary, [...(PIN ? ["-c", OTHER_CPUS, binary] : []), ...argv], { stdio: ["ignore", "pipe", "inherit"] });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (b: Buffer) => chunks.push(b));
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    rmSync(dir, { recursive: true, force: true });
    if (code !== 0) throw new Error(`rate-client exited with ${code}`);
    const slowDump: string[] = [];
    for (const line of Buffer.concat(chunks).toString("latin1").split("\n")) {
      if (line === "") continue;
      const f = line.split(" ");
      if (f[0] === "late" || f[0] === "cpu") {
        if (f[0] === "late") out.lateSends = Number(f[1]);
        else out.clientCpuMs = Number(f[1]);
        continue;
      }
      const phase = Number(f[0]);
      const which = cycle[phase % cycle.length]!;
      const [ms, overhead, status] = [Number(f[2]), Number(f[3]), Number(f[4])];
      out.sent[which]++;
      if (status !== 200) out.errors++;
      if (status === 0) continue; // a connection error: no latency to count
      out[which].push(ms);
      if (which === "sidecar") out.overheadHeader.push(overhead);
      if (process.env.BENCH_SLOW_DUMP) slowDump.push(`${which} ${phase} ${f[1]} ${ms.toFixed(3)} ${overhead} ${f[5]}`);
    }
    if (process.env.BENCH_SLOW_DUMP) writeFileSync(process.env.BENCH_SLOW_DUMP, slowDump.join("\n"));
    return out;
  }

  /** Closed loop: `concurrency` callers back to back for `ms`; throughput and latencies. */
  async function closedLoop(which: Which, size: number, concurrency: number, ms: number) {
    const lat: number[] = [];
    let errors = 0;
    const end = performance.now() + ms;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < end) {
          try {
            const r = await leanCall(which, size);
            if (!r.ok) errors++;
            lat.push(r.ms);
          } catch {
            errors++;
          }
        }
      }),
    );
    const elapsed = performance.now() - t0;
    return { rps: (lat.length / elapsed) * 1000, lat, errors };
  }

  process.on("message", (m: Msg) => {
    const reply = (result: unknown) => process.send!({ id: m.id, type: "result", result });
    const fail = (e: unknown) => process.send!({ id: m.id, type: "error", error: String(e) });
    if (m.type === "sequential") sequential(m.size as number, m.n as number, m.stream as boolean).then(reply, fail);
    else if (m.type === "openLoop") openLoop(m.size as number, m.rps as number, m.phases as number).then(reply, fail);
    else if (m.type === "closedLoop") closedLoop(m.which as Which, m.size as number, m.concurrency as number, m.ms as number).then(reply, fail);
    else if (m.type === "exit") process.exit(0);
  });
  process.send!({ type: "ready" });
}

// ───────────────────────────── role: main ─────────────────────────────

/** Every child process started, killed when the benchmark fails. */
const spawned: ChildProcess[] = [];

class Child {
  private seq = 0;
  private readonly waiting = new Map<number, (m: Msg) => void>();
  readonly ready: Promise<Msg>;
  constructor(readonly proc: ChildProcess) {
    spawned.push(proc);
    this.ready = new Promise((resolve, reject) => {
      proc.once("exit", (code) => reject(new Error(`child exited with ${code}`)));
      proc.on("message", (m: Msg) => {
        if (m.type === "ready") resolve(m);
        else if (m.id !== undefined) this.waiting.get(m.id)?.(m);
      });
    });
  }
  ask<T>(msg: Msg): Promise<T> {
    const id = ++this.seq;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, (m) => {
        this.waiting.delete(id);
        if (m.type === "error") reject(new Error(String(m.error)));
        else resolve((m.result ?? m) as T);
      });
      this.proc.send({ ...msg, id });
    });
  }
}

/** CPU time (user + system, ms) a process has used so far (Linux /proc). */
function procCpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime, stime in clock ticks (100 Hz)
  } catch {
    return NaN;
  }
}

/** The V8 flags the sidecar image's entry point gives node (deploy/docker/sidecar.Dockerfile), so the benchmark runs the sidecar as shipped. */
function sidecarImageNodeFlags(): string[] {
  const line = readFileSync(join(REPO, "deploy/docker/sidecar.Dockerfile"), "utf8").split("\n").find((l) => l.startsWith("ENTRYPOINT "));
  const args = line ? (JSON.parse(line.slice("ENTRYPOINT ".length)) as string[]) : [];
  return args.slice(1, Math.max(1, args.indexOf("--import"))).filter((a) => a.startsWith("--") && a !== "--import");
}

/** --pin: the sidecar gets the last CPU to itself; the load generator, the upstream, the stub control plane and wrk share the others. */
const PIN = args.pin === true;
const SIDECAR_CPU = String(os.cpus().length - 1);
const OTHER_CPUS = os.cpus().length > 1 ? `0-${os.cpus().length - 2}` : "0";
/**
 * The C fixed-rate load generator (support/rate-client.c), compiled once by the orchestrator into a
 * temporary directory when gcc is installed (`apt-get install -y gcc`), and named to the load generator
 * in BENCH_RATE_CLIENT; without gcc, or with BENCH_NODE_LOADGEN=1, the node open loop is used instead.
 */
const RATE_CLIENT = process.env.BENCH_RATE_CLIENT || undefined;
/** Whether this run's fixed-rate phases were sent by the C program (set by main, read by the report). */
let RATE_CLIENT_USED = false;
function compileRateClient(): string | undefined {
  if (process.env.BENCH_NODE_LOADGEN === "1") return undefined;
  const out = join(mkdtempSync(join(os.tmpdir(), "agentgov-bench-cc-")), "rate-client");
  const r = spawnSync("gcc", ["-O2", "-o", out, join(REPO, "bench/support/rate-client.c"), "-lm"], { encoding: "utf8" });
  if (r.status === 0) return out;
  process.stdout.write(`rate-client.c not compiled (${r.error?.message ?? r.stderr.trim()}): the node load generator sends the fixed-rate phases\n`);
  return undefined;
}

/** Sets the CPU affinity of every thread of `pid` (taskset -a), when --pin is on. */
function pinProcess(pid: number | undefined, cpus: string): void {
  if (!PIN || pid === undefined) return;
  const r = spawnSync("taskset", ["-a", "-cp", cpus, String(pid)], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`--pin: taskset failed: ${r.stderr || r.error?.message}`);
}

/**
 * Node flags of the benchmark's own processes: the load generator, the upstream and this one (the stub
 * control plane), which it re-executes with them (BENCH_FIXTURE_EXEC_ARGV replaces them; "" = none).
 * By default each of them runs its GC on its own main thread (--single-threaded-gc) and without V8's
 * memory reducer. Otherwise their GCs woke four helper threads each, and the memory reducer started
 * full GCs in the quiet upstream every few seconds: a CPU trace (perf sched) of the slowest sidecar
 * requests showed those helpers holding both cores for 4-15 ms while the sidecar waited for one. A C
 * load generator and a remote provider would not run there at all (docs/decisions.md, "Why the
 * fixed-rate p99 stays above 2 ms").
 */
const FIXTURE_NODE_FLAGS = process.env.BENCH_FIXTURE_EXEC_ARGV !== undefined ? process.env.BENCH_FIXTURE_EXEC_ARGV.split(" ").filter(Boolean) : ["--single-threaded-gc", "--no-memory-reducer"];

/** A child process running this file in one role; the sidecar loads TypeScript as the CLI and the images do (bin/typescript/), with the image's node flags. */
/** Node flags from an environment variable (space-separated), for the diagnostics. */
const envFlags = (name: string): string[] => process.env[name]?.split(" ").filter(Boolean) ?? [];
/** Sidecar settings from an environment variable holding a JSON object, for the diagnostics. */
const envSettings = (name: string): Record<string, string> => (process.env[name] ? (JSON.parse(process.env[name]) as Record<string, string>) : {});

function spawnRole(role: string, env: Record<string, string>, execArgv: string[] = [], execPath?: string): Child {
  const loader = role === "sidecar" ? "./bin/typescript/register.js" : "tsx";
  const flags = role === "sidecar" ? sidecarImageNodeFlags() : role === "bare" ? [] : FIXTURE_NODE_FLAGS;
  const child = new Child(fork(HERE, ["--role", role], { cwd: REPO, execArgv: [...flags, "--import", loader, ...execArgv], env: { ...process.env, ...env }, stdio: ["ignore", "inherit", "inherit", "ipc"], ...(execPath ? { execPath } : {}) }));
  // Threads the child starts later (the spool's, libuv's pool) inherit the affinity of the thread that starts them.
  pinProcess(child.proc.pid, role === "sidecar" || role === "bare" ? SIDECAR_CPU : OTHER_CPUS);
  return child;
}

/**
 * cost_usd (field 30, a double) of an encoded governance.v1.Trace, read from the wire: the stub shares
 * the two cores with the sidecar, and a full fromBinary of every 8 KB trace cost it ~100 µs per request,
 * in bursts every shipper batch (a real control plane runs elsewhere).
 */
function costUsdOf(b: Uint8Array): number {
  let cost = 0;
  const ok = walkFields(b, (field, wire, at) => {
    if (field !== 30 || wire !== 1) return false;
    cost = new DataView(b.buffer, b.byteOffset + at, 8).getFloat64(0, true);
    return true;
  });
  if (!ok) throw new Error("bench stub: an uploaded trace does not parse");
  return cost;
}

/** A stub control plane: Sync sends one snapshot (then heartbeats); Ingest acknowledges every batch. */
async function startStubControlPlane(key: string): Promise<{ url: string; tenantId: string; agentId: string; close(): void }> {
  const tenantId = "ten_bench";
  const agentId = "agt_01BENCH0000000000000000000";
  const pol = (id: string, name: string, action: string, priority: number, conditions: Record<string, unknown>) =>
    create(PolicySchema, { id, name, status: "active", action, priority, agentIds: [], conditions: create(PolicyConditionsSchema, { direction: "inbound", piiTypes: [], models: [], keywords: [], ...conditions }) });
  const snapshot = create(SnapshotSchema, {
    tenantId,
    agents: [create(AgentSchema, { id: agentId, name: "bench", status: "active", provider: "openai", model: "gpt-4o-mini", environment: "bench", rateLimit: 1_000_000, budgetLimitDaily: 1_000_000, hasBudget: true, piiDetection: true })],
    policies: [
      pol("pol_01BENCH000000000000000000A", "block SSN and cards", "block", 1, { direction: "inbound", piiTypes: ["ssn", "credit_card"] }),
      pol("pol_01BENCH000000000000000000B", "redact email and phone", "redact", 2, { direction: "both", piiTypes: ["email", "phone"] }),
      pol("pol_01BENCH000000000000000000C", "log IP and IBAN", "log", 3, { direction: "both", piiTypes: ["ip_address", "iban"] }),
      pol("pol_01BENCH000000000000000000D", "block prompt injection", "block", 4, { direction: "inbound", injectionScoreGte: 0.8 }),
    ],
    keys: [create(ApiKeySchema, { id: "key_01BENCH0000000000000000000", keyHash: createHash("sha256").update(key).digest("hex"), scope: "ingest", userId: "usr_bench" })],
    spend: [],
  });
  // Spend: like the real control plane, the stub adds up the cost of the traces it acknowledges and
  // sends the agent's figure for the day over Sync after each batch, so the sidecar's budget ledger
  // retires its local entries as it does in production (without this they would pile up all day).
  let spentUsd = 0;
  let spendVersion = 1n;
  let wakeWatch: (() => void) | undefined;
  const routes = (router: ConnectRouter) => {
    router.service(SyncService, {
      async *watch(_req, ctx) {
        yield create(WatchResponseSchema, { version: 1n, kind: { case: "snapshot", value: snapshot } });
        let sent = spentUsd;
        while (!ctx.signal.aborted) {
          await new Promise<void>((r) => {
            const t = setTimeout(r, 10_000);
            wakeWatch = () => {
              clearTimeout(t);
              r();
            };
          });
          if (spentUsd !== sent) {
            sent = spentUsd;
            const day = new Date().toISOString().slice(0, 10);
            yield create(WatchResponseSchema, { version: ++spendVersion, kind: { case: "delta", value: create(DeltaSchema, { spend: [create(AgentSpendSchema, { agentId, day, spentUsd: sent })] }) } });
          } else {
            yield create(WatchResponseSchema, { version: spendVersion, kind: { case: "heartbeat", value: create(HeartbeatSchema, { serverTimeMs: BigInt(Date.now()) }) } });
          }
        }
      },
    });
    router.service(IngestService, {
      async *upload(requests: AsyncIterable<UploadRequest>) {
        for await (const req of requests) {
          const ids = [...req.traces.map((t) => t.id), ...req.encodedTraces.map((b) => traceKeyFields(b)?.id ?? "")];
          for (const b of req.encodedTraces) spentUsd += costUsdOf(b);
          yield create(UploadResponseSchema, { batchId: req.batchId, ackedTraceIds: ids, rejected: [] });
          wakeWatch?.();
        }
      },
    });
  };
  const server = http2.createServer(connectNodeAdapter({ routes, grpc: true, grpcWeb: false, connect: false }));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const addr = server.address();
  return { url: `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`, tenantId, agentId, close: () => server.close() };
}

interface SidecarStats {
  /** Sidecar only (absent for the bare proxy). */
  gate?: { heldP50Ms: number; heldP99Ms: number; heldMaxMs: number };
  budgetEntries?: number;
  spool?: { depth: number; highWaterDepth: number; commits: number };
  sched?: { runMs: number; waitMs: number; slices: number };
  loopMs: { p50: number; p99: number; max: number };
  gc: { count: number; totalMs: number; p99Ms: number; maxMs: number; kinds: Record<string, { n: number; ms: number; maxMs: number }> };
  rss: number;
  heapUsed: number;
  /** V8's heap size limit (under a memory cgroup, node sizes it from the group's limit). */
  heapLimit?: number;
  maxRss: number;
  cpu: { user: number; system: number };
}

/** What the variant's memory cgroup saw (printed and returned); the group is removed once its sidecar has exited. */
async function closeCgroup(variant: string, cgroup: MemoryCgroup, sidecar: Child, heapLimit: number | undefined): Promise<Record<string, unknown>> {
  if (sidecar.proc.exitCode === null && sidecar.proc.signalCode === null) await new Promise((r) => sidecar.proc.once("exit", r));
  const { peakBytes, limitHits, oomKills } = cgroup.stats();
  const seen = { limitMiB: MEMORY_LIMIT_MIB, cgroupVersion: cgroup.version, heapLimitMiB: mib(heapLimit ?? NaN), peakMiB: mib(peakBytes), limitHits, oomKills };
  process.stdout.write(`[${variant}] memory cgroup (v${cgroup.version}, limit ${MEMORY_LIMIT_MIB} MiB): ${JSON.stringify(seen)}\n`);
  cgroup.remove();
  return seen;
}

async function main(): Promise<void> {
  hiccups = await measureHiccups(5000);
  process.stdout.write(`machine hiccups: ${hiccups}\n`);
  const rateClient = compileRateClient();
  RATE_CLIENT_USED = rateClient !== undefined;
  pinProcess(process.pid, OTHER_CPUS); // the stub control plane
  const { generateApiKey } = await import("../control-plane/src/domain/api-keys.js");
  const key = generateApiKey("ingest");
  const cp = await startStubControlPlane(key);
  const upstream = spawnRole("upstream", {});
  const upstreamUrl = String((await upstream.ready).url);

  const results: Record<string, unknown> = {};
  const variants: { name: string; env: Record<string, string>; role?: string }[] = [{ name: "default", env: {} }];
  if (args["gate-off-too"]) variants.push({ name: "gate-off", env: { SPOOL_COMMIT_WAIT_MS: "0" } });
  if (args["fsync-too"]) variants.push({ name: "gate-fsync", env: { SPOOL_GATE: "fsync", SPOOL_FSYNC_INTERVAL_MS: "0" } });
  if (args["bare-too"]) variants.push({ name: "bare-proxy", env: {}, role: "bare" });

  for (const variant of variants) {
    const dataDir = mkdtempSync(join(os.tmpdir(), "agentgov-bench-proxy-"));
    const sidecarEnv = {
      DATA_DIR: dataDir,
      SIDECAR_PORT: "0",
      SIDECAR_KEY: key,
      CONTROL_PLANE_GRPC_URL: cp.url,
      PROVIDER_OPENAI_URL: upstreamUrl,
      LOG_LEVEL: "warn",
      ...variant.env,
      // BENCH_SIDECAR_CONFIG='{"SPOOL_FSYNC_INTERVAL_MS":"100"}': sidecar settings to try (diagnostics)
      ...envSettings("BENCH_SIDECAR_CONFIG"),
    };
    const cgroup = MEMORY_LIMIT_MIB ? createMemoryCgroup(`agentgov-bench-${process.pid}-${variant.name}`, MEMORY_LIMIT_MIB, dataDir, process.execPath) : undefined;
    const sidecar = spawnRole(variant.role ?? "sidecar", { BENCH_SIDECAR_ENV: JSON.stringify(sidecarEnv), BENCH_UPSTREAM: upstreamUrl }, envFlags("BENCH_SIDECAR_EXEC_ARGV"), cgroup?.wrapper);
    const sidecarUrl = String((await sidecar.ready).url);
    // --ab (with --rate-only): a second sidecar B with BENCH_AB_EXEC_ARGV / BENCH_AB_CONFIG on top of the
    // first's settings, its fixed-rate phases interleaved with A's (direct, A, direct, B, ...), so that a
    // setting is compared under the same machine conditions (run-to-run spread here is ±0.4 ms at p99).
    const dataDirB = args.ab && args["rate-only"] ? mkdtempSync(join(os.tmpdir(), "agentgov-bench-proxy-b-")) : undefined;
    const sidecarB = dataDirB
      ? spawnRole("sidecar", { BENCH_SIDECAR_ENV: JSON.stringify({ ...sidecarEnv, DATA_DIR: dataDirB, ...envSettings("BENCH_AB_CONFIG") }), BENCH_UPSTREAM: upstreamUrl }, envFlags("BENCH_AB_EXEC_ARGV"))
      : undefined;
    const sidecarBUrl = sidecarB ? String((await sidecarB.ready).url) : undefined;
    const loadgen = spawnRole("loadgen", { ...(rateClient ? { BENCH_RATE_CLIENT: rateClient } : {}), BENCH_TARGETS: JSON.stringify({ direct: upstreamUrl, sidecar: sidecarUrl, ...(sidecarBUrl ? { sidecarB: sidecarBUrl } : {}), headers: { "x-service-key": key, "x-service-agent": cp.agentId } } satisfies Targets) });
    await loadgen.ready;
    const stats = () => sidecar.ask<SidecarStats>({ type: "stats" });
    const idle = await stats();
    const out: Record<string, unknown> = { rssIdleMiB: mib(idle.rss) };
    process.stdout.write(`\n[${variant.name}] sidecar ${sidecarUrl}, upstream ${upstreamUrl}, idle RSS ${mib(idle.rss)} MiB\n`);

    // warm-up (JIT, pools, spool segments)
    await loadgen.ask({ type: "sequential", size: 1024, n: QUICK ? 300 : 1500, stream: false });
    await loadgen.ask({ type: "sequential", size: 8192, n: QUICK ? 100 : 500, stream: true });
    if (args["rate-only"]) {
      const rps = Number(args["rate-only"]);
      const size = Number(args.size ?? 1024);
      type Open = { direct: number[]; sidecar: number[]; sidecarB: number[]; overheadHeader: number[]; errors: number; sent: { direct: number; sidecar: number }; lateSends: number; clientCpuMs?: number };
      if (sidecarB) {
        // B's warm-up: as many calls as A's, sequential then concurrent
        await loadgen.ask({ type: "closedLoop", which: "sidecarB", size, concurrency: 1, ms: 4000 });
        await loadgen.ask({ type: "closedLoop", which: "sidecarB", size, concurrency: 32, ms: 3000 });
      }
      {
        const b = await stats();
        await loadgen.ask({ type: "sequential", size, n: 2000, stream: false });
        const a = await stats();
        const c = await loadgen.ask<{ lat: number[] }>({ type: "closedLoop", which: "sidecar", size, concurrency: 32, ms: 3000 });
        const a2 = await stats();
        const us = (x: SidecarStats, y: SidecarStats, n: number) => ((y.cpu.user + y.cpu.system - x.cpu.user - x.cpu.system) / n).toFixed(0);
        process.stdout.write(`[${variant.name}] CPU per request: sequential ${us(b, a, 2000)} µs, closed loop c=32 ${us(a, a2, c.lat.length)} µs\n`);
      }
      if (process.env.BENCH_PRELUDE) {
        // what the full run does before its 1 KB fixed-rate phases (BENCH_PRELUDE=json,stream,200)
        const steps = process.env.BENCH_PRELUDE.split(",");
        if (steps.includes("json")) await loadgen.ask({ type: "sequential", size: 1024, n: 3000, stream: false });
        if (steps.includes("stream")) await loadgen.ask({ type: "sequential", size: 1024, n: 1500, stream: true });
        if (steps.includes("200")) await loadgen.ask({ type: "openLoop", size: 1024, rps: 200, phases: 10 });
      }
      await sidecar.ask({ type: "stats", resetLoop: true });
      await sidecarB?.ask({ type: "stats", resetLoop: true }); // its GC pauses too are counted from here
      if (args.profile) await sidecar.ask({ type: "profile-start" });
      if (args["heap-profile"]) await sidecar.ask({ type: "heap-start", live: process.env.BENCH_HEAP_LIVE === "promoted" ? "promoted" : process.env.BENCH_HEAP_LIVE === "1" });
      const before = await stats();
      const othersBefore = [loadgen, upstream].map((c) => procCpuMs(c.proc.pid)).concat(procCpuMs(process.pid));
      // BENCH_HEAP_SNAPSHOT_AT=<s>: a heap snapshot of the sidecar that many seconds into the run (diagnostics)
      const snapAt = Number(process.env.BENCH_HEAP_SNAPSHOT_AT ?? 0);
      if (snapAt > 0) setTimeout(() => void sidecar.ask({ type: "heap-snapshot", file: `/tmp/sidecar-${variant.name}.heapsnapshot` }), snapAt * 1000);
      const o = await loadgen.ask<Open>({ type: "openLoop", size, rps, phases: Number(args.phases ?? 10) });
      const after = await stats();
      const others = [loadgen, upstream].map((c) => procCpuMs(c.proc.pid)).concat(procCpuMs(process.pid)).map((v, i) => v - othersBefore[i]!);
      process.stdout.write(`  CPU during the run (ms): loadgen ${others[0]! + Math.round(o.clientCpuMs ?? 0)}${o.clientCpuMs === undefined ? "" : " (C rate client)"}, upstream ${others[1]}, stub control plane ${others[2]}, sidecar ${Math.round((after.cpu.user + after.cpu.system - before.cpu.user - before.cpu.system) / 1000)}\n`);
      if (args["heap-profile"]) await sidecar.ask({ type: "heap-stop", file: `${args["heap-profile"]}.${variant.name}` });
      if (args.profile) {
        await sidecar.ask({ type: "profile-stop", file: `${args.profile}.${variant.name}` });
        for (const c of profileCategories(`${args.profile}.${variant.name}`, o.sidecar.length)) process.stdout.write(`  ${c.category}: ${c.usPerRequest} µs/request\n`);
      }
      if (sidecarB) {
        const b = added(o.direct, o.sidecarB);
        const bs = await sidecarB.ask<SidecarStats>({ type: "stats" });
        process.stdout.write(`[B: ${process.env.BENCH_AB_EXEC_ARGV ?? ""} ${process.env.BENCH_AB_CONFIG ?? ""}] ${size} B ${rps} rps: added p50 ${b.addedP50} p99 ${b.addedP99} (sidecar p50 ${b.sidecar.p50} p99 ${b.sidecar.p99} max ${b.sidecar.max}); GC ${bs.gc.count} pauses, ${bs.gc.totalMs.toFixed(0)} ms total, p99 ${bs.gc.p99Ms.toFixed(2)} max ${bs.gc.maxMs.toFixed(2)} ms\n`);
        sidecarB.proc.kill("SIGKILL");
        rmSync(dataDirB!, { recursive: true, force: true });
      }
      const a = added(o.direct, o.sidecar);
      const cpuUs = ((after.cpu.user + after.cpu.system - before.cpu.user - before.cpu.system) / o.sidecar.length);
      const selfReported = o.overheadHeader.filter(Number.isFinite).sort((x, y) => x - y);
      process.stdout.write(`[${variant.name}] ${size} B ${rps} rps: added p50 ${a.addedP50} p99 ${a.addedP99} (direct p50 ${a.direct.p50} p99 ${a.direct.p99}; sidecar p50 ${a.sidecar.p50} p99 ${a.sidecar.p99} max ${a.sidecar.max}) errors ${o.errors};${selfReported.length ? ` X-Service-Overhead-Ms p50 ${percentile(selfReported, 50)} p99 ${percentile(selfReported, 99)};` : ""} ${process.env.BENCH_LOOP_DELAY === "1" ? `sidecar loop delay p50 ${after.loopMs.p50.toFixed(2)} p99 ${after.loopMs.p99.toFixed(2)} max ${after.loopMs.max.toFixed(2)} ms; ` : ""}GC ${after.gc.count} pauses, ${after.gc.totalMs.toFixed(0)} ms total, p99 ${after.gc.p99Ms.toFixed(2)} max ${after.gc.maxMs.toFixed(2)} ms (${Object.entries(after.gc.kinds).map(([k, v]) => `${k} ${v.n}× ${v.ms.toFixed(0)} ms max ${v.maxMs.toFixed(1)}`).join(", ")}); ~${cpuUs.toFixed(0)} µs CPU/sidecar request incl. idle work; ${after.gate && after.spool && before.spool ? `budget entries ${after.budgetEntries}; gate held p50 ${after.gate.heldP50Ms} p99 ${after.gate.heldP99Ms} max ${after.gate.heldMaxMs} ms; spool depth ${after.spool.depth} (high ${after.spool.highWaterDepth}, commits ${after.spool.commits - before.spool.commits}); ` : ""}peak RSS ${(after.maxRss / 1048576).toFixed(0)} MiB; main thread ran ${(after.sched!.runMs - before.sched!.runMs).toFixed(0)} ms, waited for a CPU ${(after.sched!.waitMs - before.sched!.waitMs).toFixed(0)} ms in ${after.sched!.slices - before.sched!.slices} slices\n`);
      for (const c of [sidecar, loadgen]) c.proc.kill("SIGKILL");
      if (cgroup) await closeCgroup(variant.name, cgroup, sidecar, after.heapLimit);
      rmSync(dataDir, { recursive: true, force: true });
      continue;
    }
    if (args.profile) {
      await sidecar.ask({ type: "profile-start" });
      for (const size of [1024, 8192]) {
        const r = await loadgen.ask<{ rps: number }>({ type: "closedLoop", which: "sidecar", size, concurrency: 32, ms: 8000 });
        process.stdout.write(`profile: ${size} B closed loop c=32: ${Math.round(r.rps)} rps\n`);
      }
      await sidecar.ask({ type: "profile-stop", file: args.profile });
      process.stdout.write(`wrote ${args.profile}\n`);
      for (const c of [sidecar, upstream, loadgen]) c.proc.kill("SIGKILL");
      if (cgroup) await closeCgroup(variant.name, cgroup, sidecar, undefined);
      process.exit(0);
    }

    for (const size of [1024, 8192]) {
      const label = `${size / 1024}KB`;
      const seqN = QUICK ? 400 : 3000;
      type Seq = { direct: number[]; sidecar: number[]; directTtfb: number[]; sidecarTtfb: number[]; directHeaders: number[]; sidecarHeaders: number[]; overheadHeader: number[]; errors: number };
      const seq = await loadgen.ask<Seq>({ type: "sequential", size, n: seqN, stream: false });
      const seqStream = await loadgen.ask<Seq>({ type: "sequential", size, n: Math.round(seqN / 2), stream: true });
      const sequential = added(seq.direct, seq.sidecar);
      const ttfb = added(seqStream.directTtfb, seqStream.sidecarTtfb);
      const ttfh = added(seqStream.directHeaders, seqStream.sidecarHeaders);
      process.stdout.write(`[${variant.name}] ${label} sequential: added p50 ${sequential.addedP50} ms, p99 ${sequential.addedP99} ms; stream first body byte added p50 ${ttfb.addedP50} ms, p99 ${ttfb.addedP99} ms, headers added p50 ${ttfh.addedP50} ms, p99 ${ttfh.addedP99} ms; overhead header p50 ${dist(seq.overheadHeader).p50} ms (streams ${dist(seqStream.overheadHeader).p50} ms)\n`);
      if (args["seq-only"]) continue;

      const rates: Record<string, unknown> = {};
      for (const rps of [200, 1000]) {
        type Open = { direct: number[]; sidecar: number[]; errors: number; sent: { direct: number; sidecar: number }; lateSends: number };
        const repeats: (ReturnType<typeof added> & { errors: number; sent: Open["sent"]; lateSends: number })[] = [];
        for (let i = 0; i < (rps === 1000 ? REPEATS_AT_1000 : 1); i++) {
          const o = await loadgen.ask<Open>({ type: "openLoop", size, rps, phases: QUICK ? 3 : rps === 1000 ? 20 : 10 });
          const a = { ...added(o.direct, o.sidecar), errors: o.errors, sent: o.sent, lateSends: o.lateSends };
          repeats.push(a);
          process.stdout.write(`[${variant.name}] ${label} ${rps} rps${rps === 1000 && REPEATS_AT_1000 > 1 ? ` (measure ${i + 1})` : ""}: added p50 ${a.addedP50} ms, p99 ${a.addedP99} ms, errors ${o.errors}\n`);
        }
        // the measure with the median added p99 (its own p50 and distributions), and every measure's figures
        const median = [...repeats].sort((x, y) => x.addedP99 - y.addedP99)[Math.floor((repeats.length - 1) / 2)]!;
        rates[String(rps)] = repeats.length > 1 ? { ...median, repeats: repeats.map((r) => ({ addedP50: r.addedP50, addedP99: r.addedP99 })) } : median;
      }

      // Max throughput: closed loop at rising concurrency, sidecar then direct at the same concurrency
      // (wrk when installed: a C load generator leaves more of the two cores to the sidecar).
      const closed: Record<string, unknown>[] = [];
      let best = { concurrency: 0, rps: 0 };
      await sidecar.ask({ type: "stats", resetPeak: true });
      const ms = QUICK ? 3000 : 6000;
      for (const concurrency of QUICK ? [32] : [8, 32, 128]) {
        const before = await stats();
        const s = await closedLoopRun(loadgen, "sidecar", { sidecarUrl, upstreamUrl, key, agentId: cp.agentId, dir: dataDir }, size, concurrency, ms);
        const after = await stats();
        const d = await closedLoopRun(loadgen, "direct", { sidecarUrl, upstreamUrl, key, agentId: cp.agentId, dir: dataDir }, size, concurrency, ms);
        const cpuMs = (after.cpu.user + after.cpu.system - before.cpu.user - before.cpu.system) / 1000;
        const row = {
          concurrency,
          tool: s.tool,
          sidecarRps: Math.round(s.rps),
          directRps: Math.round(d.rps),
          sidecarCpuPercentOfOneCore: Math.round((cpuMs / ms) * 100),
          sidecar: s.latency,
          direct: d.latency,
          addedP50: r3(s.latency.p50 - d.latency.p50),
          addedP99: r3(s.latency.p99 - d.latency.p99),
          errors: s.errors + d.errors,
        };
        closed.push(row);
        if (row.sidecarRps > best.rps) best = { concurrency, rps: row.sidecarRps };
        process.stdout.write(`[${variant.name}] ${label} closed loop (${s.tool}) c=${concurrency}: sidecar ${row.sidecarRps} rps (cpu ${row.sidecarCpuPercentOfOneCore}%), direct ${row.directRps} rps, added p50 ${row.addedP50} ms, p99 ${row.addedP99} ms, errors ${row.errors}\n`);
      }
      const peak = await stats();
      // "Max RPS" latency: open loop at 90% of the best closed-loop sidecar throughput.
      const maxRate = Math.max(100, Math.floor(best.rps * 0.9 / 50) * 50);
      type Open = { direct: number[]; sidecar: number[]; errors: number; sent: { direct: number; sidecar: number }; lateSends: number };
      const om = await loadgen.ask<Open>({ type: "openLoop", size, rps: maxRate, phases: QUICK ? 2 : 6 });
      rates[`max:${maxRate}`] = { ...added(om.direct, om.sidecar), errors: om.errors, sent: om.sent, lateSends: om.lateSends };
      process.stdout.write(`[${variant.name}] ${label} ${maxRate} rps (≈ max): added p50 ${(rates[`max:${maxRate}`] as { addedP50: number }).addedP50} ms, p99 ${(rates[`max:${maxRate}`] as { addedP99: number }).addedP99} ms\n`);

      out[label] = {
        sequential: { ...sequential, overheadHeader: dist(seq.overheadHeader.filter(Number.isFinite)), errors: seq.errors },
        streamTtfb: { ...ttfb, errors: seqStream.errors },
        streamTimeToHeaders: ttfh,
        streamOverheadHeader: dist(seqStream.overheadHeader.filter(Number.isFinite)),
        streamTotal: added(seqStream.direct, seqStream.sidecar),
        openLoop: rates,
        closedLoop: closed,
        maxSustainedRps: best,
        rssPeakMiB: mib(peak.maxRss),
      };
    }
    if (variant.name === "default") {
      // Where the sidecar's CPU goes: a sampled CPU profile under closed-loop load (1 KB, concurrency 32).
      const file = join(dataDir, "sidecar.cpuprofile");
      await sidecar.ask({ type: "profile-start" });
      const cpuBefore = await stats();
      const r = await loadgen.ask<{ rps: number; lat: number[] }>({ type: "closedLoop", which: "sidecar", size: 1024, concurrency: 32, ms: QUICK ? 3000 : 6000 });
      const cpuAfter = await stats();
      await sidecar.ask({ type: "profile-stop", file });
      const cpuMsPerRequest = (cpuAfter.cpu.user + cpuAfter.cpu.system - cpuBefore.cpu.user - cpuBefore.cpu.system) / 1000 / r.lat.length;
      out.cpuProfile1KB = { requests: r.lat.length, rps: Math.round(r.rps), cpuUsPerRequest: Math.round(cpuMsPerRequest * 1000), categories: profileCategories(file, r.lat.length) };
    }
    const end = await stats();
    out.rssEndMiB = mib(end.rss);
    out.heapUsedEndMiB = mib(end.heapUsed);
    results[variant.name] = out;
    loadgen.proc.send({ type: "exit" });
    sidecar.proc.send({ type: "stop" });
    await Promise.race([new Promise((r) => sidecar.proc.once("exit", r)), sleep(15_000)]);
    if (sidecar.proc.exitCode === null) sidecar.proc.kill("SIGKILL");
    if (cgroup) out.memoryLimit = await closeCgroup(variant.name, cgroup, sidecar, end.heapLimit);
    rmSync(dataDir, { recursive: true, force: true });
  }
  upstream.proc.kill();
  cp.close();
  await sleep(100);

  if (args["seq-only"] || args["rate-only"]) process.exit(0);
  const report = { benchmark: "proxy-overhead", date: new Date().toISOString(), machine: machine(), quick: QUICK, results };
  mkdirSync(join(REPO, "bench/results"), { recursive: true });
  writeFileSync(join(REPO, "bench/results/proxy-overhead.json"), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(REPO, "bench/results/proxy-overhead.md"), markdown(report));
  process.stdout.write("\nwrote bench/results/proxy-overhead.{json,md}\n");
  process.exit(0);
}

/** Self time of a V8 CPU profile grouped by what the code does, in µs per request (idle excluded). */
function profileCategories(file: string, requests: number): { category: string; usPerRequest: number; percent: number }[] {
  type Node = { id: number; callFrame: { functionName: string; url: string } };
  const prof = JSON.parse(readFileSync(file, "utf8")) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const rules: [RegExp, string][] = [
    [/\/policy\/quality\//, "quality scores (policy/quality)"],
    [/\/policy\/injection\//, "injection score (policy/injection)"],
    [/\/policy\/pii\//, "PII detection (policy/pii)"],
    [/\/policy\/(engine|stream)\//, "policy evaluation (policy/engine, policy/stream)"],
    [/data-plane\/src\/proxy\//, "proxy hot path (proxy/)"],
    [/data-plane\/src\/providers\//, "provider adapters (providers/)"],
    [/data-plane\/src\/pricing\//, "pricing"],
    [/data-plane\/src\/limits\//, "rate limit and budget (limits/)"],
    [/data-plane\/src\/trace\//, "trace builder, spool, response gate (trace/)"],
    [/@bufbuild\/protobuf|node:internal\/encoding/, "protobuf encoding of traces (spool record + Ingest upload)"],
    [/@connectrpc|node:http2|node:internal\/http2/, "gRPC (Ingest upload, Sync)"],
    [/undici/, "undici (upstream client)"],
    [/prom-client|data-plane\/src\/observability\//, "metrics and ops (prom-client, observability/)"],
    [/gpt-tokenizer/, "tokenizer (gpt-tokenizer)"],
  ];
  const totals = new Map<string, number>();
  let busy = 0;
  prof.samples.forEach((id, i) => {
    const n = byId.get(id);
    const dt = prof.timeDeltas[i] ?? 0;
    const name = n?.callFrame.functionName ?? "";
    if (name === "(idle)") return;
    busy += dt;
    const url = n?.callFrame.url ?? "";
    let cat = name === "(garbage collector)" ? "garbage collector" : "Node.js runtime (http server, streams, sockets, timers, native)";
    for (const [re, c] of rules) {
      if (re.test(url)) {
        cat = c;
        break;
      }
    }
    totals.set(cat, (totals.get(cat) ?? 0) + dt);
  });
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .map(([category, us]) => ({ category, usPerRequest: Math.round((us / requests) * 10) / 10, percent: Math.round((us / busy) * 1000) / 10 }));
}

interface ClosedResult {
  tool: "wrk" | "undici";
  rps: number;
  latency: { p50: number; p90: number; p99: number };
  errors: number;
}

const WRK_AVAILABLE = spawnSync("wrk", ["--version"]).error === undefined;

/** A closed-loop run with wrk (one thread) when installed, else with the node load generator. */
async function closedLoopRun(
  loadgen: Child,
  which: "direct" | "sidecar",
  t: { sidecarUrl: string; upstreamUrl: string; key: string; agentId: string; dir: string },
  size: number,
  concurrency: number,
  ms: number,
): Promise<ClosedResult> {
  if (!WRK_AVAILABLE) {
    const r = await loadgen.ask<{ rps: number; lat: number[]; errors: number }>({ type: "closedLoop", which, size, concurrency, ms });
    const d = dist(r.lat);
    return { tool: "undici", rps: r.rps, latency: { p50: d.p50, p90: d.p90, p99: d.p99 }, errors: r.errors };
  }
  const script = join(t.dir, `wrk-${size}.lua`);
  // The body is built per request in Lua (a counter in front keeps prompts unique), as chatBody() does.
  const sample = JSON.parse(chatBody(size, 0, false).toString("utf8")) as { messages: { content: string }[] };
  const filler = sample.messages[1]!.content.slice("Request 0. ".length);
  const head = '{"model":"gpt-4o-mini","max_tokens":256,"messages":[{"role":"system","content":"You are a concise assistant for an engineering team."},{"role":"user","content":"Request ';
  writeFileSync(
    script,
    [
      'wrk.method = "POST"',
      'wrk.headers["content-type"] = "application/json"',
      'wrk.headers["authorization"] = "Bearer sk-bench"',
      ...(which === "sidecar" ? [`wrk.headers["x-service-key"] = "${t.key}"`, `wrk.headers["x-service-agent"] = "${t.agentId}"`] : []),
      `local head = ${JSON.stringify(head)}`,
      `local filler = ${JSON.stringify(filler)}`,
      "local n = 0",
      "request = function()",
      "  n = n + 1",
      "  local body = head .. n .. \". \" .. filler .. '\"}]}'",
      "  return wrk.format(nil, nil, nil, body)",
      "end",
    ].join("\n"),
  );
  const url = which === "sidecar" ? `${t.sidecarUrl}/v1/proxy/openai/v1/chat/completions` : `${t.upstreamUrl}/v1/chat/completions`;
  const out = await new Promise<string>((resolve, reject) => {
    const p = spawn(PIN ? "taskset" : "wrk", [...(PIN ? ["-c", OTHER_CPUS, "wrk"] : []), "-t1", `-c${concurrency}`, `-d${Math.round(ms / 1000)}s`, "--latency", "-s", script, url], { stdio: ["ignore", "pipe", "inherit"] });
    let text = "";
    p.stdout.on("data", (c: Buffer) => (text += c.toString()));
    p.on("error", reject);
    p.on("exit", () => resolve(text));
  });
  const unit = (v: string, u: string) => Number(v) * (u === "us" ? 0.001 : u === "s" ? 1000 : 1);
  const pct = (p: number) => {
    const m = new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s)\\s*$`, "m").exec(out);
    return m ? r3(unit(m[1]!, m[2]!)) : NaN;
  };
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const socketErrors = sock ? sock.slice(1).reduce((a, b) => a + Number(b), 0) : 0;
  return { tool: "wrk", rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN), latency: { p50: pct(50), p90: pct(90), p99: pct(99) }, errors: non2xx + socketErrors };
}

function added(direct: number[], sidecar: number[]) {
  const d = sortNum(direct);
  const s = sortNum(sidecar);
  return {
    direct: dist(direct),
    sidecar: dist(sidecar),
    addedP50: r3(percentile(s, 50) - percentile(d, 50)),
    addedP99: r3(percentile(s, 99) - percentile(d, 99)),
  };
}

const mib = (b: number) => Math.round((b / 1024 / 1024) * 10) / 10;

/**
 * The machine's own hiccups, as jHiccup measures them: on each CPU at once a thread (pinned there with
 * taskset) spins reading the clock for `ms` on an otherwise idle machine, and every gap between two
 * readings is time it was not running (the hypervisor or the kernel took its CPU, or another process
 * did). A fixed-rate p99 cannot be below what these do to requests. Without taskset, one unpinned thread.
 */
async function measureHiccups(ms: number): Promise<string> {
  const spin = `const gaps=[];const end=performance.now()+${ms};let last=performance.now();for(let now=last;now<end;now=performance.now()){if(now-last>1)gaps.push(now-last);last=now}process.stdout.write(JSON.stringify(gaps))`;
  const describe = (gaps: number[]) => {
    const over = (x: number) => gaps.filter((g) => g > x).length;
    return `lost it ${gaps.length}× for over 1 ms (${over(2)}× over 2 ms, longest ${r3(Math.max(0, ...gaps))} ms)`;
  };
  if (spawnSync("taskset", ["-c", "0", "true"]).status !== 0) {
    const r = spawnSync(process.execPath, ["-e", spin], { encoding: "utf8" });
    return `a thread spinning alone for ${ms / 1000} s ${describe(JSON.parse(r.stdout || "[]") as number[])}`;
  }
  const perCpu = await Promise.all(
    os.cpus().map(
      (_, cpu) =>
        new Promise<string>((resolve) => {
          let out = "";
          const p = spawn("taskset", ["-c", String(cpu), process.execPath, "-e", spin], { stdio: ["ignore", "pipe", "inherit"] });
          p.stdout.on("data", (d: Buffer) => (out += d.toString()));
          p.on("close", () => resolve(`CPU ${cpu} ${describe(JSON.parse(out || "[]") as number[])}`));
        }),
    ),
  );
  return `a thread spinning on each CPU for ${ms / 1000} s: ${perCpu.join("; ")}`;
}
/** Measured by main() before it starts anything. */
let hiccups = "not measured";

function machine(): Record<string, string | number> {
  return {
    cpu: os.cpus()[0]?.model ?? "unknown",
    cores: os.cpus().length,
    memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    loadAverageAtEnd: os.loadavg().map((v) => Math.round(v * 100) / 100).join(" "),
    hiccupsBeforeRun: hiccups,
  };
}

function markdown(report: { date: string; machine: Record<string, string | number>; quick: boolean; results: Record<string, unknown> }): string {
  return renderMarkdown(report);
}

// The report text lives in a function of its own so that the numbers above stay readable.
function renderMarkdown(report: { date: string; machine: Record<string, string | number>; quick: boolean; results: Record<string, unknown> }): string {
  type Added = { direct: Dist; sidecar: Dist; addedP50: number; addedP99: number; errors?: number; repeats?: { addedP50: number; addedP99: number }[] };
  type Size = {
    sequential: Added & { overheadHeader: Dist };
    streamTtfb: Added;
    streamTimeToHeaders: Added;
    streamTotal: Added;
    openLoop: Record<string, Added>;
    closedLoop: { concurrency: number; tool: string; sidecarRps: number; directRps: number; sidecarCpuPercentOfOneCore: number; addedP50: number; addedP99: number; sidecar: { p50: number; p99: number }; direct: { p50: number; p99: number } }[];
    maxSustainedRps: { concurrency: number; rps: number };
    rssPeakMiB: number;
  };
  const m = report.machine;
  const lines: string[] = [];
  lines.push("# Proxy overhead benchmark", "");
  lines.push(`Date: ${report.date}  `);
  lines.push(`Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.platform}, Node ${m.node} (shared with other work; load average at the end ${m.loadAverageAtEnd}). Hiccups before the run: ${m.hiccupsBeforeRun}${report.quick ? "  \n**Quick run** (fewer samples)." : ""}`, "");
  lines.push(
    `Setup: one sidecar process (real Sync client, durable spool with group commit and response gate, shipper), an upstream that answers at once (separate process, plain sockets), the load generator in a third process (fixed-rate phases sent by a single-threaded C program on plain keep-alive sockets, support/rate-client.c, when gcc is installed${RATE_CLIENT_USED ? "" : " — not this run: the node open loop on plain sockets sent them"}; sequential and stream measures through undici), a stub control plane in the orchestrating process (Sync snapshot, Ingest acks without storage). All governance on: 3 PII policies (block, redact both ways, log both ways), an injection block policy, rate limit 1,000,000/min, budget 1,000,000 USD/day. Prompts 1 KB / 8 KB, unique per request, OpenAI chat body. Added latency = sidecar minus direct, same run, interleaved (sequential: alternating requests; fixed rate: alternating 1-second phases). Fixed rate = open loop at a constant rate (one request every 1000/rps ms, each sent at its time as vegeta does), latency counted from each request's scheduled time; 20 one-second sidecar phases at 1,000 rps (20,000 requests per target), 10 at the other rates. The load generator, the upstream and the stub control plane run with --single-threaded-gc --no-memory-reducer (their GC helper threads otherwise held both cores for milliseconds at a time; BENCH_FIXTURE_EXEC_ARGV overrides). All times in ms.${PIN ? " --pin: the sidecar ran alone on the last CPU, everything else on the others." : ""}`,
    "",
  );
  lines.push(
    "How to read: every sidecar measure includes one extra loopback HTTP hop (the bare-proxy variant, when run, shows what that hop alone costs here). The `default` variant holds the last byte of each answer until its trace is written to the spool file (SPOOL_GATE=write: quality scores, encoding and one write(2); the fdatasync group commits run beside, every 100 ms at most: SPOOL_FSYNC_INTERVAL_MS), so its added latency includes that work; `gate-off` does not wait. The load generator, the upstream and the sidecar share the same two cores (and other work ran on the machine: see the load average), so fixed-rate numbers near a process's capacity mostly measure queueing. Streams: the upstream sends the headers and the first event (role, empty content) at once and the other 22 events in one write 2 ms later, as a provider sends its first event when the first token is ready. `stream: headers` is the time to the response headers; `first body byte` the time to that first event, through the outbound stream governor (the redact policy applies to answers); `stream total` includes the 2 ms and the governor's work on every event.",
    "",
  );
  // Summary against the targets.
  const ok = (v: number, max: number) => (Number.isFinite(v) ? `${v}${v <= max ? " ✅" : " ❌"}` : "—");
  lines.push("## Summary against the targets", "");
  lines.push("| variant | prompt | added p50 at 1,000 rps (≤ 0.5) | added p99 at 1,000 rps (≤ 2) | sequential added p50 / p99 | stream: headers added p50 (≤ 0.5) | stream: first body byte added p50 (≤ 0.5) | max rps (one process) | peak RSS MiB |", "|---|---|---:|---:|---:|---:|---:|---:|---:|");
  for (const [variant, raw] of Object.entries(report.results)) {
    for (const label of ["1KB", "8KB"]) {
      const s = (raw as Record<string, unknown>)[label] as Size | undefined;
      if (!s) continue;
      const at1000 = s.openLoop["1000"];
      lines.push(`| ${variant} | ${label} | ${ok(at1000?.addedP50 ?? NaN, 0.5)} | ${ok(at1000?.addedP99 ?? NaN, 2)} | ${s.sequential.addedP50} / ${s.sequential.addedP99} | ${ok(s.streamTimeToHeaders.addedP50, 0.5)} | ${ok(s.streamTtfb.addedP50, 0.5)} | ${s.maxSustainedRps.rps} | ${s.rssPeakMiB} |`);
    }
  }
  lines.push("");
  const repeated: string[] = [];
  for (const [variant, raw] of Object.entries(report.results)) {
    for (const label of ["1KB", "8KB"]) {
      const r = ((raw as Record<string, unknown>)[label] as Size | undefined)?.openLoop["1000"]?.repeats;
      if (r) repeated.push(`${variant} ${label}: ${r.map((x) => `${x.addedP99}`).join(", ")}`);
    }
  }
  if (repeated.length > 0) {
    lines.push(`1,000 rps was measured several times (${report.quick ? 3 : 20} one-second phases per target each time): the tables give the measure with the median added p99. Added p99 of every measure (ms): ${repeated.join("; ")}.`, "");
  }
  for (const [variant, raw] of Object.entries(report.results)) {
    const v = raw as Record<string, unknown>;
    const what: Record<string, string> = {
      default: "the sidecar with its defaults: the last byte of an answer waits for its trace to be written to the spool (SPOOL_GATE=write, SPOOL_COMMIT_WAIT_MS=1000)",
      "gate-off": "the sidecar with SPOOL_COMMIT_WAIT_MS=0: answers do not wait for their trace",
      "gate-fsync": "the sidecar with SPOOL_GATE=fsync SPOOL_FSYNC_INTERVAL_MS=0: the last byte of an answer waits for its trace's fdatasync",
      "bare-proxy": "reference: a bare Node.js proxy (node:http + undici pool, headers copied, body streamed; no governance, no trace) — the floor of one proxy hop on this machine",
    };
    lines.push(`## ${variant}: ${what[variant] ?? ""}`, "");
    lines.push("| prompt | measure | direct p50 | sidecar p50 | **added p50** | direct p99 | sidecar p99 | **added p99** | samples |", "|---|---|---:|---:|---:|---:|---:|---:|---:|");
    for (const label of ["1KB", "8KB"]) {
      const s = v[label] as Size | undefined;
      if (!s) continue;
      const row = (name: string, a: Added) => lines.push(`| ${label} | ${name} | ${a.direct.p50} | ${a.sidecar.p50} | **${a.addedP50}** | ${a.direct.p99} | ${a.sidecar.p99} | **${a.addedP99}** | ${a.sidecar.n} |`);
      row("sequential (c=1)", s.sequential);
      for (const [rate, a] of Object.entries(s.openLoop)) row(rate.startsWith("max:") ? `fixed ${rate.slice(4)} rps (≈90% of max)` : `fixed ${rate} rps`, a);
      row("stream time to headers (c=1)", s.streamTimeToHeaders);
      row("stream TTFB: first body byte (c=1)", s.streamTtfb);
      row("stream total (c=1)", s.streamTotal);
    }
    lines.push("");
    lines.push("| prompt | load generator | concurrency | sidecar rps | direct rps | sidecar CPU (% of one core) | sidecar p50 / p99 | direct p50 / p99 | added p50 | added p99 |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (const label of ["1KB", "8KB"]) {
      const s = v[label] as Size | undefined;
      if (!s) continue;
      for (const c of s.closedLoop) lines.push(`| ${label} | ${c.tool} | ${c.concurrency} | ${c.sidecarRps} | ${c.directRps} | ${c.sidecarCpuPercentOfOneCore} | ${c.sidecar.p50} / ${c.sidecar.p99} | ${c.direct.p50} / ${c.direct.p99} | ${c.addedP50} | ${c.addedP99} |`);
    }
    lines.push("");
    for (const label of ["1KB", "8KB"]) {
      const s = v[label] as Size | undefined;
      if (!s) continue;
      const self = Number.isFinite(s.sequential.overheadHeader.p50) ? `; sidecar self-reported X-Service-Overhead-Ms (sequential) p50 ${s.sequential.overheadHeader.p50}, p99 ${s.sequential.overheadHeader.p99}` : "";
      lines.push(`- ${label}: max sustained throughput of one process ≈ **${s.maxSustainedRps.rps} rps** (closed loop, concurrency ${s.maxSustainedRps.concurrency})${self}; peak RSS ${s.rssPeakMiB} MiB.`);
    }
    lines.push(`- Memory: RSS idle ${v.rssIdleMiB} MiB, after the run ${v.rssEndMiB} MiB (heap used ${v.heapUsedEndMiB} MiB).`);
    const limit = v.memoryLimit as { limitMiB: number; cgroupVersion: number; heapLimitMiB: number; peakMiB: number; limitHits: number; oomKills: number } | undefined;
    if (limit) lines.push(`- Memory limit: the sidecar ran in a cgroup (v${limit.cgroupVersion}) limited to ${limit.limitMiB} MiB, as in a container. The kernel's peak charge for it was ${limit.peakMiB} MiB (its RSS plus the page cache of the files it wrote, such as the spool segments, which the kernel reclaims before it kills anything); the limit was reached ${limit.limitHits}×; OOM kills: ${limit.oomKills}. V8 sized its heap limit to ${limit.heapLimitMiB} MiB under it.`);
    lines.push("");
    const prof = v.cpuProfile1KB as { requests: number; rps: number; cpuUsPerRequest: number; categories: { category: string; usPerRequest: number; percent: number }[] } | undefined;
    if (prof) {
      lines.push(`### Where the sidecar's CPU goes (1 KB, closed loop c=32, ${prof.rps} rps, ${prof.cpuUsPerRequest} µs of CPU per request incl. the spool's threads)`, "");
      lines.push("| what (self time of a sampled CPU profile, idle excluded) | µs per request | share |", "|---|---:|---:|");
      for (const c of prof.categories) lines.push(`| ${c.category} | ${c.usPerRequest} | ${c.percent}% |`);
      lines.push("");
    }
  }
  lines.push("Targets: added p50 ≤ 0.5 ms and p99 ≤ 2 ms at 1,000 rps; stream TTFB added ≤ 0.5 ms.", "");
  lines.push("Run: `node --import tsx bench/proxy-overhead.ts [--quick] [--gate-off-too] [--fsync-too] [--bare-too] [--memory-limit-mib 512]` (wrk is used for the closed-loop runs when installed: `apt-get install -y wrk`); `--rate-only 1000` for the diagnostics of one fixed rate.");
  return `${lines.join("\n")}\n`;
}

// ───────────────────────────── dispatch ─────────────────────────────

if (args.role === "upstream") runUpstream();
else if (args.role === "bare") runBare();
else if (args.role === "sidecar") await runSidecar();
else if (args.role === "loadgen") runLoadgen();
else if (FIXTURE_NODE_FLAGS.some((f) => !process.execArgv.includes(f))) {
  // The orchestrator hosts the stub control plane: it runs with the fixtures' node flags too.
  const r = spawnSync(process.execPath, [...FIXTURE_NODE_FLAGS, ...process.execArgv, HERE, ...process.argv.slice(2)], { stdio: "inherit" });
  process.exit(r.status ?? 1);
} else {
  await main().catch((e: unknown) => {
    // a child that failed to start must not keep this process (and the others) alive
    process.stderr.write(`benchmark failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    for (const p of spawned) p.kill("SIGKILL");
    process.exit(1);
  });
}
