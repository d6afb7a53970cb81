// The ingest writer on a real trace store (chDB; the server too when CLICKHOUSE_URL is set), with the
// store's inserts switched off to play an outage: nothing is acknowledged while the store is down,
// the traces held in memory never exceed the bound (further writes wait for room), a write whose
// stream went away is dropped while it waits for room (an admitted one is still stored), everything
// is stored exactly once when the store comes back; a trace the store cannot hold is refused alone; after-insert failures are retried;
// shutdown rejects what it cannot store.
import test from "ava";
import { toBinary } from "@bufbuild/protobuf";
import { TraceSchema, type Trace } from "@agentgov/proto";
import { TraceStoreError, type TraceFacts, type TraceStore, type TranscodedTrace } from "../stores/clickhouse/index.js";
import { enginesUnderTest, makeTrace, openTestStore, removeChdbDataDir, type TestStore } from "../stores/clickhouse/test-engines.js";
import { IngestWriteError, IngestWriter, type Refused } from "./writer.js";

test.after.always(() => removeChdbDataDir());

/** The real store, with inserts that fail while `down` is set (as a stopped server's would). */
function switchable(store: TraceStore) {
  const s = { down: false, attempts: 0 };
  const wrapped: TraceStore = {
    engine: store.engine,
    ping: () => store.ping(),
    insert: async (traces) => {
      s.attempts++;
      if (s.down) throw new TraceStoreError("engine_unavailable", "ClickHouse insert failed: connect ECONNREFUSED");
      return store.insert(traces);
    },
    transcode: (bytes) => store.transcode(bytes),
    insertTranscoded: async (rows) => {
      s.attempts++;
      if (s.down) throw new TraceStoreError("engine_unavailable", "ClickHouse insert failed: connect ECONNREFUSED");
      return store.insertTranscoded(rows);
    },
    get: (a, b) => store.get(a, b),
    listByCursor: (a, q) => store.listByCursor(a, q),
    listByOffset: (a, q) => store.listByOffset(a, q),
    stats: (a, q) => store.stats(a, q),
    agentMetrics: (a, ids, now) => store.agentMetrics(a, ids, now),
    dailySpend: (a, d) => store.dailySpend(a, d),
    compliance: (a, q) => store.compliance(a, q),
    refreshRollups: (now) => store.refreshRollups(now),
    dropExpiredPartitions: (now) => store.dropExpiredPartitions(now),
    close: () => store.close(),
  };
  return { store: wrapped, s };
}

const tick = (ms = 20) => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await tick();
  }
}

/** Traces as the ingest service hands them to the writer: transcoded by the store. */
function transcoded(store: TraceStore, traces: Trace[]): TranscodedTrace[] {
  return traces.map((t) => store.transcode(toBinary(TraceSchema, t)));
}

function batchOf(store: TraceStore, tenantId: string, n: number, startMs: number): TranscodedTrace[] {
  return transcoded(
    store,
    Array.from({ length: n }, (_, i) => makeTrace({ tenantId, timestampMs: BigInt(startMs + i) })),
  );
}

async function count(ts: TestStore, tenantId: string): Promise<number> {
  return (await ts.store.stats(tenantId, { since: new Date(0), until: new Date(Date.now() + 86_400_000) })).summary.totalTraces;
}

