// The remembered sidecars on real Postgres, across replicas (hubs on one database) and restarts: a replica
// starting remembers the sidecars whose stream ended and those of a replica that died (no Sync listener
// left in Postgres), not those a live replica holds, nor a goodbye, a revoked key or a sidecar seen too
// long ago; a stream that ends on one replica makes the others' writes wait for its sidecar, which its
// new stream's Ack on any replica releases (announced over NOTIFY); a goodbye is heard by every replica.
import test from "ava";
import { createTestDatabase } from "../../../test/harness/databases.js";
import { openDb, type Db } from "../stores/postgres/db.js";
import { migrate } from "../stores/postgres/migrate.js";
import { createTenant } from "../tenants/provision.js";
import { hashApiKey } from "../domain/api-keys.js";
import { SyncHub, type StreamIdentity } from "./hub.js";
import { SidecarRegistry } from "./sidecar-registry.js";

const PENDING = "pending" as const;
/** What `p` settled to once everything queued so far has run, or PENDING. */
const state = <T>(p: Promise<T>) => Promise.race([p, new Promise<typeof PENDING>((r) => setImmediate(() => r(PENDING)))]);
/** A write's limit no test reaches when it works: `true` means released by what the test did. */
const LONG = 20_000;

let url = "";
let db: Db;
const hubs: SyncHub[] = [];
test.before(async () => {
  url = await createTestDatabase();
  db = openDb(url, 4);
  await migrate(db);
});
test.after.always(async () => {
  for (const h of hubs) await h.close();
  await db?.close();
});

async function startHub(): Promise<SyncHub> {
  const h = new SyncHub(url);
  hubs.push(h);
  await h.start();
  return h;
}

