// Entry point of the ClickHouse trace store (server over HTTP, or embedded chDB).

export { openTraceStore, INSERT_CHUNK_ROWS } from "./trace-store.js";
export { TraceStoreError, isTraceStoreError, type TraceStoreErrorCode } from "./errors.js";
export { MAX_LIMIT, MAX_OFFSET } from "./trace-lists.js";
export type { EngineKind } from "./engine.js";
export { INJECTION_ELEVATED, INJECTION_HIGH } from "./types.js";
export { COMPLIANCE_MAX_ROWS } from "./trace-compliance.js";
export type {
  AgentGroup,
  ComplianceQuery,
  ComplianceReport,
  AgentMetrics,
  CursorListQuery,
  CursorListResult,
  EnvironmentGroup,
  GroupMeasures,
  ModelGroup,
  OffsetListQuery,
  OffsetListResult,
  StatsGroupBy,
  StatsQuery,
  TraceCursor,
  TraceStats,
  TraceStatsGroup,
  TraceStatsSummary,
  TraceStatus,
  TraceStore,
  TraceStoreLogger,
  TraceStoreOptions,
  TraceFacts,
  TranscodedTrace,
} from "./types.js";
