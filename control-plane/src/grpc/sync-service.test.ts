// Shared Sync snapshots on real Postgres (audit, session 17: 50 cold Watch streams of a large tenant built
// 50 snapshots at once): concurrent streams of a tenant share one build, a stream arriving just after it
// gets the same snapshot and then the deltas after its version, and builds across tenants are limited.
// Sync.Ack on the same server: a stream that said acks_applied is delivered once its sidecar acks, an Ack
// with another tenant's key releases nothing, an Ack without a valid key is refused, and a stream that
// never acks (an older sidecar) is delivered once handed, and an Ack reaching a replica that does not hold
// its stream is passed on to the one that does.
import test from "ava";
import http2 from "node:http2";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter, createGrpcTransport } from "@connectrpc/connect-node";
import { AckRequestSchema, AgentSchema, SnapshotSchema, SyncService, WatchRequestSchema, WatchResponseSchema, type Snapshot, type WatchResponse } from "@agentgov/proto";
import { createTestDatabase } from "../../../test/harness/databases.js";
import { openDb, type Db } from "../stores/postgres/db.js";
import { migrate } from "../stores/postgres/migrate.js";
import { recordChange } from "../stores/postgres/sync-changes.js";
import { linksForAgents } from "../stores/postgres/agents-repo.js";
import { createTenant } from "../tenants/provision.js";
import { SyncHub } from "../sync/hub.js";
import { hashApiKey } from "../domain/api-keys.js";
import { buildSnapshot } from "../sync/snapshot.js";
import { SnapshotCache, encodedSnapshot } from "../sync/snapshot-cache.js";
import { syncHandlers } from "./sync-service.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let db: Db;
let hub: SyncHub;
let server: http2.Http2Server;
const sessions = new Set<http2.ServerHttp2Session>();
let url = "";
let cache: SnapshotCache | undefined;
let tenantId = "";
let apiKey = "";
let dbUrl = "";

