// The Sync client against a scripted Sync.Watch peer (a real gRPC server over HTTP/2): it resumes from
// its version, swaps the whole state per message (a reader never sees half a delta), persists it for
// fail-static starts, adopts heartbeat versions, and drops a stream that goes silent.
import test from "ava";
import http2 from "node:http2";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import { connectNodeAdapter, createGrpcTransport } from "@connectrpc/connect-node";
import {
  AgentSchema, DeltaSchema, HeartbeatSchema, PolicySchema, SnapshotSchema, SyncService, WatchResponseSchema,
  type WatchRequest, type WatchResponse,
} from "@agentgov/proto";
import { EMPTY_STATE, type GovernanceState } from "../state/governance-state.js";
import { SyncClient } from "./client.js";
import { loadSnapshot } from "./snapshot-file.js";

type Script = (req: WatchRequest, ctx: HandlerContext, streamNo: number) => AsyncGenerator<WatchResponse>;

async function syncPeer(script: Script) {
  const requests: WatchRequest[] = [];
  const routes = (router: ConnectRouter) =>
    router.service(SyncService, {
      async *watch(req, ctx) {
        requests.push(req);
        yield* script(req, ctx, requests.length);
      },
    });
  const server = http2.createServer(connectNodeAdapter({ routes, grpc: true, connect: false, grpcWeb: false }));
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (s) => sessions.add(s));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const addr = server.address();
  const url = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`;
  return {
    url,
    requests,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sessions) s.destroy();
        server.close(() => r());
      }),
  };
}

const snapshot = (version: bigint) =>
  create(WatchResponseSchema, {
    version,
    kind: { case: "snapshot", value: create(SnapshotSchema, { tenantId: "ten_1", agents: [create(AgentSchema, { id: "agt_1", name: "a", status: "active", policyIds: [] })] }) },
  });

const idle = (ctx: HandlerContext) => new Promise<void>((r) => ctx.signal.addEventListener("abort", () => r()));

function harness(url: string, initial: GovernanceState = EMPTY_STATE, stallMs?: number) {
  const dir = mkdtempSync(join(tmpdir(), "agentgov-sync-client-"));
  const states: GovernanceState[] = [];
  const client = new SyncClient(
    createGrpcTransport({ baseUrl: url }),
    "svc_ingest_test",
    initial,
    join(dir, "snapshot.bin"),
    { onState: (s) => states.push(s), onConnected: () => undefined, onError: () => undefined },
    "sc_test",
    { stallMs },
  );
  return { client, states, path: join(dir, "snapshot.bin"), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

async function until(fn: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error("condition not met");
    await new Promise((r) => setTimeout(r, 10));
  }
}

test("a delta that adds a policy and links it to an agent is applied as one new state; the state is persisted", async (t) => {
  const peer = await syncPeer(async function* (_req, ctx) {
    yield snapshot(10n);
    yield create(WatchResponseSchema, {
      version: 12n,
      kind: {
        case: "delta",
        value: create(DeltaSchema, {
          upsertPolicies: [create(PolicySchema, { id: "pol_1", name: "p", status: "active", action: "block", priority: 1 })],
          upsertAgents: [create(AgentSchema, { id: "agt_1", name: "a", status: "active", policyIds: ["pol_1"] })],
        }),
      },
    });
    await idle(ctx);
  });
  const h = harness(peer.url);
  t.teardown(async () => {
    await h.client.stop();
    await peer.close();
    h.cleanup();
  });
  h.client.start();
  await until(() => h.states.some((s) => s.version === 12n));
  const before = h.states.find((s) => s.version === 10n)!;
  const after = h.states.find((s) => s.version === 12n)!;
  // Every state a request could have picked is whole: old (no policy, no link) or new (both).
  t.deepEqual(before.agents.get("agt_1")!.policyIds, []);
  t.false(before.policies.has("pol_1"), "the earlier state object is not modified by the delta");
  t.deepEqual(after.agents.get("agt_1")!.policyIds, ["pol_1"]);
  t.deepEqual(after.orderedPolicies.map((p) => p.id), ["pol_1"]);
  await h.client.stop();
  const saved = loadSnapshot(h.path);
  t.is(saved?.state.version, 12n);
  t.true(saved?.state.policies.has("pol_1"));
});

test("the client resumes from its version after a reconnect and adopts heartbeat versions", async (t) => {
  const peer = await syncPeer(async function* (req, ctx, n) {
    if (n === 1) {
      yield snapshot(20n);
      return; // the server goes away
    }
    yield create(WatchResponseSchema, { version: req.resumeFromVersion, kind: { case: "heartbeat", value: create(HeartbeatSchema, {}) } });
    yield create(WatchResponseSchema, { version: 25n, kind: { case: "heartbeat", value: create(HeartbeatSchema, {}) } });
    await idle(ctx);
  });
  const h = harness(peer.url);
  t.teardown(async () => {
    await h.client.stop();
    await peer.close();
    h.cleanup();
  });
  h.client.start();
  await until(() => h.client.stats().version === 25n);
  t.is(peer.requests[0]!.resumeFromVersion, 0n);
  t.is(peer.requests[1]!.resumeFromVersion, 20n, "the second stream resumes from the snapshot's version");
  const st = h.client.stats();
  t.is(st.snapshots, 1);
  t.is(st.reconnects, 1);
  t.true(st.connected);
  t.true(st.lastContactMs > 0);
});

test("a stream that stays silent past the stall limit is dropped and reopened", async (t) => {
  const peer = await syncPeer(async function* (_req, ctx, n) {
    if (n === 1) yield snapshot(5n);
    await idle(ctx); // then nothing, not even heartbeats
  });
  const h = harness(peer.url, EMPTY_STATE, 300);
  t.teardown(async () => {
    await h.client.stop();
    await peer.close();
    h.cleanup();
  });
  h.client.start();
  await until(() => peer.requests.length >= 2);
  t.is(peer.requests[1]!.resumeFromVersion, 5n);
  t.true(h.client.stats().reconnects >= 1);
});

test("a stream waiting for its first message (a slow snapshot) is not dropped at the stall limit", async (t) => {
  // The control plane takes 4 × the stall limit to build the snapshot, then heartbeats as usual.
  const peer = await syncPeer(async function* (_req, ctx) {
    await new Promise((r) => setTimeout(r, 1200));
    yield snapshot(7n);
    await idle(ctx);
  });
  const h = harness(peer.url, EMPTY_STATE, 300);
  t.teardown(async () => {
    await h.client.stop();
    await peer.close();
    h.cleanup();
  });
  h.client.start();
  await until(() => h.client.stats().snapshots === 1);
  t.is(peer.requests.length, 1, "one stream, not a reconnect per stall limit");
  t.is(h.client.stats().reconnects, 0);
  // Once the first message came, the stall limit applies again.
  await until(() => peer.requests.length >= 2);
});

test("the first-message wait has its own limit", async (t) => {
  const peer = await syncPeer(async function* (_req, ctx) {
    await idle(ctx); // never answers
    yield* [];
  });
  const dir = mkdtempSync(join(tmpdir(), "agentgov-sync-client-"));
  const client = new SyncClient(createGrpcTransport({ baseUrl: peer.url }), "svc_ingest_test", EMPTY_STATE, join(dir, "snapshot.bin"), { onState: () => undefined, onConnected: () => undefined, onError: () => undefined }, "sc_test", { stallMs: 100, firstMessageMs: 400 });
  t.teardown(async () => {
    await client.stop();
    await peer.close();
    rmSync(dir, { recursive: true, force: true });
  });
  client.start();
  const t0 = Date.now();
  await until(() => peer.requests.length >= 2);
  t.true(Date.now() - t0 >= 350, "not dropped at the stall limit");
});
