// Tests of trace storage on every engine: every field of the Trace message round-trips, a trace
// inserted twice is one row (the newest copy wins), hostile strings come back equal, bad input is
// refused, migrations are idempotent, and reads are confined to the tenant.

import test from "ava";
import {
  create,
  toBinary,
  PiiDetectionSchema,
  QualityScoreSchema,
  SpanSchema,
  ToolCallSchema,
  TraceSchema,
  toJson,
} from "@agentgov/proto";
import { TraceStoreError } from "./errors.js";
import { HOSTILE_STRINGS } from "./hostile-strings.js";
import { num } from "./json-values.js";
import { sql, sqlIdent, wellFormed } from "./sql-literal.js";
import { MIGRATIONS } from "./schema.js";
import { openTraceStore } from "./trace-store.js";
import { enginesUnderTest, fullTrace, makeTrace, openTestStore, removeChdbDataDir, storeOptions, traceId } from "./test-engines.js";

test.after.always(() => removeChdbDataDir());

for (const kind of enginesUnderTest()) {
  test(`${kind}: every field of a trace round-trips through insert and get`, async (t) => {
    const ts = await openTestStore(kind, { storeRawPii: true }); // prompt and completion as sent, too
    try {
      const ms = Date.UTC(2026, 0, 15, 10, 30, 45, 678);
      const full = fullTrace("ten_a", ms);
      const bare = makeTrace({ tenantId: "ten_a", timestampMs: BigInt(ms + 1) });
      await ts.store.insert([full, bare]);
      const got = await ts.store.get("ten_a", full.id);
      t.deepEqual(got, full);
      t.deepEqual(toJson(TraceSchema, got!), toJson(TraceSchema, full));
      const gotBare = await ts.store.get("ten_a", bare.id);
      t.deepEqual(gotBare, bare);
      t.is(gotBare?.sessionId, undefined, "an absent session id stays absent");
      t.deepEqual(gotBare?.spans, []);
    } finally {
      await ts.dispose();
    }
  });

  test(`${kind}: decimal figures read back as written (18.16 reads some one ulp off), and exact cost bounds find them`, async (t) => {
    const ts = await openTestStore(kind);
    try {
      const ms = Date.now() - 60_000;
      // costs the 18.16 text parser misreads (0.00071925: 1,051 input + 936 output tokens of gpt-4o-mini)
      const costs = [0.00071925, 1.1e-9, 3.3e-9, 7e-10, 0.3, 12.3456789012];
      const traces = costs.map((c, i) =>
        makeTrace({
          tenantId: "ten_ulp",
          timestampMs: BigInt(ms + i),
          costUsd: c,
          inputCost: c,
          outputCost: 0,
          pricePerMillionInput: 0.15,
          pricePerMillionOutput: 0.6,
          latencyMs: 1.1e-9 + i,
          injectionScore: 0.07,
          spans: [create(SpanSchema, { stage: "provider", durationMs: 3.3e-9 })],
        }),
      );
      await ts.store.insert(traces);
      for (const [i, c] of costs.entries()) {
        const got = await ts.store.get("ten_ulp", traces[i]!.id);
        t.like(got, { costUsd: c, inputCost: c, pricePerMillionInput: 0.15, pricePerMillionOutput: 0.6, latencyMs: 1.1e-9 + i, injectionScore: 0.07 }, `cost ${c}`);
        t.is(got?.spans[0]?.durationMs, 3.3e-9);
        const exact = await ts.store.listByOffset("ten_ulp", { limit: 10, offset: 0, minCostUsd: c, maxCostUsd: c });
        t.deepEqual(exact.traces.map((x) => x.id), [traces[i]!.id], `minCostUsd = maxCostUsd = ${c}`);
      }
      t.is((await ts.store.listByOffset("ten_ulp", { limit: 10, offset: 0, minInjectionScore: 0.07 })).total, costs.length);
    } finally {
      await ts.dispose();
    }
  });

  test(`${kind}: a trace inserted twice is stored once and the newest copy wins`, async (t) => {
    const ts = await openTestStore(kind);
    try {
      const ms = Date.now() - 60_000;
      const first = makeTrace({ tenantId: "ten", timestampMs: BigInt(ms), prompt: "first", costUsd: 1 });
      const second = create(TraceSchema, { ...first, prompt: "second", qualityScores: [create(QualityScoreSchema, { scorer: "late", score: 1 })] });
      await ts.store.insert([first]);
      await ts.store.insert([first]);
      await ts.store.insert([second]);
      t.deepEqual(await ts.store.get("ten", first.id), second);
      const rows = await ts.engine.query(sql`SELECT count() AS n FROM ${sqlIdent(ts.database)}.traces FINAL`);
      t.is(num(rows[0]?.["n"]), 1);
    } finally {
      await ts.dispose();
    }
  });

  test(`${kind}: hostile strings in every string field come back equal`, async (t) => {
    const ts = await openTestStore(kind);
    try {
      const base = Date.UTC(2026, 1, 1, 0, 0, 0);
      const traces = HOSTILE_STRINGS.map((s, i) =>
        makeTrace({
          tenantId: "ten",
          id: `id-${i}-${s.slice(0, 100)}`,
          timestampMs: BigInt(base + i),
          agentId: s,
          agentName: s,
          environment: s,
          sessionId: s,
          model: s,
          status: s,
          errorCode: s,
          prompt: s,
          completion: s + s,
          policiesFired: [s, ""],
          spans: [create(SpanSchema, { stage: s, durationMs: 1 })],
          piiDetections: [create(PiiDetectionSchema, { entityType: s, source: s })],
          toolCalls: [create(ToolCallSchema, { name: s, id: s })],
        }),
      );
      await ts.store.insert(traces);
      for (const [i, s] of HOSTILE_STRINGS.entries()) {
        const id = wellFormed(`id-${i}-${s.slice(0, 100)}`);
        const got = await ts.store.get("ten", id);
        const w = wellFormed(s);
        t.truthy(got, JSON.stringify(s).slice(0, 60));
        t.is(got?.agentId, w);
        t.is(got?.environment, w);
        t.is(got?.sessionId, w);
        t.is(got?.prompt, w);
        t.is(got?.completion, wellFormed(s + s));
        t.deepEqual(got?.policiesFired, [w, ""]);
        t.is(got?.spans[0]?.stage, w);
        t.is(got?.piiDetections[0]?.entityType, w);
        t.is(got?.toolCalls[0]?.id, w);
      }
    } finally {
      await ts.dispose();
    }
  });

  test(`${kind}: bad traces are refused and non-finite numbers are stored as 0 with a warning`, async (t) => {
    const warnings: object[] = [];
    const ts = await openTestStore(kind, { logger: { warn: (o) => warnings.push(o) } });
    try {
      const ms = Date.now();
      for (const bad of [
        makeTrace({ tenantId: "", timestampMs: BigInt(ms) }),
        makeTrace({ tenantId: "ten", id: "", timestampMs: BigInt(ms) }),
        makeTrace({ tenantId: "ten", timestampMs: -1n }),
        makeTrace({ tenantId: "ten", timestampMs: 2n ** 60n }),
      ]) {
        const e = await t.throwsAsync(() => ts.store.insert([makeTrace({ tenantId: "ten", timestampMs: BigInt(ms) }), bad]), {
          instanceOf: TraceStoreError,
        });
        t.is(e?.code, "invalid_argument");
      }
      const rows = await ts.engine.query(sql`SELECT count() AS n FROM ${sqlIdent(ts.database)}.traces`);
      t.is(num(rows[0]?.["n"]), 0, "a refused batch writes nothing");

      const odd = makeTrace({ tenantId: "ten", timestampMs: BigInt(ms), costUsd: Number.NaN, latencyMs: Infinity });
      await ts.store.insert([odd]);
      const got = await ts.store.get("ten", odd.id);
      t.is(got?.costUsd, 0);
      t.is(got?.latencyMs, 0);
      t.is(warnings.length, 1);
    } finally {
      await ts.dispose();
    }
  });

  test(`${kind}: get is confined to the tenant, finds ids without ULID time, and misses cleanly`, async (t) => {
    const ts = await openTestStore(kind);
    try {
      const ms = Date.UTC(2026, 2, 3, 4, 5, 6, 7);
      const plain = makeTrace({ tenantId: "ten_a", id: "not-a-ulid", timestampMs: BigInt(ms) });
      // A ULID whose embedded time is a year away from the trace's timestamp.
      const skewed = makeTrace({ tenantId: "ten_a", id: traceId(ms - 365 * 86_400_000), timestampMs: BigInt(ms) });
      await ts.store.insert([plain, skewed]);
      t.deepEqual(await ts.store.get("ten_a", "not-a-ulid"), plain);
      t.deepEqual(await ts.store.get("ten_a", skewed.id), skewed);
      t.is(await ts.store.get("ten_b", "not-a-ulid"), null);
      t.is(await ts.store.get("ten_a", traceId(ms)), null);
      t.is(await ts.store.get("ten_a", "' OR 1=1 --"), null);
      await t.throwsAsync(() => ts.store.get("", "x"), { instanceOf: TraceStoreError });
    } finally {
      await ts.dispose();
    }
  });

  test(`${kind}: opening the same database again is idempotent and keeps the data`, async (t) => {
    const ts = await openTestStore(kind);
    try {
      const tr = makeTrace({ tenantId: "ten", timestampMs: BigInt(Date.now()) });
      await ts.store.insert([tr]);
      const again = await openTraceStore(storeOptions(kind, ts.database));
      try {
        t.deepEqual(await again.get("ten", tr.id), tr);
      } finally {
        await again.close();
      }
      const rows = await ts.engine.query(sql`SELECT count() AS n FROM ${sqlIdent(ts.database)}.schema_migrations`);
      t.is(num(rows[0]?.["n"]), MIGRATIONS.length, "each migration recorded once");
      t.is(ts.store.engine, kind);
      t.true(await ts.store.ping());
    } finally {
      await ts.dispose();
    }
  });

  test(`${kind}: invalid options are refused`, async (t) => {
    for (const database of ["", "a-b", "x; DROP", "1x"]) {
      const e = await t.throwsAsync(() => openTraceStore(storeOptions(kind, database)), { instanceOf: TraceStoreError });
      t.is(e?.code, "invalid_argument");
    }
    const e = await t.throwsAsync(() => openTraceStore(storeOptions(kind, "t_ok", { retentionDays: 0 })), {
      instanceOf: TraceStoreError,
    });
    t.is(e?.code, "invalid_argument");
  });
}

