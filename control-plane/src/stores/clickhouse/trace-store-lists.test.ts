// Tests of trace lists on every engine: keyset pages (order, filters, inclusive bounds, a walk that
// stays exact while rows are inserted), offset pages (filters, exact totals), duplicates never
// listed twice, hostile strings through every filter, and argument checks.

import test from "ava";
import type { Trace } from "@agentgov/proto";
import { TraceStoreError } from "./errors.js";
import { fuzzStrings, HOSTILE_STRINGS } from "./hostile-strings.js";
import { wellFormed } from "./sql-literal.js";
import {
  enginesUnderTest,
  makeTrace,
  newestFirst,
  openTestStore,
  randomTraces,
  removeChdbDataDir,
  type TestStore,
} from "./test-engines.js";
import type { CursorListQuery, OffsetListQuery, TraceStore } from "./types.js";

test.after.always(() => removeChdbDataDir());

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

async function walk(store: TraceStore, tenantId: string, q: Omit<CursorListQuery, "after">, between?: () => Promise<void>): Promise<Trace[]> {
  const out: Trace[] = [];
  let after: CursorListQuery["after"];
  for (let page = 0; page < 10_000; page++) {
    const r = await store.listByCursor(tenantId, after ? { ...q, after } : q);
    out.push(...r.traces);
    if (!r.hasMore) return out;
    const last = r.traces[r.traces.length - 1]!;
    after = { timestampMs: Number(last.timestampMs), id: last.id };
    if (between) await between();
  }
  throw new Error("walk did not end");
}

const ids = (ts: readonly Trace[]): string[] => ts.map((t) => t.id);

function withTs(ts: TestStore, fn: (ts: TestStore) => Promise<void>): Promise<void> {
  return fn(ts).finally(() => ts.dispose());
}

