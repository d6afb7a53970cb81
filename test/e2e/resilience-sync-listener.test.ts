// The control plane's Sync listener (SyncHub: one LISTEN connection per replica) against a real
// Postgres whose server ends that connection, as a Postgres restart or shutdown does: the error it
// reports carries SQLSTATE 57P01 (the control plane logs that as "postgres is shutting down", not as
// a fault), and the listener reconnects by itself so that NOTIFY wakes Sync streams again.
import test from "ava";
import pg from "pg";
import { SyncHub } from "../../control-plane/src/sync/hub.js";
import { SYNC_CHANNEL } from "../../control-plane/src/stores/postgres/sync-changes.js";
import { openDb } from "../../control-plane/src/stores/postgres/db.js";
import { migrate } from "../../control-plane/src/stores/postgres/migrate.js";
import { createTestDatabase } from "../harness/databases.js";
import { eventually } from "../harness/stack.js";

test("a listener connection ended by the server reports 57P01 and reconnects; NOTIFY reaches it again", async (t) => {
  const url = await createTestDatabase();
  // The hub keeps the sidecars it waits for in its tables (sync_sidecars, sync_replicas).
  const db = openDb(url, 1);
  await migrate(db);
  await db.close();
  const errors: unknown[] = [];
  const hub = new SyncHub(url, (e) => errors.push(e));
  await hub.start();
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  t.teardown(async () => {
    await hub.close();
    await admin.end();
  });
  const notify = (version: number) => admin.query("SELECT pg_notify($1, $2)", [SYNC_CHANNEL, `ten_listener:${version}`]);

  await notify(1);
  await eventually(async () => hub.latestNotified("ten_listener") === 1);

  const ended = await admin.query<{ ended: boolean }>(
    "SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND query ILIKE 'LISTEN%'",
  );
  t.is(ended.rowCount, 1, "exactly one listening connection");
  await eventually(async () => errors.length > 0);
  t.is((errors[0] as { code?: string }).code, "57P01");

  // Reconnected: a later NOTIFY is seen (retried, as the reconnect takes a backoff step).
  await eventually(async () => {
    await notify(2);
    return hub.latestNotified("ten_listener") === 2;
  }, 15_000, 250);
});
