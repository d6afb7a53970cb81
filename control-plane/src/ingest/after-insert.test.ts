// After-insert's spend figure on real Postgres and a real trace store, with two control-plane replicas
// finishing ingest flushes at the same time (review, session 17): the replica that read the day's spend
// first but writes last must not put its older, lower figure over the newer one (Sync would push the
// lower figure and budgets would admit past their limit). A day's spend only grows.
import test from "ava";
import { createTestDatabase } from "../../../test/harness/databases.js";
import { openDb, type Db } from "../stores/postgres/db.js";
import { migrate } from "../stores/postgres/migrate.js";
import type { TraceFacts, TraceStore } from "../stores/clickhouse/index.js";
import { enginesUnderTest, makeTrace, openTestStore, removeChdbDataDir } from "../stores/clickhouse/test-engines.js";
import { makeAfterInsert } from "./after-insert.js";

let db: Db;
test.before(async () => {
  db = openDb(await createTestDatabase(), 4);
  await migrate(db);
});
test.after.always(async () => {
  await db?.close();
  removeChdbDataDir();
});

for (const kind of enginesUnderTest()) {
  test.serial(`[${kind}] a replica writing an older spend figure after a newer one leaves the newer one`, async (t) => {
    const ts = await openTestStore(kind);
    try {
      const tenantId = `ten_spend_${kind}`;
      const agentId = `agt_spend_${kind}`;
      const now = Date.now();
      const trace = (costUsd: number, dt: number) => makeTrace({ tenantId, agentId, timestampMs: BigInt(now + dt), costUsd });
      const facts = (x: ReturnType<typeof trace>): TraceFacts => ({ id: x.id, tenantId, agentId, status: "success", timestampMs: Number(x.timestampMs), keyId: "", costUsd: x.costUsd, budgetCharge: x.costUsd, toolNames: [] });
      const figure = async () => (await db.query<{ spent_usd: number }>("SELECT spent_usd FROM agent_spend WHERE agent_id = $1", [agentId])).rows[0]?.spent_usd;
      const spendChanges = async () => (await db.query("SELECT 1 FROM sync_changes WHERE tenant_id = $1 AND kind = 'spend'", [tenantId])).rowCount;

      // Replica A stored a $1 batch and reads the day's spend (1), then stalls before its upsert.
      const a = trace(1, 0);
      await ts.store.insert([a]);
      let aHasRead!: () => void;
      const aRead = new Promise<void>((r) => (aHasRead = r));
      let releaseA!: () => void;
      const gate = new Promise<void>((r) => (releaseA = r));
      const storeA: TraceStore = Object.assign(Object.create(ts.store) as TraceStore, {
        dailySpend: async (tid: string, day: string) => {
          const v = await ts.store.dailySpend(tid, day);
          aHasRead();
          await gate;
          return v;
        },
      });
      const runA = makeAfterInsert(db, storeA, () => undefined)([facts(a)]);
      await aRead;

      // Replica B stores a $3 batch and finishes first: 4.
      const b = trace(3, 1);
      await ts.store.insert([b]);
      const afterB = makeAfterInsert(db, ts.store, () => undefined);
      await afterB([facts(b)]);
      t.is(await figure(), 4);
      t.is(await spendChanges(), 1);

      // A writes the 1 it read: nothing changes, and no Sync change is recorded.
      releaseA();
      await runA;
      t.is(await figure(), 4);
      t.is(await spendChanges(), 1);

      // A redelivery leaves the figure (and Sync) alone too.
      await afterB([facts(b)]);
      t.is(await figure(), 4);
      t.is(await spendChanges(), 1);
    } finally {
      await ts.dispose();
    }
  });
}
