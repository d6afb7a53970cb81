// Test support (not a test file): opens trace stores on every engine available — chDB always, the
// ClickHouse server too when CLICKHOUSE_URL is set — each in a fresh database `t_<random>` that is
// dropped afterwards, and builds Trace messages for tests and benchmarks.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { create, TraceSchema, type Trace } from "@agentgov/proto";
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
  const base: TraceStoreOptions = { database, dataDir: chdbDataDir(), retentionDays: 30, ...extra };
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