for (const kind of enginesUnderTest()) {
  test(`${kind}: cursor pages are newest first, exact, and honour every filter`, async (t) => {
    await withTs(await openTestStore(kind), async ({ store }) => {
      const now = Date.now();
      const data = randomTraces(700, { tenantId: "ten", fromMs: now - 30 * HOUR, toMs: now, seed: 11 });
      // Same millisecond, different ids: the id breaks the tie.
      const tie = [0, 1, 2].map((i) => makeTrace({ tenantId: "ten", timestampMs: BigInt(now - 5 * HOUR), id: `trc_TIE${i}` }));
      const all = [...data, ...tie];
      const other = randomTraces(50, { tenantId: "other", fromMs: now - 30 * HOUR, toMs: now, seed: 12 });
      await store.insert(all);
      await store.insert(other);
      await store.insert(data.slice(0, 100)); // duplicates must not show

      const range = { since: new Date(now - 31 * HOUR), until: new Date(now) };
      const expected = [...all].sort(newestFirst);
      const first = await store.listByCursor("ten", { ...range, limit: 50 });
      t.true(first.hasMore);
      t.deepEqual(ids(first.traces), ids(expected.slice(0, 50)));
      t.is(first.traces[0]?.prompt, "", "lists leave prompt out");
      t.deepEqual(first.traces[0]?.piiDetections, expected[0]?.piiDetections);

      t.deepEqual(ids(await walk(store, "ten", { ...range, limit: 37 })), ids(expected));
      t.deepEqual(ids(await walk(store, "ten", { ...range, limit: 1000 })), ids(expected));

      const filters: [Omit<CursorListQuery, "since" | "until" | "limit">, (x: Trace) => boolean][] = [
        [{ agentId: "agt_beta" }, (x) => x.agentId === "agt_beta"],
        [{ status: "blocked" }, (x) => x.status === "blocked"],
        [{ status: "error" }, (x) => x.status === "error"],
        [{ status: "success", hasPii: true }, (x) => x.status === "success" && x.piiDetections.length > 0],
        [{ hasPii: false, agentId: "agt_alpha" }, (x) => x.piiDetections.length === 0 && x.agentId === "agt_alpha"],
        [{ agentId: "agt_nobody" }, () => false],
      ];
      for (const [f, keep] of filters) {
        const got = await walk(store, "ten", { ...range, ...f, limit: 40 });
        t.deepEqual(ids(got), ids(expected.filter(keep)), JSON.stringify(f));
      }
      t.deepEqual(ids(await walk(store, "other", { ...range, limit: 100 })), ids([...other].sort(newestFirst)));
      t.deepEqual((await store.listByCursor("nobody", { ...range, limit: 10 })).traces, []);
    });
  });

  test(`${kind}: since and until are inclusive to the millisecond`, async (t) => {
    await withTs(await openTestStore(kind), async ({ store }) => {
      const base = Date.UTC(2026, 4, 1, 12, 0, 0, 0);
      const at = (ms: number, id: string): Trace => makeTrace({ tenantId: "ten", timestampMs: BigInt(ms), id });
      await store.insert([at(base + 499, "a"), at(base + 500, "b"), at(base + 1500, "c"), at(base + 1501, "d")]);
      const list = async (from: number, to: number): Promise<string[]> =>
        ids((await store.listByCursor("ten", { since: new Date(from), until: new Date(to), limit: 10 })).traces);
      t.deepEqual(await list(base + 500, base + 1500), ["c", "b"]);
      t.deepEqual(await list(base + 501, base + 1499), []);
      t.deepEqual(await list(base + 499, base + 1501), ["d", "c", "b", "a"]);
      t.deepEqual(await list(base + 1500, base + 1500), ["c"]);
      const offset = async (from: number, to: number): Promise<[string[], number]> => {
        const r = await store.listByOffset("ten", { limit: 10, offset: 0, startDate: new Date(from), endDate: new Date(to) });
        return [ids(r.traces), r.total];
      };
      t.deepEqual(await offset(base + 500, base + 1500), [["c", "b"], 2]);
      t.deepEqual(await offset(base + 501, base + 1499), [[], 0]);
      const stats = await store.stats("ten", { since: new Date(base + 500), until: new Date(base + 1500) });
      t.is(stats.summary.totalTraces, 2);
    });
  });

  test(`${kind}: a cursor walk returns every pre-existing row exactly once while rows are inserted`, async (t) => {
    await withTs(await openTestStore(kind), async ({ store }) => {
      const now = Date.now();
      const range = { since: new Date(now - 10 * HOUR), until: new Date(now + HOUR) };
      const initial = randomTraces(600, { tenantId: "ten", fromMs: now - 10 * HOUR, toMs: now, seed: 21 });
      await store.insert(initial);
      let seed = 100;
      const inserted: Trace[] = [];
      const between = async (): Promise<void> => {
        // New rows everywhere in the range (before and after the cursor) and re-inserts of old ones.
        const fresh = randomTraces(15, { tenantId: "ten", fromMs: now - 10 * HOUR, toMs: now + HOUR, seed: seed++ });
        inserted.push(...fresh);
        await store.insert([...fresh, initial[seed % initial.length]!]);
      };
      const concurrent = (async () => {
        for (let i = 0; i < 10; i++) await between();
      })();
      const seen = await walk(store, "ten", { ...range, limit: 25 }, between);
      await concurrent;
      const counts = new Map<string, number>();
      for (const x of seen) counts.set(x.id, (counts.get(x.id) ?? 0) + 1);
      for (const x of initial) t.is(counts.get(x.id), 1, x.id);
      for (const [id, n] of counts) t.is(n, 1, `listed ${n} times: ${id}`);
      for (let i = 1; i < seen.length; i++) t.true(newestFirst(seen[i - 1]!, seen[i]!) < 0, "strictly descending keys");
      t.true(inserted.length > 0);
    });
  });

  test(`${kind}: offset pages honour every filter with an exact total`, async (t) => {
    await withTs(await openTestStore(kind), async ({ store }) => {
      const now = Date.now();
      // 60 days of data plus a few rows in the future: windows must grow and still be exact.
      const data = [
        ...randomTraces(800, { tenantId: "ten", fromMs: now - 60 * DAY, toMs: now, seed: 31 }),
        ...randomTraces(5, { tenantId: "ten", fromMs: now + HOUR, toMs: now + 2 * HOUR, seed: 32 }),
      ];
      await store.insert(data);
      await store.insert(data.slice(0, 200));
      await store.insert(randomTraces(100, { tenantId: "other", fromMs: now - DAY, toMs: now, seed: 33 }));
      const expected = [...data].sort(newestFirst);
      const cases: [Omit<OffsetListQuery, "limit" | "offset">, (x: Trace) => boolean][] = [
        [{}, () => true],
        [{ status: "error" }, (x) => x.status === "error" || x.status === "blocked"],
        [{ status: "success" }, (x) => x.status === "success"],
        [{ agentId: "agt_gamma", environment: "staging" }, (x) => x.agentId === "agt_gamma" && x.environment === "staging"],
        [
          { startDate: new Date(now - 20 * DAY), endDate: new Date(now - 2 * DAY), minCostUsd: 0.002 },
          (x) => Number(x.timestampMs) >= now - 20 * DAY && Number(x.timestampMs) <= now - 2 * DAY && x.costUsd >= 0.002,
        ],
        [{ maxCostUsd: 0.003, minInjectionScore: 0.5 }, (x) => x.costUsd <= 0.003 && x.injectionScore >= 0.5],
        [
          { agentId: "agt_alpha", status: "error", minInjectionScore: 0.2, environment: "production" },
          (x) => x.agentId === "agt_alpha" && x.status !== "success" && x.injectionScore >= 0.2 && x.environment === "production",
        ],
        [{ environment: "nowhere" }, () => false],
      ];
      for (const [f, keep] of cases) {
        const want = expected.filter(keep);
        for (const [limit, offset] of [[50, 0], [7, 13], [500, 0], [100, want.length - 3], [10, want.length + 5]] as const) {
          if (offset < 0) continue;
          const r = await store.listByOffset("ten", { ...f, limit, offset });
          t.is(r.total, want.length, `total ${JSON.stringify(f)}`);
          t.deepEqual(ids(r.traces), ids(want.slice(offset, offset + limit)), `${JSON.stringify(f)} ${limit}/${offset}`);
        }
      }
    });
  });

  test(`${kind}: hostile strings pass every filter without error and match only their own rows`, async (t) => {
    await withTs(await openTestStore(kind), async ({ store }) => {
      const now = Date.now();
      const values = [...new Set([...HOSTILE_STRINGS, ...fuzzStrings(60, 3)].map((s) => s.slice(0, 300)))];
      const traces = values.map((s, i) =>
        makeTrace({
          tenantId: "ten",
          id: `trc_H${String(i).padStart(4, "0")}`,
          timestampMs: BigInt(now - i * 1000),
          agentId: s,
          environment: s,
          status: s,
          costUsd: 1,
        }),
      );
      await store.insert(traces);
      const range = { since: new Date(now - DAY), until: new Date(now) };
      for (const [i, s] of values.entries()) {
        const w = wellFormed(s);
        const want = values.map((v, j) => [wellFormed(v), j] as const).filter(([v]) => v === w).map(([, j]) => `trc_H${String(j).padStart(4, "0")}`);
        const label = JSON.stringify(s).slice(0, 60);
        t.deepEqual(ids((await store.listByCursor("ten", { ...range, agentId: s, limit: 100 })).traces).sort(), want, label);
        t.deepEqual(ids((await store.listByCursor("ten", { ...range, status: s as "success", limit: 100 })).traces).sort(), want, label);
        const off = await store.listByOffset("ten", { agentId: s, environment: s, limit: 100, offset: 0 });
        t.is(off.total, want.length, label);
        const stats = await store.stats("ten", { ...range, agentId: s, groupBy: "environment" });
        t.is(stats.summary.totalTraces, want.length, label);
        t.deepEqual(stats.groups.map((g) => ("environment" in g ? g.environment : null)), [w], label);
        const metrics = await store.agentMetrics("ten", [s], new Date(now));
        t.is(metrics.get(s)?.totalRequests, want.length, label);
        if (s === "") {
          await t.throwsAsync(() => store.get(s, traces[i]!.id), { instanceOf: TraceStoreError }, "empty tenant id");
        } else {
          t.is(await store.get(s, traces[i]!.id), null, "a hostile tenant id sees nothing");
          t.deepEqual((await store.listByCursor(s, { ...range, limit: 5 })).traces, []);
        }
        const e = await t.throwsAsync(() => store.listByOffset("ten", { status: s as "success", limit: 5, offset: 0 }), {
          instanceOf: TraceStoreError,
        });
        t.is(e?.code, "invalid_argument");
        await t.throwsAsync(() => store.dailySpend("ten", s), { instanceOf: TraceStoreError });
      }
      const total = await store.listByOffset("ten", { limit: 1, offset: 0 });
      t.is(total.total, values.length, "nothing was changed by the hostile filters");
    });
  });

  test(`${kind}: list arguments are checked`, async (t) => {
    await withTs(await openTestStore(kind), async ({ store }) => {
      const range = { since: new Date(0), until: new Date() };
      for (const limit of [0, -1, 1001, 1.5, Number.NaN]) {
        const e = await t.throwsAsync(() => store.listByCursor("ten", { ...range, limit }), { instanceOf: TraceStoreError });
        t.is(e?.code, "invalid_argument");
        await t.throwsAsync(() => store.listByOffset("ten", { limit, offset: 0 }), { instanceOf: TraceStoreError });
      }
      await t.throwsAsync(() => store.listByOffset("ten", { limit: 1, offset: -1 }), { instanceOf: TraceStoreError });
      await t.throwsAsync(() => store.listByCursor("ten", { since: new Date("x"), until: new Date(), limit: 1 }), { instanceOf: TraceStoreError });
      await t.throwsAsync(() => store.listByOffset("ten", { limit: 1, offset: 0, minCostUsd: Number.NaN }), { instanceOf: TraceStoreError });
      await t.throwsAsync(() => store.listByOffset("ten", { limit: 1, offset: 0, maxCostUsd: Infinity }), { instanceOf: TraceStoreError });
      await t.throwsAsync(
        () => store.listByCursor("ten", { ...range, limit: 1, after: { timestampMs: Number.NaN, id: "x" } }),
        { instanceOf: TraceStoreError },
      );
    });
  });
}
