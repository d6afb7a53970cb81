// Table layout and migrations of the trace store. One table, `traces`, holds a whole Trace per row:
// nested repeated messages are parallel Array columns (portable to ClickHouse 18.16). It is a
// ReplacingMergeTree keyed (tenant_id, timestamp_ms, id) so a trace inserted twice is one row after
// FINAL, partitioned by month so retention drops whole partitions. The DDL is the same on both
// engines except LowCardinality and CODEC, used only where the engine supports them (20.x and later).

import type { EngineVersion, SqlEngine } from "./engine.js";
import { num } from "./json-values.js";
import { rollupTableStatements } from "./rollup.js";
import { SqlFragment, sql, sqlIdent } from "./sql-literal.js";

export const TRACES_TABLE = "traces";
export const MIGRATIONS_TABLE = "schema_migrations";

export interface EngineCaps {
  lowCardinality: boolean;
  codecs: boolean;
  /** Table TTL (retention enforced row by row at merges, beside the partition drops). */
  ttl: boolean;
}

export function engineCaps(v: EngineVersion): EngineCaps {
  // 18.16 needs an experimental flag for LowCardinality and has no CODEC or TTL; all are settled by 20.1.
  const modern = v.major >= 20;
  return { lowCardinality: modern, codecs: modern, ttl: modern };
}

type ColumnKind = "plain" | "lowCardinality" | "bigText";

interface Column {
  name: string;
  type: string;
  kind?: ColumnKind;
}

/** Every column of `traces`, in order. */
export const TRACE_COLUMNS: readonly Column[] = [
  { name: "tenant_id", type: "String" },
  { name: "id", type: "String" },
  { name: "ts", type: "DateTime('UTC')" },
  { name: "timestamp_ms", type: "Int64" },
  { name: "agent_id", type: "String", kind: "lowCardinality" },
  { name: "agent_name", type: "String", kind: "lowCardinality" },
  { name: "environment", type: "String", kind: "lowCardinality" },
  { name: "session_id", type: "Nullable(String)" },
  { name: "provider", type: "String", kind: "lowCardinality" },
  { name: "model", type: "String", kind: "lowCardinality" },
  { name: "status", type: "String", kind: "lowCardinality" },
  { name: "request_id", type: "String" },
  { name: "http_status", type: "Int32" },
  { name: "error_code", type: "String", kind: "lowCardinality" },
  { name: "input_tokens", type: "UInt32" },
  { name: "output_tokens", type: "UInt32" },
  { name: "cached_input_tokens", type: "UInt32" },
  { name: "cache_write_tokens", type: "UInt32" },
  { name: "tokens_estimated", type: "UInt8" },
  { name: "cost_usd", type: "Float64" },
  { name: "input_cost", type: "Float64" },
  { name: "output_cost", type: "Float64" },
  { name: "price_per_million_input", type: "Float64" },
  { name: "price_per_million_output", type: "Float64" },
  { name: "price_version", type: "String", kind: "lowCardinality" },
  { name: "price_missing", type: "UInt8" },
  { name: "latency_ms", type: "Float64" },
  { name: "provider_ms", type: "Float64" },
  { name: "overhead_ms", type: "Float64" },
  { name: "span_stages", type: "Array(String)" },
  { name: "span_durations_ms", type: "Array(Float64)" },
  { name: "injection_score", type: "Float64" },
  { name: "pii_scan_enabled", type: "UInt8" },
  { name: "has_pii", type: "UInt8" },
  { name: "pii_entity_types", type: "Array(String)" },
  { name: "pii_starts", type: "Array(UInt32)" },
  { name: "pii_ends", type: "Array(UInt32)" },
  { name: "pii_sources", type: "Array(String)" },
  { name: "pii_scores", type: "Array(Float64)" },
  { name: "policy_ids", type: "Array(String)" },
  { name: "policy_names", type: "Array(String)" },
  { name: "policy_results", type: "Array(String)" },
  { name: "policy_actions", type: "Array(String)" },
  { name: "policies_fired", type: "Array(String)" },
  { name: "policies_evaluated", type: "UInt32" },
  { name: "policies_blocked", type: "UInt32" },
  { name: "quality_scorers", type: "Array(String)" },
  { name: "quality_scores", type: "Array(Float64)" },
  { name: "tool_names", type: "Array(String)" },
  { name: "tool_ids", type: "Array(String)" },
  { name: "prompt", type: "String", kind: "bigText" },
  { name: "completion", type: "String", kind: "bigText" },
  // Input outside the prompt the sidecar judged (tool definitions, response schemas…), only when it had
  // PII: offsets of findings with those sources point into it. Added to existing tables by migration 3.
  { name: "input_extras", type: "String", kind: "bigText" },
  { name: "streamed", type: "UInt8" },
  // ReplacingMergeTree version: insertion time in µs (strictly increasing per process); the latest copy wins.
  { name: "version", type: "UInt64" },
];

/** The (possibly large) texts of a trace, which only a trace's detail reads. */
const TEXT_COLUMNS = new Set(["prompt", "completion", "input_extras"]);

