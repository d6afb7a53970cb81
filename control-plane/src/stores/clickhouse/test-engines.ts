// Test support (not a test file): opens trace stores on every engine available — chDB always, the
// ClickHouse server too when CLICKHOUSE_URL is set — each in a fresh database `t_<random>` that is
// dropped afterwards, and builds Trace messages for tests and benchmarks.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { create, PiiDetectionSchema, PolicyEvaluationSchema, QualityScoreSchema, SpanSchema, ToolCallSchema, TraceSchema, type Trace } from "@agentgov/proto";
import { ChdbEngine } from "./engine-chdb.js";
import { ServerEngine } from "./engine-server.js";
import type { EngineKind, SqlEngine } from "./engine.js";
import { sql, sqlIdent } from "./sql-literal.js";
import { openTraceStore } from "./trace-store.js";
import type { TraceStore, TraceStoreOptions } from "./types.js";

export interface TestStore {
  store: TraceStore;
  database: string;
  /** A raw engine on the same database, for assertions about storage. */
  engine: SqlEngine;
  /** Closes the store and drops its database. */
  dispose(): Promise<void>;
}

let chdbDir: string | null = null;

/** The one chDB data directory of this process (chDB allows one per process). */
export function chdbDataDir(): string {
  chdbDir ??= mkdtempSync(join(tmpdir(), "agentgov-chdb-test-"));
  return chdbDir;
}

/** Removes this process's chDB directory; call from test.after.always. */
export function removeChdbDataDir(): void {
  if (chdbDir) rmSync(chdbDir, { recursive: true, force: true });
  chdbDir = null;
}

export function enginesUnderTest(): EngineKind[] {
  return process.env["CLICKHOUSE_URL"] ? ["chdb", "server"] : ["chdb"];
}

export function randomDatabase(): string {
  return `t_${randomBytes(6).toString("hex")}`;
}

export function storeOptions(kind: EngineKind, database: string, extra: Partial<TraceStoreOptions> = {}): TraceStoreOptions {
  // Ten years: tests insert traces of fixed past dates, which a 30-day row TTL would expire at merges.
  const base: TraceStoreOptions = { database, dataDir: chdbDataDir(), retentionDays: 3650, ...extra };
  if (kind === "server") {
    base.url = process.env["CLICKHOUSE_URL"];
    base.user = process.env["CLICKHOUSE_USER"];
    base.password = process.env["CLICKHOUSE_PASSWORD"];
  }
  return base;
}

export async function rawEngine(kind: EngineKind): Promise<SqlEngine> {
  if (kind === "server") {
    return new ServerEngine({
      url: process.env["CLICKHOUSE_URL"] ?? "",
      user: process.env["CLICKHOUSE_USER"],
      password: process.env["CLICKHOUSE_PASSWORD"],
    });
  }
  return ChdbEngine.open(join(chdbDataDir(), "chdb"));
}

export async function openTestStore(kind: EngineKind, extra: Partial<TraceStoreOptions> = {}): Promise<TestStore> {
  const database = randomDatabase();
  const store = await openTraceStore(storeOptions(kind, database, extra));
  const engine = await rawEngine(kind);
  return {
    store,
    database,
    engine,
    async dispose() {
      await store.close();
      await engine.command(sql`DROP DATABASE IF EXISTS ${sqlIdent(database)}`);
      await engine.close();
    },
  };
}

/** Small seeded PRNG (mulberry32) so generated data is reproducible. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** `trc_<ULID>` for a time, with random bits from `rnd`. */
export function traceId(ms: number, rnd: () => number = Math.random): string {
  let time = "";
  let t = ms;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  let tail = "";
  for (let i = 0; i < 16; i++) tail += CROCKFORD[Math.floor(rnd() * 32)];
  return `trc_${time}${tail}`;
}

/** A minimal valid trace; override any field. */
export function makeTrace(fields: Partial<Omit<Trace, "$typeName">> & { tenantId: string; timestampMs: bigint }): Trace {
  const ms = Number(fields.timestampMs);
  return create(TraceSchema, {
    id: traceId(ms),
    agentId: "agt_default",
    agentName: "default agent",
    environment: "production",
    provider: "openai",
    model: "gpt-4o-mini",
    status: "success",
    latencyMs: 100,
    ...fields,
  });
}

export const AGENTS = [
  { id: "agt_alpha", name: "Alpha" },
  { id: "agt_beta", name: "Beta" },
  { id: "agt_gamma", name: "Gamma" },
] as const;
export const MODELS = [
  { provider: "openai", model: "gpt-4o-mini" },
  { provider: "anthropic", model: "claude-3-5-haiku" },
  { provider: "openai", model: "gpt-4o" },
] as const;
export const ENVIRONMENTS = ["production", "staging"] as const;

export interface RandomTraceOptions {
  tenantId: string;
  fromMs: number;
  toMs: number;
  seed: number;
}

