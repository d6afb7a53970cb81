// Tests of retention: month partitions that ended at least retentionDays ago are dropped whole,
// younger ones and other databases are kept.

import test from "ava";
import { num, str } from "./json-values.js";
import { expiredPartitions, retentionTtl } from "./retention.js";
import { sql, sqlIdent } from "./sql-literal.js";
import { openTraceStore } from "./trace-store.js";
import { monthPartitionEndMs } from "./time.js";
import { enginesUnderTest, makeTrace, openTestStore, removeChdbDataDir, storeOptions } from "./test-engines.js";

test.after.always(() => removeChdbDataDir());

test("month partition ends and the expiry rule", (t) => {
  t.is(monthPartitionEndMs("202601"), Date.UTC(2026, 1, 1));
  t.is(monthPartitionEndMs("202612"), Date.UTC(2027, 0, 1));
  t.is(monthPartitionEndMs("202613"), null);
  t.is(monthPartitionEndMs("all"), null);
  const ids = ["202603", "202601", "202602", "tuple()"];
  t.deepEqual(expiredPartitions(ids, Date.UTC(2026, 1, 1)), ["202601"], "a month ending exactly at the cutoff expires");
  t.deepEqual(expiredPartitions(ids, Date.UTC(2026, 1, 1) - 1), []);
  t.deepEqual(expiredPartitions(ids, Date.UTC(2026, 3, 1)), ["202601", "202602", "202603"]);
});

for (const kind of enginesUnderTest()) {
  test(`${kind}: dropExpiredPartitions drops whole expired months only`, async (t) => {
    // A simulated clock (March 2026): row TTL, which uses the real clock, would expire these rows too.
    const a = await openTestStore(kind, { retentionDays: 30, rowTtl: false });
    const b = await openTestStore(kind, { retentionDays: 30, rowTtl: false });
    try {
      const at = (y: number, m: number, d: number) => makeTrace({ tenantId: "ten", timestampMs: BigInt(Date.UTC(y, m, d, 12)) });
      const jan = [at(2026, 0, 1), at(2026, 0, 31)];
      const feb = [at(2026, 1, 10)];
      const mar = [at(2026, 2, 14)];
      await a.store.insert([...jan, ...feb]);
      await a.store.insert(mar);
      await b.store.insert(jan);
      const count = async (s: typeof a): Promise<number> => (await s.store.listByOffset("ten", { limit: 1, offset: 0 })).total;
      t.is(await count(a), 4);

      // now = 15 March: cutoff 13 Feb; January ended 1 Feb → dropped; February not over at cutoff.
      t.deepEqual(await a.store.dropExpiredPartitions(new Date(Date.UTC(2026, 2, 15))), ["202601"]);
      t.is(await count(a), 2);
      for (const x of jan) t.is(await a.store.get("ten", x.id), null);
      t.truthy(await a.store.get("ten", feb[0]!.id));
      t.deepEqual(await a.store.dropExpiredPartitions(new Date(Date.UTC(2026, 2, 15))), [], "nothing left to drop");

      // now = 1 April: cutoff 2 March; February ended 1 March → dropped.
      t.deepEqual(await a.store.dropExpiredPartitions(new Date(Date.UTC(2026, 3, 1))), ["202602"]);
      t.is(await count(a), 1);
      t.truthy(await a.store.get("ten", mar[0]!.id));
      t.is(await count(b), 2, "another database keeps its partitions");
      t.true(await a.store.ping());
    } finally {
      await a.dispose();
      await b.dispose();
    }
  });

  test(`${kind}: rows older than retentionDays expire by table TTL where the engine has it`, async (t) => {
    const ts = await openTestStore(kind, { retentionDays: 2 });
    try {
      const db = sqlIdent(ts.database);
      const now = Date.now();
      const old = makeTrace({ tenantId: "ten", timestampMs: BigInt(now - 3 * 86_400_000) });
      const fresh = makeTrace({ tenantId: "ten", timestampMs: BigInt(now - 1000) });
      await ts.store.insert([old]);
      await ts.store.insert([fresh]);
      await ts.engine.command(sql`OPTIMIZE TABLE ${db}.traces FINAL`);
      const ids = (await ts.engine.query(sql`SELECT id FROM ${db}.traces`)).map((r) => str(r["id"]));
      const engineFull = str((await ts.engine.query(sql`SELECT engine_full FROM system.tables WHERE database = ${ts.database} AND name = 'traces'`))[0]?.["engine_full"]);
      if (kind === "chdb") {
        t.true(engineFull.includes(retentionTtl("ts", 2)), engineFull);
        t.deepEqual(ids, [fresh.id], "the 3-day-old trace expired at the merge");
        // Reopening with another retention changes the TTL.
        const again = await openTraceStore(storeOptions(kind, ts.database, { retentionDays: 7 }));
        await again.close();
        const after = str((await ts.engine.query(sql`SELECT engine_full FROM system.tables WHERE database = ${ts.database} AND name = 'traces_hourly'`))[0]?.["engine_full"]);
        t.true(after.includes(retentionTtl("hour", 7)), after);
      } else {
        t.false(engineFull.includes("TTL"), "18.16 has no TTL: retention is the partition drop alone");
        t.is(ids.length, 2);
      }
      t.is(num((await ts.engine.query(sql`SELECT count() AS n FROM ${db}.traces WHERE id = ${fresh.id}`))[0]?.["n"]), 1);
    } finally {
      await ts.dispose();
    }
  });

  test(`${kind}: a long retention keeps traces dated near the end of DateTime's range (no TTL wrap-around)`, async (t) => {
    const ts = await openTestStore(kind, { retentionDays: 20_000 });
    try {
      const db = sqlIdent(ts.database);
      const fresh = makeTrace({ tenantId: "ten", timestampMs: BigInt(Date.now() - 1000) });
      const future = makeTrace({ tenantId: "ten", timestampMs: BigInt(Date.UTC(2060, 0, 1)) });
      const old = makeTrace({ tenantId: "ten", timestampMs: BigInt(Date.UTC(1990, 0, 1)) });
      await ts.store.insert([fresh, future]);
      await ts.store.insert([old]);
      await ts.engine.command(sql`OPTIMIZE TABLE ${db}.traces FINAL`);
      const ids = (await ts.engine.query(sql`SELECT id FROM ${db}.traces`)).map((r) => str(r["id"])).sort();
      t.deepEqual(ids, [fresh.id, future.id, old.id].sort(), "nothing is within 20,000 days of expiring");
      t.deepEqual(await ts.store.dropExpiredPartitions(new Date()), []);
    } finally {
      await ts.dispose();
    }
  });
}