/** Columns a list returns: everything but the texts (prompt, completion, input_extras). */
export const SUMMARY_COLUMN_NAMES: readonly string[] = TRACE_COLUMNS.map((c) => c.name).filter(
  (n) => !TEXT_COLUMNS.has(n) && n !== "version",
);
export const DETAIL_COLUMN_NAMES: readonly string[] = TRACE_COLUMNS.map((c) => c.name).filter((n) => n !== "version");

export function columnList(names: readonly string[]): SqlFragment {
  return new SqlFragment(names.map((n) => sqlIdent(n).text).join(", "));
}

function columnType(c: Column, caps: EngineCaps): string {
  if (c.kind === "lowCardinality" && caps.lowCardinality) return `LowCardinality(${c.type})`;
  if (c.kind === "bigText" && caps.codecs) return `${c.type} CODEC(ZSTD(3))`;
  return c.type;
}

export function createTracesTable(db: SqlFragment, caps: EngineCaps): SqlFragment {
  const cols = TRACE_COLUMNS.map((c) => `  ${sqlIdent(c.name).text} ${columnType(c, caps)}`).join(",\n");
  return new SqlFragment(
    `CREATE TABLE IF NOT EXISTS ${db.text}.${TRACES_TABLE} (\n${cols}\n)\n` +
      `ENGINE = ReplacingMergeTree(version)\n` +
      `PARTITION BY toYYYYMM(ts)\n` +
      `ORDER BY (tenant_id, timestamp_ms, id)\n` +
      `SETTINGS index_granularity = 8192`,
  );
}

interface Migration {
  version: number;
  name: string;
  apply: (engine: SqlEngine, db: SqlFragment, caps: EngineCaps) => Promise<void>;
}

/** A migration that runs statements in order. */
function statements(make: (db: SqlFragment, caps: EngineCaps) => SqlFragment[]): Migration["apply"] {
  return async (engine, db, caps) => {
    for (const statement of make(db, caps)) await engine.command(statement);
  };
}

async function hasColumn(engine: SqlEngine, db: SqlFragment, table: string, column: string): Promise<boolean> {
  // db is a checked identifier (sqlIdent), written bare: its text is the name system.columns holds.
  const rows = await engine.query(sql`SELECT count() AS n FROM system.columns WHERE database = ${db.text} AND table = ${table} AND name = ${column}`);
  return num(rows[0]?.["n"]) > 0;
}

/**
 * Adds a column of TRACE_COLUMNS to an existing `traces`, after `after`, when it lacks it: a table that
 * migration 1 created from today's column list has it already. ClickHouse 18.16 has no
 * `ADD COLUMN IF NOT EXISTS`, so the column is looked up first; a second process adding it at the same
 * time makes the ALTER fail, which is fine once the column is there. Existing rows read the type's
 * default ("" for a String).
 */
function addTraceColumn(name: string, after: string): Migration["apply"] {
  const column = TRACE_COLUMNS.find((c) => c.name === name);
  if (!column) throw new Error(`no trace column ${name}`);
  return async (engine, db, caps) => {
    if (await hasColumn(engine, db, TRACES_TABLE, name)) return;
    const alter = new SqlFragment(`ALTER TABLE ${db.text}.${TRACES_TABLE} ADD COLUMN ${sqlIdent(name).text} ${columnType(column, caps)} AFTER ${sqlIdent(after).text}`);
    try {
      await engine.command(alter);
    } catch (e) {
      if (!(await hasColumn(engine, db, TRACES_TABLE, name))) throw e;
    }
  };
}

/** Ordered, append-only. Each migration must be safe to run again (a crash between apply and record). */
export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: "create traces", apply: statements((db, caps) => [createTracesTable(db, caps)]) },
  // Safe to run again: CREATE … IF NOT EXISTS, and marking hours dirty twice only recomputes them.
  { version: 2, name: "hourly rollups", apply: statements((db, caps) => rollupTableStatements(db, caps)) },
  // Safe to run again: the column is added only when missing.
  { version: 3, name: "input_extras column", apply: addTraceColumn("input_extras", "completion") },
];

/** Creates the database and brings its tables to the latest migration. Idempotent. */
export async function migrate(engine: SqlEngine, db: SqlFragment, caps: EngineCaps): Promise<number[]> {
  await engine.command(sql`CREATE DATABASE IF NOT EXISTS ${db}`);
  const table = new SqlFragment(`${db.text}.${MIGRATIONS_TABLE}`);
  await engine.command(
    sql`CREATE TABLE IF NOT EXISTS ${table} (version UInt32, name String, applied_at DateTime('UTC')) ENGINE = MergeTree ORDER BY version`,
  );
  const rows = await engine.query(sql`SELECT DISTINCT version FROM ${table}`);
  const done = new Set(rows.map((r) => num(r["version"])));
  const applied: number[] = [];
  for (const m of MIGRATIONS) {
    if (done.has(m.version)) continue;
    await m.apply(engine, db, caps);
    await engine.command(sql`INSERT INTO ${table} (version, name, applied_at) SELECT ${m.version}, ${m.name}, now()`);
    applied.push(m.version);
  }
  return applied;
}
