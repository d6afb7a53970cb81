// Tests of the chDB engine: it does not block the event loop, several stores of one process share
// its one session (each in its own database), and another data directory is refused while open.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import test from "ava";
import { chdbSessionPath } from "./chdb-session.js";
import { ChdbEngine } from "./engine-chdb.js";
import { TraceStoreError } from "./errors.js";
import { num } from "./json-values.js";
import { sql, sqlIdent } from "./sql-literal.js";
import { openTraceStore } from "./trace-store.js";
import { chdbDataDir, makeTrace, randomDatabase, removeChdbDataDir } from "./test-engines.js";

test.after.always(() => removeChdbDataDir());

/** Counts how often a 1 ms interval fires while `work` runs. */
async function ticksDuring(work: () => Promise<unknown>): Promise<number> {
  let ticks = 0;
  const timer = setInterval(() => {
    ticks += 1;
  }, 1);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return ticks;
}

test.serial("a heavy query and a large insert leave the event loop free (timers keep firing)", async (t) => {
  const engine = await ChdbEngine.open(join(chdbDataDir(), "chdb"));
  const db = sqlIdent(randomDatabase());
  try {
    const queryTicks = await ticksDuring(() => engine.query(sql`SELECT sum(cityHash64(number)) AS s FROM numbers(300000000)`));
    t.true(queryTicks >= 3, `interval fired ${queryTicks} times during the query`);

    await engine.command(sql`CREATE DATABASE ${db}`);
    const table = sql`${db}.big`;
    await engine.command(sql`CREATE TABLE ${table} (n UInt64, s String) ENGINE = MergeTree ORDER BY n`);
    const commandTicks = await ticksDuring(() =>
      engine.command(sql`INSERT INTO ${table} SELECT number, toString(cityHash64(number)) FROM numbers(5000000)`),
    );
    t.true(commandTicks >= 3, `interval fired ${commandTicks} times during INSERT … SELECT`);

    const body = Buffer.from(Array.from({ length: 200_000 }, (_, i) => `${i}\t${"x".repeat(50)}\n`).join(""));
    const insert = engine.insertTabSeparated(table, ["n", "s"], body);
    const insertTicks = await ticksDuring(() => insert);
    t.true(insertTicks >= 1, `interval fired ${insertTicks} times during the insert`);
    const count = await engine.query(sql`SELECT count() AS n FROM ${table}`);
    t.is(num(count[0]?.["n"]), 5_200_000);
  } finally {
    await engine.command(sql`DROP DATABASE IF EXISTS ${db}`);
    await engine.close();
  }
});

test.serial("stores in one process share the session and stay isolated by database", async (t) => {
  const dbA = randomDatabase();
  const dbB = randomDatabase();
  const a = await openTraceStore({ database: dbA, dataDir: chdbDataDir(), retentionDays: 30 });
  const b = await openTraceStore({ database: dbB, dataDir: chdbDataDir(), retentionDays: 30 });
  try {
    t.is(a.engine, "chdb");
    const now = Date.now();
    const ta = makeTrace({ tenantId: "ten", timestampMs: BigInt(now) });
    const tb = makeTrace({ tenantId: "ten", timestampMs: BigInt(now) });
    await a.insert([ta]);
    await b.insert([tb]);
    t.truthy(await a.get("ten", ta.id));
    t.is(await a.get("ten", tb.id), null);
    t.truthy(await b.get("ten", tb.id));
    await a.close();
    t.false(await a.ping());
    t.true(await b.ping(), "closing one store keeps the shared session open for the other");
    t.truthy(await b.get("ten", tb.id));
    const closed = await t.throwsAsync(() => a.get("ten", ta.id), { instanceOf: TraceStoreError });
    t.is(closed?.code, "closed");
  } finally {
    await a.close();
    const engine = await ChdbEngine.open(join(chdbDataDir(), "chdb"));
    await engine.command(sql`DROP DATABASE IF EXISTS ${sqlIdent(dbA)}`);
    await engine.command(sql`DROP DATABASE IF EXISTS ${sqlIdent(dbB)}`);
    await engine.close();
    await b.close();
  }
});

test.serial("another data directory is refused while a session is open, and allowed after close", async (t) => {
  const store = await openTraceStore({ database: randomDatabase(), dataDir: chdbDataDir(), retentionDays: 30 });
  const otherDir = mkdtempSync(join(tmpdir(), "agentgov-chdb-other-"));
  try {
    const e = await t.throwsAsync(
      () => openTraceStore({ database: randomDatabase(), dataDir: otherDir, retentionDays: 30 }),
      { instanceOf: TraceStoreError },
    );
    t.is(e?.code, "chdb_data_dir_conflict");
    t.true(await store.ping(), "the refused open did not disturb the open session");
    await store.close();
    t.is(chdbSessionPath(), null);
    const other = await openTraceStore({ database: randomDatabase(), dataDir: otherDir, retentionDays: 30 });
    t.true(await other.ping());
    t.is(chdbSessionPath(), join(otherDir, "chdb"));
    await other.close();
  } finally {
    await store.close();
    rmSync(otherDir, { recursive: true, force: true });
  }
});
