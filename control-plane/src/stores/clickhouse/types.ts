// Public types of the ClickHouse trace store (see index.ts for the entry point).

import type { Trace } from "@agentgov/proto";
import type { EngineKind } from "./engine.js";
import type { TranscodedTrace } from "./trace-transcoder.js";

export interface TraceStoreLogger {
  warn(o: object, m?: string): void;
}

export interface TraceStoreOptions {
  /** ClickHouse server HTTP URL (CLICKHOUSE_URL); absent → embedded chDB under `dataDir`. */
  url?: string;
  user?: string;
  password?: string;
  /** Database name (letters, digits, `_`); created if missing. */
  database: string;
  /** DATA_DIR; chDB keeps its files in `<dataDir>/chdb`. */
  dataDir: string;
  /** Partitions (months) entirely older than this many days are dropped by dropExpiredPartitions. */
  retentionDays: number;
  logger?: TraceStoreLogger;
  /**
   * How much later than an hour's last insert its rollup must have been computed to be used (covers
   * clock skew between control-plane replicas; default 10 000 ms; tests use 0).
   */
  rollupMarginMs?: number;
  /**
   * Also expire rows by table TTL where the engine has it (default true). Off only for tests that play
   * retention under a simulated clock (TTL uses the real one).
   */
  rowTtl?: boolean;
  /**
   * TRACE_STORE_RAW_PII: keep prompt, completion and input_extras as the sidecar sent them. Default
   * false: their detected PII spans are stored as `*` of the same length, whatever a sidecar's own setting.
   */
  storeRawPii?: boolean;
}

export type TraceStatus = "success" | "error" | "blocked";

/** Keyset position: the last trace of the previous page. */
export interface TraceCursor {
  timestampMs: number;
  id: string;
}

export interface CursorListQuery {
  agentId?: string;
  /** Inclusive. */
  since: Date;
  /** Inclusive. */
  until: Date;
  status?: TraceStatus;
  hasPii?: boolean;
  /** 1…1000. */
  limit: number;
  after?: TraceCursor;
}

export interface CursorListResult {
  /** Newest first (timestamp desc, id desc); prompt, completion and input_extras are "" (use get()). */
  traces: Trace[];
  hasMore: boolean;
}

export interface OffsetListQuery {
  /** 1…1000. */
  limit: number;
  /** ≥ 0. */
  offset: number;
  agentId?: string;
  /** Group B status: "error" includes blocked. */
  status?: "success" | "error";
  environment?: string;
  /** Inclusive. */
  startDate?: Date;
  /** Inclusive. */
  endDate?: Date;
  minCostUsd?: number;
  maxCostUsd?: number;
  minInjectionScore?: number;
}

export interface OffsetListResult {
  /** Newest first; prompt, completion and input_extras are "" (use get()). */
  traces: Trace[];
  /** Exact number of traces matching the filters. */
  total: number;
}

export type StatsGroupBy = "agent" | "model" | "environment";

export interface StatsQuery {
  /** Inclusive. */
  since: Date;
  /** Inclusive. */
  until: Date;
  agentId?: string;
  groupBy?: StatsGroupBy;
}

/** A compliance report's window (inclusive bounds) and optional agent. */
export interface ComplianceQuery {
  since: Date;
  until: Date;
  agentId?: string;
}

/** Injection scores at or above these are counted as elevated and high. */
export const INJECTION_ELEVATED = 0.5;
export const INJECTION_HIGH = 0.8;

/**
 * What the governance did over a window, for auditors: how many calls passed, failed and were refused
 * (and why), the PII found per type and where, each policy's evaluations and actions, the injection
 * scores seen, and the agents involved.
 */
export interface ComplianceReport {
  /** By status: `error` excludes the refused (`blocked`) ones, so total = success + error + blocked. */
  traces: { total: number; success: number; error: number; blocked: number; withPii: number };
  /** Refused calls by their error code (policy_violation, rate_limit_exceeded, budget_exceeded, agent_paused…), most first. */
  refusals: { reason: string; count: number }[];
  /** PII findings per entity type and source (prompt, completion): findings, and traces with at least one. */
  pii: { entityType: string; source: string; findings: number; traces: number }[];
  /** Per policy (its latest name): traces that evaluated it, that matched it, and the action taken. */
  policies: { policyId: string; policyName: string; evaluated: number; matched: number; blocked: number; redacted: number; logged: number }[];
  injection: { elevated: number; high: number; maxScore: number };
  /** Per agent (its latest name): traces, refused, with PII; most refused first. */
  agents: { agentId: string; agentName: string; traces: number; blocked: number; withPii: number }[];
  /** Whether the policies or agents lists were cut at COMPLIANCE_MAX_ROWS. */
  truncated: { policies: boolean; agents: boolean };
}