async function until<T>(fn: () => Promise<T | undefined | false> | T | undefined | false, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error("condition not met");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A tenant and the identity of its (first) key, as a Watch stream authenticated with it has it. */
async function tenant(name: string) {
  const t = await createTenant(db, { name, idpOrgId: `org_${name}`, adminEmail: `${name}@example.com` });
  const keyHash = hashApiKey(t.apiKey);
  const keyId = (await db.query<{ id: string }>("SELECT id FROM api_keys WHERE key_hash = $1", [keyHash])).rows[0]!.id;
  const identity = (sidecarId: string): StreamIdentity => ({ sidecarId, keyId, keyHash, acksApplied: true });
  return { tenantId: t.tenantId, keyId, identity };
}

/** Opens an acking stream of `sidecarId` on `h`, handed and acking `version`. */
function stream(h: SyncHub, ten: Awaited<ReturnType<typeof tenant>>, sidecarId: string, version = 1) {
  const s = h.track(ten.tenantId, ten.identity(sidecarId));
  s.sent(version, true);
  h.ack(ten.tenantId, ten.keyId, sidecarId, version);
  return s;
}

const row = async (tenantId: string, sidecarId: string) =>
  (await db.query<{ replica: string | null }>("SELECT replica FROM sync_sidecars WHERE tenant_id = $1 AND sidecar_id = $2", [tenantId, sidecarId])).rows[0];
const awaited = (h: SyncHub, tenantId: string) => h.awaitedSidecars(tenantId).map((r) => r.sidecarId).sort();

test.serial("a replica starting remembers the streams that ended and those of a replica that died; not a live replica's, a goodbye, a revoked key, nor one seen too long ago", async (t) => {
  const ten = await tenant("restart");
  const revoked = await tenant("revoked");
  const live = await startHub();
  const held = stream(live, ten, "sc_live");
  t.teardown(() => held.close());
  stream(live, ten, "sc_dropped").close();
  const bye = stream(live, ten, "sc_bye");
  live.leave(ten.tenantId, ten.keyId, "sc_bye");
  bye.close();
  stream(live, revoked, "sc_revoked_key").close();
  await until(async () => (await row(ten.tenantId, "sc_live"))?.replica === live.replica && (await row(ten.tenantId, "sc_dropped"))?.replica === null && (await row(revoked.tenantId, "sc_revoked_key")));
  t.is(await row(ten.tenantId, "sc_bye"), undefined, "a goodbye deletes the row");
  await db.query("UPDATE api_keys SET deleted_at = now() WHERE id = $1", [revoked.keyId]);
  // What replicas that died left behind: one 5 s ago (its claims count as seen then), one 2 minutes ago.
  await db.query(`INSERT INTO sync_replicas (replica, seen_at) VALUES ('agentgov-sync dead-recently', now() - interval '5 seconds'), ('agentgov-sync dead-long-ago', now() - interval '2 minutes')`);
  await db.query(
    `INSERT INTO sync_sidecars (tenant_id, key_id, sidecar_id, replica, last_seen_at) VALUES
       ($1, $2, 'sc_on_dead_replica', 'agentgov-sync dead-recently', now() - interval '1 hour'),
       ($1, $2, 'sc_on_replica_dead_long_ago', 'agentgov-sync dead-long-ago', now() - interval '1 hour'),
       ($1, $2, 'sc_dropped_long_ago', NULL, now() - interval '2 minutes')`,
    [ten.tenantId, ten.keyId],
  );

  const restarted = await startHub();
  t.deepEqual(awaited(restarted, ten.tenantId), ["sc_dropped", "sc_on_dead_replica"]);
  t.deepEqual(awaited(restarted, revoked.tenantId), []);
  t.false(await restarted.delivered(ten.tenantId, 1, 50), "a write waits for them (here until its limit)");
});

test.serial("a stream that ends on one replica holds the other replicas' writes until its sidecar is back on any replica and has acked (announced); its goodbye is heard everywhere", async (t) => {
  const ten = await tenant("replicas");
  const a = await startHub();
  const b = await startHub();
  stream(b, ten, "sc_1", 3).close();
  await until(() => awaited(a, ten.tenantId).includes("sc_1"));
  const write = a.delivered(ten.tenantId, 9, LONG);
  t.is(await state(write), PENDING);
  // Back on replica B; A holds no stream of it and hears its Acks only as B announces them.
  const back = b.track(ten.tenantId, ten.identity("sc_1"));
  t.teardown(() => back.close());
  back.sent(9, true);
  b.ack(ten.tenantId, ten.keyId, "sc_1", 9);
  t.true(await write, "released by the Ack on the other replica");
  t.true(await state(a.delivered(ten.tenantId, 9, LONG)), "a later write does not wait");

  stream(b, ten, "sc_2", 3).close();
  await until(() => awaited(a, ten.tenantId).includes("sc_2"));
  const held = a.delivered(ten.tenantId, 12, LONG);
  t.is(await state(held), PENDING);
  b.leave(ten.tenantId, ten.keyId, "sc_2");
  t.true(await held, "the goodbye reached A");
  t.deepEqual(awaited(a, ten.tenantId), []);
});

test.serial("a dead stream noticed only after its sidecar reconnected to another replica is neither waited for nor announced", async (t) => {
  const ten = await tenant("late");
  const a = await startHub();
  const b = await startHub();
  const c = await startHub();
  const dead = stream(a, ten, "sc_moved", 2);
  await until(async () => (await row(ten.tenantId, "sc_moved"))?.replica === a.replica);
  const moved = stream(b, ten, "sc_moved", 2);
  t.teardown(() => moved.close());
  await until(async () => (await row(ten.tenantId, "sc_moved"))?.replica === b.replica);
  dead.close(); // A notices the old stream's end now
  t.deepEqual(awaited(a, ten.tenantId), ["sc_moved"], "until the table says where it is");
  await until(() => awaited(a, ten.tenantId).length === 0);
  t.true(await state(a.delivered(ten.tenantId, 2, LONG)));
  t.is((await row(ten.tenantId, "sc_moved"))?.replica, b.replica, "B's claim stands");
  // A's announcements reach C in order: once C has heard of a later drop, it has heard all before it.
  stream(a, ten, "sc_marker", 2).close();
  await until(() => awaited(c, ten.tenantId).includes("sc_marker"));
  t.deepEqual(awaited(c, ten.tenantId), ["sc_marker"], "sc_moved was not announced");
});

test.serial("steady state across replicas: a replica starting does not wait for sidecars a live replica holds; a replica that dies leaves its sidecars to wait for", async (t) => {
  const ten = await tenant("steady");
  const b = await startHub();
  const held = stream(b, ten, "sc_on_b", 4);
  await until(async () => (await row(ten.tenantId, "sc_on_b"))?.replica === b.replica);
  const c = await startHub();
  t.deepEqual(awaited(c, ten.tenantId), []);
  t.true(await state(c.delivered(ten.tenantId, 4, LONG)), "answers at once");

  // B goes without ending its stream (as a killed process does): its listener leaves Postgres, its claim stays.
  await b.close();
  t.is((await row(ten.tenantId, "sc_on_b"))?.replica, b.replica);
  await until(() => awaited(c, ten.tenantId).includes("sc_on_b"));
  held.close();
});

test.serial("the hourly prune deletes rows seen more than an hour ago, except those a replica alive within the hour holds", async (t) => {
  const ten = await tenant("prune");
  const registry = new SidecarRegistry(url, 45_000, () => undefined);
  await registry.start();
  t.teardown(() => registry.close());
  await db.query(`INSERT INTO sync_replicas (replica, seen_at) VALUES ('agentgov-sync old', now() - interval '2 hours') ON CONFLICT DO NOTHING`);
  await db.query(
    `INSERT INTO sync_sidecars (tenant_id, key_id, sidecar_id, replica, last_seen_at) VALUES
       ($1, $2, 'sc_old', NULL, now() - interval '2 hours'),
       ($1, $2, 'sc_old_replica', 'agentgov-sync old', now() - interval '2 hours'),
       ($1, $2, 'sc_held_long', $3, now() - interval '2 hours'),
       ($1, $2, 'sc_recent', NULL, now() - interval '5 minutes')`,
    [ten.tenantId, ten.keyId, registry.replica],
  );
  await registry.prune();
  const left = (await db.query<{ sidecar_id: string }>("SELECT sidecar_id FROM sync_sidecars WHERE tenant_id = $1 ORDER BY sidecar_id", [ten.tenantId])).rows.map((r) => r.sidecar_id);
  t.deepEqual(left, ["sc_held_long", "sc_recent"]);
  t.is((await db.query("SELECT 1 FROM sync_replicas WHERE replica = 'agentgov-sync old'")).rowCount, 0);
});
