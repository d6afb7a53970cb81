// Sync.Watch seen from a client: resume from a version with deltas only (no snapshot) when the control
// plane still holds the changes, a snapshot for a version it cannot vouch for, and no change skipped when
// transactions commit out of version order. Then keepalive: a connection that silently stops passing
// bytes is noticed and replaced within 30 s, and the change made meanwhile is enforced.
import test from "ava";
import pg from "pg";
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { SyncService, WatchRequestSchema, type WatchResponse } from "@agentgov/proto";
import { startStack, eventually, type Stack } from "../harness/stack.js";
import { startTcpProxy } from "../harness/tcp-proxy.js";
import { recordChange } from "../../control-plane/src/stores/postgres/sync-changes.js";

let stack: Stack;

test.before(async () => {
  stack = await startStack();
});
test.after.always(async () => {
  await stack?.stop();
});

/** Opens a Watch stream and collects its messages until `close()`. */
function watch(resumeFromVersion: bigint) {
  const transport = createGrpcTransport({ baseUrl: stack.cp.grpcUrl });
  const client = createClient(SyncService, transport);
  const abort = new AbortController();
  const messages: WatchResponse[] = [];
  const done = (async () => {
    try {
      for await (const m of client.watch(create(WatchRequestSchema, { resumeFromVersion, sidecarId: "test" }), { signal: abort.signal, headers: { authorization: `Bearer ${stack.adminKey}` } })) {
        messages.push(m);
      }
    } catch {
      /* aborted */
    }
  })();
  return {
    messages,
    async close() {
      abort.abort();
      await done;
    },
  };
}

const policyIdsIn = (ms: WatchResponse[]) => ms.flatMap((m) => (m.kind.case === "delta" ? m.kind.value.upsertPolicies.map((p) => p.id) : []));
const newPolicy = async (name: string) => (await stack.api.post<{ id: string }>("/v1/policies", { name, action: "log", priority: 5, conditions: { direction: "inbound", keywords: [name] } })).body.id;

test.serial("resume: deltas only when the changes are still held, a snapshot otherwise; versions only grow", async (t) => {
  const w1 = watch(0n);
  const snap = await eventually(async () => w1.messages[0]);
  t.is(snap.kind.case, "snapshot");
  const p1 = await newPolicy("resume-one");
  const d1 = await eventually(async () => w1.messages.find((m) => policyIdsIn([m]).includes(p1)));
  t.true(d1.version > snap.version);
  await w1.close();

  const p2 = await newPolicy("resume-two");
  const w2 = watch(d1.version);
  const first = await eventually(async () => w2.messages[0]);
  t.is(first.kind.case, "heartbeat", "a resume starts with a heartbeat, not a snapshot");
  t.is(first.version, d1.version);
  const d2 = await eventually(async () => w2.messages.find((m) => policyIdsIn([m]).includes(p2)));
  t.false(policyIdsIn(w2.messages).includes(p1), "changes already seen are not sent again");
  t.false(w2.messages.some((m) => m.kind.case === "snapshot"));
  const versions = w2.messages.map((m) => m.version);
  t.deepEqual(versions, [...versions].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  await w2.close();

  const w3 = watch(snap.version);
  await eventually(async () => policyIdsIn(w3.messages).includes(p1) && policyIdsIn(w3.messages).includes(p2));
  t.false(w3.messages.some((m) => m.kind.case === "snapshot"));
  await w3.close();

  const w4 = watch(d2.version + 1_000_000n);
  t.is((await eventually(async () => w4.messages[0])).kind.case, "snapshot", "a version this database never issued gets a snapshot");
  await w4.close();
});

test.serial("a change whose transaction commits after a later-numbered one is not skipped", async (t) => {
  const w = watch(0n);
  await eventually(async () => w.messages[0]);
  const c = new pg.Client({ connectionString: stack.cp.databaseUrl });
  await c.connect();
  let later = "";
  try {
    await c.query("BEGIN");
    await recordChange(c, stack.cp.tenantId, "policy", "pol_committed_late");
    // A later-numbered change commits first (its NOTIFY wakes the stream at once)…
    later = await newPolicy("commits-first");
    // …and the earlier-numbered one 2.5 s later (longer than one settle wait of the stream).
    await new Promise((r) => setTimeout(r, 2500));
    await c.query("COMMIT");
  } finally {
    await c.end();
  }
  await eventually(async () => policyIdsIn(w.messages).includes(later), 15_000);
  const delta = await eventually(async () => w.messages.find((m) => m.kind.case === "delta" && m.kind.value.removedPolicyIds.includes("pol_committed_late")), 15_000);
  t.truthy(delta);
  await w.close();
});

test.serial("a silently dropped connection is noticed within 30 s and the sidecar catches up", async (t) => {
  const port = Number(new URL(stack.cp.grpcUrl).port);
  const relay = await startTcpProxy("127.0.0.1", port);
  t.teardown(() => relay.close());
  const sc = await stack.sidecar({ CONTROL_PLANE_GRPC_URL: relay.url });
  const agentId = (await stack.api.post<{ data: { id: string } }>("/api/agents", { name: "keepalive" })).body.data.id;
  await eventually(async () => sc.state().agents.has(agentId));
  const before = sc.status().sync.reconnects;

  relay.blackholeOpenConnections();
  const t0 = Date.now();
  const p = await newPolicy("after-the-blackhole");
  await eventually(async () => sc.state().policies.has(p), 30_000, 100);
  const elapsed = Date.now() - t0;
  t.log(`dead connection replaced and change applied after ${elapsed} ms`);
  t.true(sc.status().sync.reconnects > before);
  t.true(sc.status().connected);
});