test("server: a malformed URL is refused with invalid_argument", async (t) => {
  for (const url of ["not a url", "ftp://127.0.0.1:8123", "http://"]) {
    const e = await t.throwsAsync(() => openTraceStore({ url, database: "t_x", dataDir: "/nonexistent", retentionDays: 30 }), {
      instanceOf: TraceStoreError,
    });
    t.is(e?.code, "invalid_argument", url);
  }
});

test("server: an unreachable URL fails with engine_unavailable", async (t) => {
  const e = await t.throwsAsync(
    () => openTraceStore({ url: "http://127.0.0.1:9", database: "t_x", dataDir: "/nonexistent", retentionDays: 30 }),
    { instanceOf: TraceStoreError },
  );
  t.is(e?.code, "engine_unavailable");
});

for (const kind of enginesUnderTest()) {
  test(`${kind}: prompt, completion and input_extras keep no detected PII in clear unless TRACE_STORE_RAW_PII, whatever the sidecar sent`, async (t) => {
    // What a sidecar running with TRACE_STORE_RAW_PII=true sends: its findings and the text in clear.
    const prompt = "Mail jo@example.com about SSN 234-56-7891, please.";
    const completion = "Done: wrote to jo@example.com.";
    const inputExtras = "Look up a customer, e.g. SSN 536-22-8741.\n\ncard: 4111 1111 1111 1111";
    const at = (text: string, part: string, source: string, entityType: string) =>
      create(PiiDetectionSchema, { entityType, start: text.indexOf(part), end: text.indexOf(part) + part.length, source, score: 0.9 });
    const raw = makeTrace({
      tenantId: "ten_a",
      timestampMs: BigInt(Date.UTC(2026, 0, 16)),
      prompt,
      completion,
      inputExtras,
      piiDetections: [
        at(prompt, "jo@example.com", "prompt", "email"),
        at(prompt, "234-56-7891", "prompt", "ssn"),
        at(inputExtras, "536-22-8741", "tool_definition", "ssn"),
        at(inputExtras, "4111 1111 1111 1111", "prediction", "credit_card"),
        at(completion, "jo@example.com", "completion", "email"),
      ],
    });
    const masked = await openTestStore(kind);
    const clear = await openTestStore(kind, { storeRawPii: true });
    try {
      const shipped = makeTrace({ ...raw, id: traceId(Date.UTC(2026, 0, 16)) });
      for (const ts of [masked, clear]) {
        await ts.store.insert([raw]); // a Trace message
        await ts.store.insertTranscoded([ts.store.transcode(toBinary(TraceSchema, shipped))]); // the ingest path: encoded bytes
      }
      for (const id of [raw.id, shipped.id]) {
        const got = await masked.store.get("ten_a", id);
        t.is(got?.prompt, "Mail ************** about SSN ***********, please.");
        t.is(got?.completion, "Done: wrote to **************.");
        t.is(got?.inputExtras, "Look up a customer, e.g. SSN ***********.\n\ncard: *******************");
        t.deepEqual(got?.piiDetections, raw.piiDetections, "the findings themselves are kept (offsets stay valid)");
        const kept = await clear.store.get("ten_a", id);
        t.is(kept?.prompt, prompt, "TRACE_STORE_RAW_PII=true keeps what the sidecar sent");
        t.is(kept?.completion, completion);
        t.is(kept?.inputExtras, inputExtras);
      }
    } finally {
      await masked.dispose();
      await clear.dispose();
    }
  });
}