/** `n` varied traces with timestamps uniformly in [fromMs, toMs] (same seed → same traces). */
export function randomTraces(n: number, o: RandomTraceOptions): Trace[] {
  const rnd = seededRandom(o.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const out: Trace[] = [];
  for (let i = 0; i < n; i++) {
    const ms = o.fromMs + Math.floor(rnd() * (o.toMs - o.fromMs + 1));
    const agent = pick(AGENTS);
    const m = pick(MODELS);
    const r = rnd();
    const status = r < 0.8 ? "success" : r < 0.9 ? "error" : "blocked";
    const pii = rnd() < 0.25;
    const input = 10 + Math.floor(rnd() * 2000);
    const output = Math.floor(rnd() * 800);
    const inputCost = (input * 3) / 1e6;
    const outputCost = (output * 15) / 1e6;
    out.push(
      create(TraceSchema, {
        id: traceId(ms, rnd),
        tenantId: o.tenantId,
        agentId: agent.id,
        agentName: agent.name,
        environment: pick(ENVIRONMENTS),
        provider: m.provider,
        model: m.model,
        status,
        timestampMs: BigInt(ms),
        inputTokens: input,
        outputTokens: output,
        costUsd: inputCost + outputCost,
        inputCost,
        outputCost,
        latencyMs: Math.round((20 + -Math.log(1 - rnd()) * 400) * 1000) / 1000,
        injectionScore: Math.round(rnd() * 1000) / 1000,
        piiScanEnabled: true,
        piiDetections: pii ? [create(PiiDetectionSchema, { entityType: "email", start: 0, end: 5, source: "prompt", score: 0.9 })] : [],
        policiesFired: status === "blocked" ? ["pol_block"] : [],
        policiesEvaluated: 2,
        policiesBlocked: status === "blocked" ? 1 : 0,
        prompt: `prompt ${i}`,
        completion: status === "blocked" ? "" : `completion ${i}`,
      }),
    );
  }
  return out;
}

/** Newest first: timestamp desc, then id desc (ASCII ids compare alike in JS and ClickHouse). */
export function newestFirst(a: Trace, b: Trace): number {
  if (a.timestampMs !== b.timestampMs) return a.timestampMs > b.timestampMs ? -1 : 1;
  return a.id === b.id ? 0 : a.id > b.id ? -1 : 1;
}

/** A trace with every field set, nested messages included, and awkward strings. */
export function fullTrace(tenantId: string, ms: number): Trace {
  return create(TraceSchema, {
    id: traceId(ms),
    tenantId,
    agentId: "agt_01J0000000000000000000000A",
    agentName: "Support bot ‘β’",
    environment: "staging",
    sessionId: "sess-42",
    provider: "anthropic",
    model: "claude-3-5-sonnet-20241022",
    status: "blocked",
    timestampMs: BigInt(ms),
    requestId: "req_abc",
    httpStatus: -1,
    errorCode: "policy_violation",
    inputTokens: 4_294_967_295,
    outputTokens: 17,
    cachedInputTokens: 3,
    cacheWriteTokens: 5,
    tokensEstimated: true,
    // a decimal ClickHouse 18.16 reads one ulp off (written-double.ts); figures are short decimals, as the sidecar writes them
    costUsd: 0.00071925,
    inputCost: 1e-9,
    outputCost: 123456.789012345,
    pricePerMillionInput: 3,
    pricePerMillionOutput: 15.5,
    priceVersion: "2026-01-01",
    priceMissing: true,
    latencyMs: 1234.5678,
    providerMs: 1000.25,
    overheadMs: 2.125,
    spans: [
      create(SpanSchema, { stage: "policy_eval", durationMs: 0.5 }),
      create(SpanSchema, { stage: "pii_scan", durationMs: 1.25 }),
      create(SpanSchema, { stage: "provider", durationMs: 1000.25 }),
      create(SpanSchema, { stage: "quality_score", durationMs: 3 }),
      create(SpanSchema, { stage: "overhead", durationMs: 2.125 }),
    ],
    injectionScore: 0.875,
    piiScanEnabled: true,
    piiDetections: [
      create(PiiDetectionSchema, { entityType: "ssn", start: 10, end: 21, source: "prompt", score: 0.99 }),
      create(PiiDetectionSchema, { entityType: "email", start: 0, end: 4_294_967_295, source: "completion", score: 0.5 }),
      create(PiiDetectionSchema, { entityType: "ssn", start: 29, end: 40, source: "tool_definition", score: 0.85 }),
    ],
    policyEvaluations: [
      create(PolicyEvaluationSchema, { policyId: "pol_1", policyName: "No SSN", result: "fail", actionTaken: "block" }),
      create(PolicyEvaluationSchema, { policyId: "pol_2", policyName: "Log all", result: "pass", actionTaken: "none" }),
    ],
    policiesFired: ["pol_1", "rate_limit"],
    policiesEvaluated: 2,
    policiesBlocked: 1,
    qualityScores: [
      create(QualityScoreSchema, { scorer: "relevance", score: 0.75 }),
      create(QualityScoreSchema, { scorer: "toxicity", score: 0 }),
    ],
    toolCalls: [
      create(ToolCallSchema, { name: "get_weather", id: "call_1" }),
      create(ToolCallSchema, { name: "search", id: "" }),
    ],
    prompt: "system: be nice\n\nuser: my SSN is ***********, it's \\ \"quoted\" \0 😀",
    completion: "I can't help with that.\r\n\t— done",
    streamed: true,
    inputExtras: "Look up a customer, e.g. SSN ***********.\n\nthe id, 'quoted' \\ \t 😀",
  });
}
