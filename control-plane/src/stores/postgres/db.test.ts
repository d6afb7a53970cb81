// The pool's session limits on real Postgres (review, session 17): a writer frozen inside a transaction
// that wrote a Sync change held back Sync deltas for every tenant for as long as it stayed open. Postgres
// now ends such a session (idle_in_transaction_session_timeout, 60 s; shortened here through the same
// option), the process survives it, and the settled Sync version moves past the change.
import test from "ava";
import { createTestDatabase } from "../../../../test/harness/databases.js";
import { SettledVersion } from "../../sync/settled-version.js";
import { openDb, SESSION_TIMEOUTS, type Db } from "./db.js";
import { migrate } from "./migrate.js";
import { recordChange } from "./sync-changes.js";

let url: string;
let db: Db;
test.before(async () => {
  url = await createTestDatabase();
  db = openDb(url, 4);
  await migrate(db);
});
test.after.always(async () => {
  await db?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const writers = async () =>
  (await db.query("SELECT 1 FROM pg_locks WHERE locktype = 'relation' AND relation = 'sync_changes'::regclass AND mode = 'RowExclusiveLock' AND granted")).rowCount;

test("every session of the pool ends an idle transaction after 60 s and a statement after 5 min", async (t) => {
  t.deepEqual(SESSION_TIMEOUTS, { idleInTransactionMs: 60_000, statementMs: 300_000 });
  const r = await db.query<{ i: string; s: string }>("SELECT current_setting('idle_in_transaction_session_timeout') AS i, current_setting('statement_timeout') AS s");
  t.deepEqual(r.rows[0], { i: "1min", s: "5min" });
  const short = openDb(url, 1, { idleInTransactionMs: 0, statementMs: 200 });
  try {
    const e = await t.throwsAsync(short.query("SELECT pg_sleep(2)"));
    t.is((e as Error & { code?: string }).code, "57014", "query_canceled");
  } finally {
    await short.close();
  }
});

test("a writer frozen inside a transaction is ended by Postgres; the settled Sync version moves past its change", async (t) => {
  const frozen = openDb(url, 1, { idleInTransactionMs: 500, statementMs: SESSION_TIMEOUTS.statementMs });
  try {
    let version = 0;
    const stuck = frozen.tx(async (c) => {
      version = await recordChange(c, "ten_someone_else", "agent", "agt_x");
      await sleep(3000); // frozen: the transaction stays open, idle
      return "committed";
    });
    stuck.catch(() => undefined);
    const t0 = Date.now();
    while (version === 0 || (await writers()) === 0) await sleep(10);
    while ((await writers()) !== 0 && Date.now() - t0 < 2500) await sleep(20);
    t.is(await writers(), 0, "Postgres ended the idle transaction well before the writer woke up");
    const settled = await new SettledVersion(db).next();
    t.true(settled >= version, `settled ${settled} ≥ the frozen writer's version ${version}`);
    await t.throwsAsync(stuck, undefined, "the frozen writer's COMMIT fails");
    t.is((await db.query("SELECT 1 FROM sync_changes WHERE version = $1", [version])).rowCount, 0, "its change was rolled back");
    // The pool replaced the dead connection.
    t.is((await frozen.query<{ one: number }>("SELECT 1 AS one")).rows[0]?.one, 1);
  } finally {
    await frozen.close();
  }
});