test.before(async () => {
  dbUrl = await createTestDatabase();
  db = openDb(dbUrl, 8);
  await migrate(db);
  ({ tenantId, apiKey } = await createTenant(db, { name: "t", idpOrgId: "org_snapshots", adminEmail: "a@example.com" }));
  hub = new SyncHub(dbUrl);
  await hub.start();
  // A slow build (300 ms) so that the streams opened together all ask while it runs.
  const slowBuild = async (id: string) => {
    await sleep(300);
    return buildSnapshot(db, id);
  };
  const routes = (router: ConnectRouter) => router.service(SyncService, syncHandlers(db, hub, { buildSnapshot: slowBuild, onSnapshotCache: (c) => (cache = c) }));
  server = http2.createServer(connectNodeAdapter({ routes, grpc: true, connect: false, grpcWeb: false }));
  server.on("session", (s) => sessions.add(s));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const addr = server.address();
  url = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`;
});
test.after.always(async () => {
  for (const s of sessions) s.destroy();
  if (server) await new Promise((r) => server.close(r));
  await hub?.close();
  await db?.close();
});

function watch(key = apiKey, sidecarId = "t", acksApplied = false) {
  const client = createClient(SyncService, createGrpcTransport({ baseUrl: url }));
  const abort = new AbortController();
  const messages: WatchResponse[] = [];
  const done = (async () => {
    try {
      for await (const m of client.watch(create(WatchRequestSchema, { sidecarId, acksApplied }), { signal: abort.signal, headers: { authorization: `Bearer ${key}` } })) messages.push(m);
    } catch {
      /* aborted */
    }
  })();
  return {
    messages,
    close: async () => {
      abort.abort();
      await done;
    },
  };
}

async function until<T>(fn: () => T | undefined | false, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error("condition not met");
    await sleep(10);
  }
}

test.serial("concurrent Watch streams of a tenant share one snapshot build; a later stream reuses it and gets the deltas after it", async (t) => {
  const before = cache?.builds ?? 0;
  const streams = Array.from({ length: 8 }, () => watch());
  t.teardown(() => Promise.all(streams.map((s) => s.close())));
  const firsts = await Promise.all(streams.map((s) => until(() => s.messages[0])));
  t.true(firsts.every((m) => m.kind.case === "snapshot"));
  t.is(cache!.builds - before, 1, "8 streams, 1 snapshot build");
  const v = firsts[0]!.version;
  t.true(firsts.every((m) => m.version === v));

  // A change after the snapshot was built, then a stream arriving while the snapshot is still shared:
  // it gets the same snapshot (its version), then the change as a delta.
  const changed = await recordChange(db, tenantId, "key", "key_gone_after_snapshot");
  t.true(BigInt(changed) > v);
  const late = watch();
  t.teardown(() => late.close());
  const first = await until(() => late.messages[0]);
  t.is(first.kind.case, "snapshot");
  t.is(first.version, v, "the shared snapshot keeps its own version");
  t.is(cache!.builds - before, 1, "no second build");
  const d = await until(() => late.messages.find((m) => m.kind.case === "delta" && m.kind.value.removedKeyIds.includes("key_gone_after_snapshot")));
  t.true(d.version >= BigInt(changed));
  // The streams opened first get the change too.
  await until(() => streams.every((s) => s.messages.some((m) => m.kind.case === "delta" && m.kind.value.removedKeyIds.includes("key_gone_after_snapshot"))));
});

test("snapshot builds run at most maxBuilds at once across tenants; failures are not shared", async (t) => {
  let running = 0;
  let peak = 0;
  let fail = true;
  const c = new SnapshotCache(
    async (id) => {
      running++;
      peak = Math.max(peak, running);
      await sleep(50);
      running--;
      if (id === "ten_bad" && fail) throw new Error("boom");
      return create(SnapshotSchema, { tenantId: id }) as Snapshot;
    },
    { maxBuilds: 2, reuseMs: 1000 },
  );
  const got = await Promise.allSettled(["ten_a", "ten_b", "ten_c", "ten_d", "ten_bad", "ten_a"].map((id, i) => c.get(id, i + 1)));
  t.is(peak, 2);
  t.is(c.builds, 5, "ten_a's two requests share one build");
  t.is(got[4]!.status, "rejected");
  const a = got.map((g) => (g.status === "fulfilled" ? g.value : undefined));
  t.is(a[0], a[5]);
  t.is(a[0]!.version, 1, "labelled with the version of the stream that started the build");
  fail = false;
  t.is((await c.get("ten_bad", 9)).version, 9, "a failed build is retried by the next stream");
  t.is(c.builds, 6);
});

test("a shared snapshot is sent pre-encoded, as the bytes of the ordinary message", (t) => {
  const snap = create(SnapshotSchema, { tenantId: "ten_x", agents: [create(AgentSchema, { id: "agt_1", name: "a", status: "active", policyIds: ["pol_1"] })] });
  const plain = toBinary(WatchResponseSchema, create(WatchResponseSchema, { version: 42n, kind: { case: "snapshot", value: snap } }));
  const bytes = toBinary(WatchResponseSchema, encodedSnapshot(42, snap));
  t.deepEqual(bytes, plain);
  const back = fromBinary(WatchResponseSchema, bytes);
  t.is(back.kind.case, "snapshot");
  t.is(back.version, 42n);
});

test.serial("a snapshot's link map holds every link of an agent with 30,000 policies, in order", async (t) => {
  const other = await createTenant(db, { name: "links", idpOrgId: "org_links", adminEmail: "l@example.com" });
  const ids = Array.from({ length: 30_000 }, (_, i) => `pol_${String(i).padStart(26, "0")}`);
  await db.query(`INSERT INTO agents (id, tenant_id, name, model_provider, model_name, environment, config_yaml) VALUES ('agt_many', $1, 'many', 'openai', 'gpt-4o-mini', 'prod', '')`, [other.tenantId]);
  await db.query(`INSERT INTO policies (id, tenant_id, name, action, priority, conditions) SELECT id, $1, id, 'log', 1, '{}'::jsonb FROM unnest($2::text[]) id`, [other.tenantId, ids]);
  await db.query(`INSERT INTO policy_agents (tenant_id, policy_id, agent_id) SELECT $1, id, 'agt_many' FROM unnest($2::text[]) id`, [other.tenantId, ids]);
  const links = await linksForAgents(db, other.tenantId);
  // Copying the list on each link (the code before) took seconds here (450 million element copies); the
  // time is the scale audit's measure, not asserted: the list is complete and in policy id order.
  t.deepEqual(links.get("agt_many"), ids, "in policy id order");
});

const ackWith = (key: string | undefined, sidecarId: string, version: bigint) =>
  createClient(SyncService, createGrpcTransport({ baseUrl: url })).ack(create(AckRequestSchema, { sidecarId, version }), key ? { headers: { authorization: `Bearer ${key}` } } : {});

test.serial("Sync.Ack: an acking stream is delivered once its sidecar acks; another tenant's Ack naming it releases nothing; Acks without a valid key are refused", async (t) => {
  const a = await createTenant(db, { name: "acks", idpOrgId: "org_acks", adminEmail: "acks@example.com" });
  const b = await createTenant(db, { name: "forger", idpOrgId: "org_forger", adminEmail: "forger@example.com" });
  const s = watch(a.apiKey, "sc_acking", true);
  t.teardown(() => s.close());
  const first = await until(() => s.messages[0]);
  await ackWith(a.apiKey, "sc_acking", first.version); // its first Ack: this replica now waits for its Acks

  const v = await recordChange(db, a.tenantId, "key", "key_gone_acked");
  const waiting = hub.delivered(a.tenantId, v, 5000);
  const delta = await until(() => s.messages.find((m) => m.kind.case === "delta" && m.kind.value.removedKeyIds.includes("key_gone_acked")));
  // Handed and even received; another tenant's key naming the stream, far ahead, is answered but counts for nothing.
  await ackWith(b.apiKey, "sc_acking", 1n << 53n);
  t.is(await Promise.race([waiting, sleep(150).then(() => "pending" as const)]), "pending", "not released by the forged Ack");
  await ackWith(a.apiKey, "sc_acking", delta.version);
  t.true(await waiting, "released by the stream's own Ack");

  const refused = async (key: string | undefined) => {
    const e = await t.throwsAsync(ackWith(key, "sc_acking", 1n << 53n));
    t.is(e instanceof ConnectError ? e.code : undefined, Code.Unauthenticated);
  };
  await refused(undefined);
  await refused("svc_api_00000000000000000000000000000000");
});

test.serial("a stream that does not ack (an older sidecar) is delivered once handed: it does not hold a write", async (t) => {
  const c = await createTenant(db, { name: "old sidecar", idpOrgId: "org_old_sidecar", adminEmail: "old@example.com" });
  const s = watch(c.apiKey, "sc_old", false);
  t.teardown(() => s.close());
  await until(() => s.messages[0]);
  const v = await recordChange(db, c.tenantId, "key", "key_gone_old");
  t.true(await hub.delivered(c.tenantId, v, 10_000), "delivered, not the limit");
  await until(() => s.messages.find((m) => m.kind.case === "delta" && m.kind.value.removedKeyIds.includes("key_gone_old")));
});

test.serial("an Ack that reaches a replica not holding its stream is passed on (NOTIFY) to the replica that does, for the same tenant and key only", async (t) => {
  const d = await createTenant(db, { name: "elsewhere", idpOrgId: "org_elsewhere", adminEmail: "e@example.com" });
  const forger = await createTenant(db, { name: "forger elsewhere", idpOrgId: "org_forger_elsewhere", adminEmail: "fe@example.com" });
  const keyHash = hashApiKey(d.apiKey);
  const keyId = (await db.query<{ id: string }>("SELECT id FROM api_keys WHERE key_hash = $1", [keyHash])).rows[0]!.id;
  // Replica B: its own hub on the same database, holding the sidecar's stream (this test's server is replica A).
  const hubB = new SyncHub(dbUrl);
  await hubB.start();
  t.teardown(() => hubB.close());
  const stream = hubB.track(d.tenantId, { sidecarId: "sc_elsewhere", keyId, keyHash, acksApplied: true });
  t.teardown(() => stream.close());
  stream.sent(5, true);
  hubB.ack(d.tenantId, keyId, "sc_elsewhere", 5);
  stream.sent(9, true);
  const waiting = hubB.delivered(d.tenantId, 9, 5000);
  await ackWith(forger.apiKey, "sc_elsewhere", 9n); // passed on too, as the forger's tenant and key: matches nothing
  t.is(await Promise.race([waiting, sleep(300).then(() => "pending" as const)]), "pending");
  await ackWith(d.apiKey, "sc_elsewhere", 9n);
  t.true(await waiting);
});