export interface TraceStatsSummary {
  totalTraces: number;
  successCount: number;
  /** error + blocked. */
  errorCount: number;
  /** errorCount / totalTraces × 100 (0 when there is no trace). */
  errorRatePercent: number;
  totalInputTokens: number;
  totalOutputTokens: number;
  totalCostUsd: number;
  /** Over latency_ms; 0 when there is no trace. */
  avgDurationMs: number;
  /** quantileExact over latency_ms. */
  p50DurationMs: number;
  p95DurationMs: number;
  p99DurationMs: number;
}

export interface GroupMeasures {
  traceCount: number;
  totalCostUsd: number;
  /** error + blocked, in percent of traceCount. */
  errorRatePercent: number;
  avgDurationMs: number;
}

export interface AgentGroup extends GroupMeasures {
  agentId: string;
  /** The name on the agent's newest trace in the window. */
  agentName: string;
}

export interface ModelGroup extends GroupMeasures {
  modelProvider: string;
  modelName: string;
}

export interface EnvironmentGroup extends GroupMeasures {
  environment: string;
}

export type TraceStatsGroup = AgentGroup | ModelGroup | EnvironmentGroup;

export interface TraceStats {
  summary: TraceStatsSummary;
  /** Empty without groupBy; otherwise ordered by traceCount desc, then key asc. */
  groups: TraceStatsGroup[];
}

export interface AgentMetrics {
  /** Traces in [now − 24 h, now]. */
  requests24h: number;
  /** Mean latency_ms over the last 24 h (0 when none). */
  avgLatencyMs: number;
  cost24h: number;
  /** Status `error` / all traces over the last 24 h, as a fraction; blocked is not an error. */
  errorRate: number;
  /** Every stored trace of the agent (within retention). */
  totalRequests: number;
  totalCost: number;
}

export type { TraceFacts, TranscodedTrace } from "./trace-transcoder.js";

export interface TraceStore {
  readonly engine: EngineKind;
  ping(): Promise<boolean>;
  /** Resolves once the engine holds the rows; rejects on failure. Re-inserting a trace replaces it. */
  insert(traces: readonly Trace[]): Promise<void>;
  /**
   * One encoded Trace (protobuf binary) as a row ready to insert, with the facts ingest needs.
   * Throws TraceStoreError invalid_argument when the bytes are not a Trace the store can hold.
   */
  transcode(bytes: Uint8Array): TranscodedTrace;
  /** Inserts transcoded rows; like insert(). */
  insertTranscoded(rows: readonly TranscodedTrace[]): Promise<void>;
  /** The full trace (every field, prompt and completion included), or null. */
  get(tenantId: string, id: string): Promise<Trace | null>;
  listByCursor(tenantId: string, q: CursorListQuery): Promise<CursorListResult>;
  listByOffset(tenantId: string, q: OffsetListQuery): Promise<OffsetListResult>;
  stats(tenantId: string, q: StatsQuery): Promise<TraceStats>;
  /** An entry for every requested agent id (zeros when it has no trace). */
  agentMetrics(tenantId: string, agentIds: readonly string[], now: Date): Promise<Map<string, AgentMetrics>>;
  /** Cost per agent id on one UTC day ('YYYY-MM-DD'); agents without traces are absent. */
  dailySpend(tenantId: string, dayUtc: string): Promise<Map<string, number>>;
  /** The compliance report of a window (read from the traces, FINAL: a trace stored twice counts once). */
  compliance(tenantId: string, q: ComplianceQuery): Promise<ComplianceReport>;
  /**
   * Recomputes the hourly rollups of closed hours written to since their last computation (a batch,
   * oldest first); returns the number of hours computed. Statistics are correct without it (stale
   * hours are read from the traces), only slower.
   */
  refreshRollups(now: Date): Promise<number>;
  /** Drops the month partitions that end at or before now − retentionDays; returns their ids (YYYYMM). */
  dropExpiredPartitions(now: Date): Promise<string[]>;
  close(): Promise<void>;
}