for (const kind of enginesUnderTest()) {
  test.serial(`[${kind}] during an outage: nothing acknowledged, memory bounded, waiting writes droppable, all stored once afterwards`, async (t) => {
    const ts = await openTestStore(kind);
    try {
      const { store, s } = switchable(ts.store);
      const afterInsert: TraceFacts[][] = [];
      const writer = new IngestWriter(store, async (xs) => void afterInsert.push(xs), { maxBatch: 100, maxPending: 300, flushMs: 10, retryMaxMs: 40 });
      const tenantId = "ten_writer_outage";
      s.down = true;
      const settled = new Map<number, "resolved" | "rejected">();
      const aborts = new Map<number, AbortController>();
      const writes = Array.from({ length: 12 }, (_, i) => {
        const ac = new AbortController();
        aborts.set(i, ac);
        const traces = batchOf(store, tenantId, 50, 1_700_000_000_000 + i * 1000);
        const p = writer.write(traces, ac.signal);
        p.then(() => settled.set(i, "resolved"), () => settled.set(i, "rejected"));
        return { traces, p };
      });
      await until(() => s.attempts >= 5, "several failed insert attempts");
      const st = writer.stats();
      t.is(settled.size, 0, "nothing is acknowledged while the store is down");
      t.true(st.held <= 300, `held ${st.held}`);
      t.true(st.heldHighWater <= 300, `high water ${st.heldHighWater}`);
      t.is(st.waitingWrites, 6, "writes beyond the bound wait for room");
      t.true(st.insertFailures >= 5);

      // Write 11 waits for room: its stream goes away and it is dropped, letting nobody in (it was last).
      aborts.get(11)!.abort();
      const e11 = await t.throwsAsync(writes[11]!.p);
      t.true(e11 instanceof IngestWriteError && e11.reason === "aborted");
      t.is(writer.stats().waitingWrites, 5);
      // Write 3 is queued and write 0 is being inserted: their streams going away changes nothing.
      aborts.get(3)!.abort();
      aborts.get(0)!.abort();
      await tick(100);
      t.is(settled.size, 1);
      t.true(writer.stats().heldHighWater <= 300);

      s.down = false;
      const results = await Promise.allSettled(writes.map((w) => w.p));
      const stored = writes.filter((_, i) => i !== 11);
      t.deepEqual(
        results.map((r) => r.status),
        writes.map((_, i) => (i === 11 ? "rejected" : "fulfilled")),
      );
      t.is(await count(ts, tenantId), stored.length * 50);
      const finished = new Set(afterInsert.flat().map((x) => x.id));
      t.is(finished.size, stored.length * 50, "after-insert ran for every stored trace");
      for (const w of stored) for (const x of w.traces) t.true(finished.has(x.facts.id));
      t.is(writer.stats().held, 0);
      t.true(writer.stats().heldHighWater <= 300);
      await writer.drain();
    } finally {
      await ts.dispose();
    }
  });

  test.serial(`[${kind}] a trace the store refuses is refused alone; after-insert failures are retried`, async (t) => {
    const ts = await openTestStore(kind);
    try {
      let failures = 2;
      const seen: string[] = [];
      // The real store, refusing any insert that holds one marked trace (as it would a value it cannot hold).
      let badId = "";
      const refusing: TraceStore = {
        ...switchable(ts.store).store,
        insertTranscoded: async (rows) => {
          if (rows.some((r) => r.facts.id === badId)) throw new TraceStoreError("invalid_argument", `trace ${badId}: timestamp_ms out of range`);
          return ts.store.insertTranscoded(rows);
        },
      };
      const writer = new IngestWriter(
        refusing,
        async (xs) => {
          if (failures-- > 0) throw new Error("postgres is restarting");
          seen.push(...xs.map((x) => x.id));
        },
        { flushMs: 10, retryMaxMs: 40 },
      );
      const tenantId = "ten_writer_refuse";
      const good = batchOf(ts.store, tenantId, 5, 1_700_000_000_000);
      const [bad] = batchOf(ts.store, tenantId, 1, 1_700_000_000_100);
      badId = bad!.facts.id;
      const refused: Refused = await writer.write([...good.slice(0, 2), bad!, ...good.slice(2)]);
      t.deepEqual([...refused.keys()], [badId]);
      t.regex(refused.get(badId)!, /timestamp_ms/);
      t.is(await count(ts, tenantId), 5);
      t.deepEqual(seen.sort(), good.map((x) => x.facts.id).sort());
      await writer.drain();
    } finally {
      await ts.dispose();
    }
  });

  test.serial(`[${kind}] shutdown during an outage rejects what it cannot store, and refuses new writes`, async (t) => {
    const ts = await openTestStore(kind);
    try {
      const { store, s } = switchable(ts.store);
      const writer = new IngestWriter(store, async () => undefined, { maxBatch: 10, maxPending: 20, flushMs: 10, retryMaxMs: 40 });
      s.down = true;
      const tenantId = "ten_writer_drain";
      const ps = [0, 1, 2, 3].map((i) => writer.write(batchOf(store, tenantId, 10, 1_700_000_000_000 + i * 100)));
      await until(() => s.attempts >= 2, "failed inserts");
      await writer.drain();
      const results = await Promise.allSettled(ps);
      t.true(results.every((r) => r.status === "rejected"));
      await t.throwsAsync(writer.write(batchOf(store, tenantId, 1, 1_700_000_000_000)), { instanceOf: IngestWriteError });
      t.is(writer.stats().held, 0);
    } finally {
      await ts.dispose();
    }
  });
}
