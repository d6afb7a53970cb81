// The trace store: opens the engine (ClickHouse server when a URL is given, else chDB under
// DATA_DIR), migrates the database, and serves the TraceStore interface with one set of SQL
// statements for both engines.

import { join } from "node:path";
import { toBinary } from "@bufbuild/protobuf";
import { TraceSchema, type Trace } from "@agentgov/proto";
import { ServerEngine } from "./engine-server.js";
import { parseEngineVersion, type SqlEngine } from "./engine.js";
import { TraceStoreError } from "./errors.js";
import { str } from "./json-values.js";
import { applyRetentionTtl, dropExpiredPartitions } from "./retention.js";
import { HOUR_MS, markDirty, refreshRollups, ROLLUP_TABLES, rollupTables } from "./rollup.js";
import { engineCaps, migrate, TRACES_TABLE } from "./schema.js";
import { SqlFragment, sql, sqlIdent } from "./sql-literal.js";
import type { StoreContext } from "./store-context.js";
import { getTrace, listByCursor, listByOffset } from "./trace-lists.js";
import { TRANSCODED_COLUMNS, transcodeTrace, type TranscodedTrace } from "./trace-transcoder.js";
import { agentMetrics, dailySpend, traceStats } from "./trace-stats.js";
import { complianceReport } from "./trace-compliance.js";
import type {
  ComplianceQuery,
  ComplianceReport,
  AgentMetrics,
  CursorListQuery,
  CursorListResult,
  OffsetListQuery,
  OffsetListResult,
  StatsQuery,
  TraceStats,
  TraceStore,
  TraceStoreLogger,
  TraceStoreOptions,
} from "./types.js";

/** Rows per INSERT statement; larger batches are split. */
export const INSERT_CHUNK_ROWS = 10_000;

class ClickHouseTraceStore implements TraceStore {
  readonly engine: "server" | "chdb";
  private readonly ctx: StoreContext;
  private lastVersion = 0;

  constructor(
    private readonly sqlEngine: SqlEngine,
    private readonly database: string,
    private readonly retentionDays: number,
    private readonly logger: TraceStoreLogger | undefined,
    rollupMarginMs: number | undefined,
    private readonly storeRawPii = false,
  ) {
    this.engine = sqlEngine.kind;
    const db = sqlIdent(database);
    this.ctx = { engine: sqlEngine, table: new SqlFragment(`${db.text}.${TRACES_TABLE}`), rollups: rollupTables(db, rollupMarginMs) };
  }

  ping(): Promise<boolean> {
    return this.sqlEngine.ping();
  }

  async insert(traces: readonly Trace[]): Promise<void> {
    await this.insertTranscoded(traces.map((t) => this.transcode(toBinary(TraceSchema, t))));
  }

  transcode(bytes: Uint8Array): TranscodedTrace {
    const t = transcodeTrace(bytes, this.nextVersion(), this.storeRawPii);
    if (t.nonFinite.length > 0) {
      this.logger?.warn({ traceId: t.facts.id, fields: [...new Set(t.nonFinite)] }, "non-finite trace numbers stored as 0");
    }
    return t;
  }

  async insertTranscoded(rows: readonly TranscodedTrace[]): Promise<void> {
    if (rows.length === 0) return;
    const hours = new Map<string, Set<number>>();
    for (let i = 0; i < rows.length; i += INSERT_CHUNK_ROWS) {
      const chunk = rows.slice(i, i + INSERT_CHUNK_ROWS);
      await this.sqlEngine.insertTabSeparated(this.ctx.table, TRANSCODED_COLUMNS, Buffer.concat(chunk.map((r) => r.row)));
    }
    for (const r of rows) {
      let set = hours.get(r.facts.tenantId);
      if (!set) hours.set(r.facts.tenantId, (set = new Set()));
      set.add(Math.floor(r.facts.timestampMs / HOUR_MS) * HOUR_MS);
    }
    // After the rows: a rollup computed before this mark may have missed them (rollup.ts).
    await markDirty(this.ctx, hours);
  }

  refreshRollups(now: Date): Promise<number> {
    return refreshRollups(this.ctx, now);
  }

  /** Row version: epoch µs, strictly increasing within the process, so a later insert of a trace wins. */
  private nextVersion(): number {
    this.lastVersion = Math.max(Date.now() * 1000, this.lastVersion + 1);
    return this.lastVersion;
  }

  get(tenantId: string, id: string): Promise<Trace | null> {
    return getTrace(this.ctx, tenantId, id);
  }

  listByCursor(tenantId: string, q: CursorListQuery): Promise<CursorListResult> {
    return listByCursor(this.ctx, tenantId, q);
  }

  listByOffset(tenantId: string, q: OffsetListQuery): Promise<OffsetListResult> {
    return listByOffset(this.ctx, tenantId, q);
  }

  stats(tenantId: string, q: StatsQuery): Promise<TraceStats> {
    return traceStats(this.ctx, tenantId, q);
  }

  agentMetrics(tenantId: string, agentIds: readonly string[], now: Date): Promise<Map<string, AgentMetrics>> {
    return agentMetrics(this.ctx, tenantId, agentIds, now);
  }

  dailySpend(tenantId: string, dayUtc: string): Promise<Map<string, number>> {
    return dailySpend(this.ctx, tenantId, dayUtc);
  }

  compliance(tenantId: string, q: ComplianceQuery): Promise<ComplianceReport> {
    return complianceReport(this.ctx, tenantId, q);
  }

  async dropExpiredPartitions(now: Date): Promise<string[]> {
    const dropped = await dropExpiredPartitions(this.ctx, this.database, TRACES_TABLE, this.retentionDays, now);
    for (const table of ROLLUP_TABLES) await dropExpiredPartitions(this.ctx, this.database, table, this.retentionDays, now);
    if (dropped.length > 0) this.logger?.warn({ partitions: dropped, database: this.database }, "dropped expired trace partitions");
    return dropped;
  }

  close(): Promise<void> {
    return this.sqlEngine.close();
  }
}

/** Opens the engine, creates the database and tables (idempotent migrations), and returns the store. */
export async function openTraceStore(o: TraceStoreOptions): Promise<TraceStore> {
  const db = sqlIdent(o.database);
  if (!Number.isInteger(o.retentionDays) || o.retentionDays < 1) {
    throw new TraceStoreError("invalid_argument", `retentionDays must be a positive integer, got ${String(o.retentionDays)}`);
  }
  const engine: SqlEngine = o.url
    ? new ServerEngine({ url: o.url, user: o.user, password: o.password })
    : // chDB is loaded only when used: it is an optional dependency, left out of server deployments.
      await (await import("./engine-chdb.js")).ChdbEngine.open(join(o.dataDir, "chdb"));
  try {
    const rows = await engine.query(sql`SELECT version() AS v`);
    const version = parseEngineVersion(str(rows[0]?.["v"]));
    if (version.major === 0) o.logger?.warn({ version: version.text }, "unrecognised ClickHouse version; using the 18.16-compatible schema");
    const caps = engineCaps(version);
    await migrate(engine, db, caps);
    if (caps.ttl && o.rowTtl !== false) await applyRetentionTtl(engine, o.database, o.retentionDays);
    return new ClickHouseTraceStore(engine, o.database, o.retentionDays, o.logger, o.rollupMarginMs, o.storeRawPii);
  } catch (e) {
    await engine.close().catch(() => undefined);
    throw e;
  }
}
