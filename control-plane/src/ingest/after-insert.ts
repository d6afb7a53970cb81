// What ingest maintains in Postgres once traces are stored: per-agent tool counts (each trace counted
// once, via trace_receipts) and each agent's spend today, pushed to sidecars through Sync for budgets.
// Both are idempotent: a redelivered trace adds no tool call (its receipt exists) and spend is
// recomputed from the deduplicated trace store, so it cannot be counted twice.
import type { Db } from "../stores/postgres/db.js";
import type { TraceFacts, TraceStore } from "../stores/clickhouse/index.js";
import { newId } from "../domain/ids.js";
import { recordChange } from "../stores/postgres/sync-changes.js";
import { utcDay } from "../sync/snapshot.js";

/** How long a trace id is remembered for tool counting (redeliveries come within seconds or minutes). */
export const RECEIPT_RETENTION_DAYS = 7;

export function makeAfterInsert(db: Db, store: TraceStore, onTenantChanged: (tenantId: string) => void) {
  return async (traces: TraceFacts[]): Promise<void> => {
    const byTenant = new Map<string, Map<string, TraceFacts>>();
    for (const t of traces) {
      let m = byTenant.get(t.tenantId);
      if (!m) byTenant.set(t.tenantId, (m = new Map()));
      m.set(t.id, t); // one copy per id: the same trace may come twice in one flush
    }
    for (const [tenantId, byId] of byTenant) {
      const list = [...byId.values()];
      await touchProxyKeys(db, tenantId, list);
      // Only traces with tool calls need a receipt: the others add nothing to count.
      const withTools = list.filter((t) => t.toolNames.length > 0);
      if (withTools.length > 0) await countTools(db, tenantId, withTools);
      // Spend today, from the deduplicated trace store, for the agents that just spent.
      const today = utcDay();
      const dayStart = Date.parse(`${today}T00:00:00Z`);
      const agents = new Set<string>();
      for (const t of list) {
        const ms = Number(t.timestampMs);
        if (t.budgetCharge > 0 && ms >= dayStart && ms < dayStart + 86_400_000) agents.add(t.agentId);
      }
      if (agents.size === 0) continue;
      const spend = await store.dailySpend(tenantId, today);
      const agentList = [...agents];
      const changed = await db.tx(async (c) => {
        const r = await c.query<{ agent_id: string }>(
          `INSERT INTO agent_spend (tenant_id, agent_id, day, spent_usd)
           SELECT $1, a, $3::date, s FROM unnest($2::text[], $4::float8[]) AS u(a, s)
           ON CONFLICT (agent_id, day) DO UPDATE SET spent_usd = GREATEST(agent_spend.spent_usd, EXCLUDED.spent_usd)
             WHERE agent_spend.spent_usd < EXCLUDED.spent_usd
           RETURNING agent_id`,
          [tenantId, agentList, today, agentList.map((a) => spend.get(a) ?? 0)],
        );
        // A day's spend only grows: a figure read before another replica stored a newer, higher one
        // (several control planes flush at once) must not replace it. A redelivery, or such an older
        // figure, leaves the stored one as it was: no Sync change for it.
        for (const row of r.rows) await recordChange(c, tenantId, "spend", row.agent_id);
        return r.rows.length;
      });
      if (changed > 0) onTenantChanged(tenantId);
    }
  };
}

async function countTools(db: Db, tenantId: string, list: TraceFacts[]): Promise<void> {
  await db.tx(async (c) => {
    const fresh = await c.query<{ trace_id: string }>(
      "INSERT INTO trace_receipts (trace_id, tenant_id) SELECT unnest($1::text[]), $2 ON CONFLICT DO NOTHING RETURNING trace_id",
      [list.map((t) => t.id), tenantId],
    );
    const freshIds = new Set(fresh.rows.map((r) => r.trace_id));
    const counts = new Map<string, { agentId: string; tool: string; n: number; last: number }>();
    for (const t of list) {
      if (!freshIds.has(t.id)) continue;
      for (const name of t.toolNames) {
        // Postgres text cannot hold NUL; tool names are shown, not matched, so U+FFFD stands in.
        const tool = name.slice(0, 200).replace(/\0/g, "\uFFFD");
        const k = `${t.agentId}\u0000${tool}`;
        const cur = counts.get(k) ?? { agentId: t.agentId, tool, n: 0, last: 0 };
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
        [newId("tool"), tenantId, v.agentId, v.tool, v.n, new Date(v.last)],
      );
    }
  });
}

/** Forgets trace ids older than RECEIPT_RETENTION_DAYS (called with retention, hourly). */
export async function pruneTraceReceipts(db: Db): Promise<number> {
  const r = await db.query(`DELETE FROM trace_receipts WHERE received_at < now() - make_interval(days => $1)`, [RECEIPT_RETENTION_DAYS]);
  return r.rowCount ?? 0;
}

/**
 * Keys used only at a sidecar (X-Service-Key) show their use through the traces they made: lastUsedAt
 * moves to the newest trace time, at most once a minute per key (DESIGN.md §3, key rotation).
 */
async function touchProxyKeys(db: Db, tenantId: string, list: TraceFacts[]): Promise<void> {
  const newest = new Map<string, number>();
  for (const t of list) if (t.keyId) newest.set(t.keyId, Math.max(newest.get(t.keyId) ?? 0, Number(t.timestampMs)));
  if (newest.size === 0) return;
  await db.query(
    `UPDATE api_keys k SET last_used_at = u.ts FROM unnest($2::text[], $3::timestamptz[]) AS u(id, ts)
      WHERE k.id = u.id AND k.tenant_id = $1 AND (k.last_used_at IS NULL OR k.last_used_at < u.ts - interval '1 minute')`,
    [tenantId, [...newest.keys()], [...newest.values()].map((ms) => new Date(ms))],
  );
}
