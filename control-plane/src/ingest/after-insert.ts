// What ingest maintains in Postgres once traces are stored: per-agent tool counts (each trace counted
// once, via trace_receipts) and each agent's spend today, pushed to sidecars through Sync for budgets.
import type { Trace } from "@agentgov/proto";
import type { Db } from "../stores/postgres/db.js";
import type { TraceStore } from "../stores/clickhouse/index.js";
import { newId } from "../domain/ids.js";
import { recordChange } from "../stores/postgres/sync-changes.js";
import { utcDay } from "../sync/snapshot.js";

export function makeAfterInsert(db: Db, store: TraceStore, onTenantChanged: (tenantId: string) => void) {
  return async (traces: Trace[]): Promise<void> => {
    const byTenant = new Map<string, Trace[]>();
    for (const t of traces) byTenant.set(t.tenantId, [...(byTenant.get(t.tenantId) ?? []), t]);
    for (const [tenantId, list] of byTenant) {
      await db.tx(async (c) => {
        const fresh = await c.query<{ trace_id: string }>(
          "INSERT INTO trace_receipts (trace_id, tenant_id) SELECT unnest($1::text[]), $2 ON CONFLICT DO NOTHING RETURNING trace_id",
          [list.map((t) => t.id), tenantId],
        );
        const freshIds = new Set(fresh.rows.map((r) => r.trace_id));
        const counts = new Map<string, { agentId: string; tool: string; n: number; last: number }>();
        for (const t of list) {
          if (!freshIds.has(t.id)) continue;
          for (const call of t.toolCalls) {
            const k = `${t.agentId}\u0000${call.name}`;
            const cur = counts.get(k) ?? { agentId: t.agentId, tool: call.name, n: 0, last: 0 };
            cur.n += 1;
            cur.last = Math.max(cur.last, Number(t.timestampMs));
            counts.set(k, cur);
          }
        }
        for (const v of counts.values()) {
          await c.query(
            `INSERT INTO agent_tools (id, tenant_id, agent_id, tool_name, call_count, last_called_at) VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (agent_id, tool_name) DO UPDATE SET call_count = agent_tools.call_count + EXCLUDED.call_count,
               last_called_at = GREATEST(agent_tools.last_called_at, EXCLUDED.last_called_at)`,
            [newId("tool"), tenantId, v.agentId, v.tool.slice(0, 200), v.n, new Date(v.last)],
          );
        }
      });
      // Spend today, from the deduplicated trace store, for the agents that just spent.
      const today = utcDay();
      const agents = [...new Set(list.filter((t) => t.costUsd > 0 && utcDay(new Date(Number(t.timestampMs))) === today).map((t) => t.agentId))];
      if (agents.length === 0) continue;
      const spend = await store.dailySpend(tenantId, today);
      await db.tx(async (c) => {
        for (const agentId of agents) {
          await c.query(
            `INSERT INTO agent_spend (tenant_id, agent_id, day, spent_usd) VALUES ($1, $2, $3, $4)
             ON CONFLICT (agent_id, day) DO UPDATE SET spent_usd = EXCLUDED.spent_usd`,
            [tenantId, agentId, today, spend.get(agentId) ?? 0],
          );
          await recordChange(c, tenantId, "spend", agentId);
        }
      });
      onTenantChanged(tenantId);
    }
  };
}
