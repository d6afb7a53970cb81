// Tests of retention: month partitions that ended at least retentionDays ago are dropped whole,
// younger ones and other databases are kept.

import test from "ava";
import { expiredPartitions } from "./retention.js";
import { monthPartitionEndMs } from "./time.js";
import { enginesUnderTest, makeTrace, openTestStore, removeChdbDataDir } from "./test-engines.js";

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
    const a = await openTestStore(kind, { retentionDays: 30 });
    const b = await openTestStore(kind, { retentionDays: 30 });
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
}