for (const kind of enginesUnderTest()) {
  test.serial(`${kind}: migration 3 adds input_extras to a table from before it; its traces read "" there, new ones keep it; lists leave it out`, async (t) => {
    const ts = await openTestStore(kind, { storeRawPii: true });
    try {
      const db = sqlIdent(ts.database);
      const ms = Date.UTC(2026, 0, 20, 8);
      const old = makeTrace({ tenantId: "ten_m", timestampMs: BigInt(ms), prompt: "old" });
      await ts.store.insert([old]);
      // Back to a store of schema version 2: no input_extras column, no record of migration 3.
      await ts.engine.command(sql`ALTER TABLE ${db}.traces DROP COLUMN input_extras`);
      await ts.engine.command(sql`DROP TABLE ${db}.schema_migrations`);
      await ts.engine.command(sql`CREATE TABLE ${db}.schema_migrations (version UInt32, name String, applied_at DateTime('UTC')) ENGINE = MergeTree ORDER BY version`);
      await ts.engine.command(sql`INSERT INTO ${db}.schema_migrations (version, name, applied_at) SELECT 1, 'create traces', now()`);
      await ts.engine.command(sql`INSERT INTO ${db}.schema_migrations (version, name, applied_at) SELECT 2, 'hourly rollups', now()`);
      // In table order (18.16's system.columns has no position).
      const columns = async () => (await ts.engine.query(sql`DESCRIBE TABLE ${db}.traces`)).map((r) => String(r["name"]));
      t.false((await columns()).includes("input_extras"));

      const upgraded = await openTraceStore(storeOptions(kind, ts.database, { storeRawPii: true }));
      try {
        const names = await columns();
        t.is(names.indexOf("input_extras"), names.indexOf("completion") + 1, "added after completion");
        t.deepEqual(await upgraded.get("ten_m", old.id), old, "a trace from before reads input_extras as empty");
        const extras = "Look up a customer, e.g. SSN ***********.";
        const fresh = makeTrace({ tenantId: "ten_m", timestampMs: BigInt(ms + 1), inputExtras: extras, piiDetections: [create(PiiDetectionSchema, { entityType: "ssn", start: 29, end: 40, source: "tool_definition", score: 0.9 })] });
        await upgraded.insert([fresh]);
        t.deepEqual(await upgraded.get("ten_m", fresh.id), fresh);
        const listed = await upgraded.listByCursor("ten_m", { since: new Date(ms - 1), until: new Date(ms + 2), hasPii: true, limit: 10 });
        t.deepEqual(listed.traces.map((x) => [x.id, x.inputExtras]), [[fresh.id, ""]], "a list reads no texts; the finding counts as PII");
        // Opening again runs nothing: each migration is recorded once.
        const again = await openTraceStore(storeOptions(kind, ts.database));
        await again.close();
        const rows = await ts.engine.query(sql`SELECT count() AS n FROM ${db}.schema_migrations`);
        t.is(num(rows[0]?.["n"]), MIGRATIONS.length);
      } finally {
        await upgraded.close();
      }
    } finally {
      await ts.dispose();
    }
  });
}
