// What the sidecar reports about itself: the /readyz body (JSON) and /metrics (Prometheus text format).
// Ready = it holds a governance state (from the control plane, or the persisted snapshot when the
// control plane is unreachable: fail static) and its trace spool can write (`spool_unwritable` while the
// last append could not be written or the last group commit failed: traces are then kept in memory and
// answers wait for their acknowledgement). The snapshot's age is the time since the control plane
// last confirmed the state (any Sync message, heartbeats included).
import type { GovernanceState } from "./state/governance-state.js";
import type { SyncStats } from "./sync/client.js";
import type { SpoolStats } from "./trace/queue.js";
import type { ShipperStats } from "./trace/shipper.js";
import type { ResponseGateStats } from "./trace/response-gate.js";
import type { BudgetStats } from "./limits/budget.js";

export function readiness(state: GovernanceState, sync: SyncStats, spool: SpoolStats, shipper: ShipperStats, gate: ResponseGateStats, budget: BudgetStats) {
  // A sidecar whose own key the control plane refused serves no call: not ready.
  const governed = state.tenantId !== "" && state.ownKeyRevoked !== true;
  const now = Date.now();
  const status = !governed ? ("not_ready" as const) : spool.unwritable ? ("spool_unwritable" as const) : ("ready" as const);
  return {
    status,
    ...(state.ownKeyRevoked === true
      ? { reason: "the control plane refused this sidecar's own key (SIDECAR_KEY)" }
      : status === "spool_unwritable"
        ? {
            reason: `the trace spool cannot write to disk (${spool.lastError}): traces are kept in memory (${spool.memoryOnly} now) and answers wait up to SPOOL_COMMIT_WAIT_MS for the control plane to acknowledge theirs`,
            spoolWriteErrors: spool.writeErrors,
          }
        : {}),
    connected: sync.connected,
    snapshotVersion: String(state.version),
    snapshotAgeMs: sync.lastContactMs ? Math.max(0, now - sync.lastContactMs) : null,
    queuedTraces: spool.depth,
    sync: {
      snapshots: sync.snapshots,
      deltas: sync.deltas,
      heartbeats: sync.heartbeats,
      reconnects: sync.reconnects,
    },
    spool: spool,
    ingest: { connected: shipper.connected, batchesSent: shipper.batchesSent, streamFailures: shipper.streamFailures, lastAckAgeMs: shipper.lastAckAtMs ? now - shipper.lastAckAtMs : null },
    responses: gate,
    /** localEntries: traces whose cost this sidecar still counts itself (the control plane's figure does not include them yet). */
    budget,
  };
}

export type Readiness = ReturnType<typeof readiness>;

export function renderMetrics(r: Readiness): string {
  const lines: string[] = [];
  const metric = (name: string, type: "gauge" | "counter", help: string, value: number) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name} ${Number.isFinite(value) ? value : 0}`);
  };
  metric("agentgov_sidecar_ready", "gauge", "1 when the sidecar holds a governance state and its trace spool can write", r.status === "ready" ? 1 : 0);
  metric("agentgov_sync_connected", "gauge", "1 while the Sync stream to the control plane is up", r.connected ? 1 : 0);
  metric("agentgov_sync_snapshot_version", "gauge", "Sync version of the governance state", Number(r.snapshotVersion));
  metric("agentgov_sync_snapshot_age_seconds", "gauge", "Seconds since the control plane last confirmed the state (-1: never)", r.snapshotAgeMs === null ? -1 : r.snapshotAgeMs / 1000);
  metric("agentgov_sync_snapshots_total", "counter", "Full snapshots received", r.sync.snapshots);
  metric("agentgov_sync_deltas_total", "counter", "Deltas received", r.sync.deltas);
  metric("agentgov_sync_reconnects_total", "counter", "Sync streams reopened", r.sync.reconnects);
  const s = r.spool;
  metric("agentgov_spool_depth", "gauge", "Traces spooled and not yet acknowledged", s.depth);
  metric("agentgov_spool_bytes", "gauge", "Bytes of spool segments on disk", s.bytes);
  metric("agentgov_spool_max_bytes", "gauge", "Spool size cap (SPOOL_MAX_BYTES)", s.maxBytes);
  metric("agentgov_spool_oldest_age_seconds", "gauge", "Age of the oldest unacknowledged trace", s.oldestAgeMs / 1000);
  metric("agentgov_spool_high_water_bytes", "gauge", "Largest spool size since start", s.highWaterBytes);
  metric("agentgov_spool_high_water_depth", "gauge", "Largest spool depth since start", s.highWaterDepth);
  metric("agentgov_spool_appended_total", "counter", "Traces appended to the spool", s.appendedTotal);
  metric("agentgov_spool_acked_total", "counter", "Traces acknowledged by the control plane", s.ackedTotal);
  metric("agentgov_spool_dropped_total", "counter", "Unacknowledged traces dropped because the spool (or its memory-only part) was full", s.droppedTotal);
  metric("agentgov_spool_replayed_total", "counter", "Traces replayed from disk at start", s.replayedTotal);
  metric("agentgov_spool_quarantined_bytes_total", "counter", "Damaged spool bytes moved to quarantine", s.quarantinedBytes);
  metric("agentgov_spool_write_errors_total", "counter", "Failed spool writes, fsyncs and segment creations", s.writeErrors);
  metric("agentgov_spool_unwritable", "gauge", "1 while the spool's last append could not be written or its last fdatasync failed", s.unwritable ? 1 : 0);
  metric("agentgov_spool_memory_only", "gauge", "Traces kept in memory only (not safe on disk) until the control plane acknowledges them", s.memoryOnly);
  metric("agentgov_ingest_stream_failures_total", "counter", "Ingest streams that failed", r.ingest.streamFailures);
  metric("agentgov_budget_local_entries", "gauge", "Traces whose cost the sidecar counts itself until the control plane's spend figure includes it", r.budget.localEntries);
  metric("agentgov_budget_in_flight", "gauge", "Requests holding a budget reservation", r.budget.inFlight);
  metric("agentgov_responses_gated_total", "counter", "Responses that waited for their trace", r.responses.gated);
  metric("agentgov_responses_gate_held_p99_seconds", "gauge", "99th percentile of how long answers were held for their trace (since start)", r.responses.heldP99Ms / 1000);
  metric("agentgov_responses_gate_timeouts_total", "counter", "Responses released before their trace was safe in the spool (SPOOL_COMMIT_WAIT_MS)", r.responses.timedOut);
  return `${lines.join("\n")}\n`;
}
