// The figures an Ingest acknowledgement carries (UploadResponse.spend): today's spend of each agent the
// batch charged, read after the batch was stored and counted (after-insert.ts raised agent_spend with
// it, and the stored figure only grows), so each figure includes the batch's traces. The sidecar's
// budget ledger retires the acknowledged traces against it (data-plane/src/limits/budget.ts) instead of
// guessing from the Sync figure's growth which of its traces that growth includes.
import { create } from "@bufbuild/protobuf";
import { AgentSpendSchema, type AgentSpend } from "@agentgov/proto";
import type { Db } from "../stores/postgres/db.js";
import type { TraceFacts } from "../stores/clickhouse/index.js";
import { utcDay } from "../sync/snapshot.js";

export async function ackedSpend(db: Db, tenantId: string, stored: readonly TraceFacts[], now = new Date()): Promise<AgentSpend[]> {
  const today = utcDay(now);
  const dayStart = Date.parse(`${today}T00:00:00Z`);
  const agents = new Set<string>();
  for (const t of stored) {
    const ms = Number(t.timestampMs);
    if (t.budgetCharge > 0 && ms >= dayStart && ms < dayStart + 86_400_000) agents.add(t.agentId);
  }
  if (agents.size === 0) return [];
  const r = await db.query<{ agent_id: string; spent_usd: number }>(
    "SELECT agent_id, spent_usd FROM agent_spend WHERE tenant_id = $1 AND day = $2::date AND agent_id = ANY($3)",
    [tenantId, today, [...agents]],
  );
  return r.rows.map((row) => create(AgentSpendSchema, { agentId: row.agent_id, day: today, spentUsd: Number(row.spent_usd) }));
}
