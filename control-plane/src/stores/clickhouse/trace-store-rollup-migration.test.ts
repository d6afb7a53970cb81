// Upgrading a trace store that holds traces from before the rollups (schema migration 2): the
// migration marks every hour that already has traces, so the first refresh rolls all of them up and
// statistics over them stay those of the traces.
import test from "ava";
import { num } from "./json-values.js";
import { sql, sqlIdent } from "./sql-literal.js";
import { enginesUnderTest, openTestStore, randomTraces, removeChdbDataDir, storeOptions } from "./test-engines.js";
import { openTraceStore } from "./trace-store.js";

test.after.always(() => removeChdbDataDir());

const HOUR = 3_600_000;

for (const kind of enginesUnderTest()) {
  test.serial(`[${kind}] migration 2 rolls up the hours written before it`, async (t) => {
    const ts = await openTestStore(kind, { rollupMarginMs: 0 });
    try {
      const now = Date.now();
      const data = randomTraces(400, { tenantId: "ten_mig", fromMs: now - 30 * HOUR, toMs: now - 3 * HOUR, seed: 9 });
      await ts.store.insert(data);
      // Back to a store of schema version 1 holding these traces: no rollup tables, no record of migration 2.
      const db = sqlIdent(ts.database);
      for (const table of ["traces_hourly", "traces_hourly_latency", "traces_hour_marks"]) {
        await ts.engine.command(sql`DROP TABLE IF EXISTS ${db}.${sqlIdent(table)}`);
      }
      await ts.engine.command(sql`DROP TABLE ${db}.schema_migrations`);
      await ts.engine.command(sql`CREATE TABLE ${db}.schema_migrations (version UInt32, name String, applied_at DateTime('UTC')) ENGINE = MergeTree ORDER BY version`);
      await ts.engine.command(sql`INSERT INTO ${db}.schema_migrations (version, name, applied_at) SELECT 1, 'create traces', now()`);

      const upgraded = await openTraceStore(storeOptions(kind, ts.database, { rollupMarginMs: 0 }));
      try {
        const hours = new Set(data.map((r) => Math.floor(Number(r.timestampMs) / HOUR))).size;
        t.is(await upgraded.refreshRollups(new Date()), hours, "every hour with traces is rolled up");
        const rolled = await ts.engine.query(sql`SELECT sum(trace_count) AS n FROM ${db}.traces_hourly FINAL WHERE tenant_id = 'ten_mig'`);
        t.is(num(rolled[0]?.["n"]), data.length);
        const s = await upgraded.stats("ten_mig", { since: new Date(now - 31 * HOUR), until: new Date(now) });
        t.is(s.summary.totalTraces, data.length);
        t.true(Math.abs(s.summary.totalCostUsd - data.reduce((a, r) => a + r.costUsd, 0)) < 1e-9);
      } finally {
        await upgraded.close();
      }
    } finally {
      await ts.dispose();
    }
  });
}
