// The rollup refresher on a real trace store: it computes the rollups of closed hours by itself, runs
// again while there is more to do, keeps going after a failed run (logged), and stops cleanly.
import test from "ava";
import { enginesUnderTest, openTestStore, randomTraces, removeChdbDataDir } from "../stores/clickhouse/test-engines.js";
import type { TraceStore } from "../stores/clickhouse/index.js";
import { RollupRefresher } from "./rollup-refresher.js";

test.after.always(() => removeChdbDataDir());

const HOUR = 3_600_000;

async function until(cond: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

for (const kind of enginesUnderTest()) {
  test.serial(`[${kind}] computes the rollups of closed hours on its own, survives a failed run, stops cleanly`, async (t) => {
    const ts = await openTestStore(kind, { rollupMarginMs: 0 });
    try {
      const now = Date.now();
      const traces = randomTraces(300, { tenantId: "ten_refresh", fromMs: now - 6 * HOUR, toMs: now - 2 * HOUR, seed: 3 });
      await ts.store.insert(traces);
      const runs: number[] = [];
      let failNext = true;
      const warnings: string[] = [];
      // The real store; its first refresh fails as an unreachable engine would.
      const store: Pick<TraceStore, "refreshRollups"> = {
        refreshRollups: async (at) => {
          if (failNext) {
            failNext = false;
            throw new Error("ClickHouse is restarting");
          }
          const n = await ts.store.refreshRollups(at);
          runs.push(n);
          return n;
        },
      };
      const refresher = new RollupRefresher(store, { warn: (_o, m) => void warnings.push(m ?? "") }, 50, 2);
      refresher.start(0);
      // The first successful run computes every closed hour (a "full batch" of ≥ 2 here, so the next
      // run comes after 1 s instead of the interval), the next one finds nothing left.
      await until(() => runs.includes(0), "a run with nothing left to compute");
      await refresher.stop();
      t.is(warnings.length, 1, "the failed run is logged once");
      t.deepEqual(runs.slice(0, 2), [new Set(traces.map((r) => Math.floor(Number(r.timestampMs) / HOUR))).size, 0]);
      const after = runs.length;
      await new Promise((r) => setTimeout(r, 200));
      t.is(runs.length, after, "no run after stop()");
      // The window's statistics now come from the rollups and still count every trace.
      const s = await ts.store.stats("ten_refresh", { since: new Date(now - 7 * HOUR), until: new Date(now) });
      t.is(s.summary.totalTraces, traces.length);
    } finally {
      await ts.dispose();
    }
  });
}
