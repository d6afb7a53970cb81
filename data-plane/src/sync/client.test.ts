// The Sync client against a scripted Sync.Watch peer (a real gRPC server over HTTP/2): it resumes from
// its version, swaps the whole state per message (a reader never sees half a delta), persists it for
// fail-static starts, adopts heartbeat versions, and drops a stream that goes silent. It acknowledges
// (Sync.Ack) each version it has swapped in, off the stream: at most one Ack in flight, the newest next;
// and says goodbye (an Ack with `leaving`) when it stops.
import test, { type ExecutionContext } from "ava";
import http2 from "node:http2";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import { connectNodeAdapter, createGrpcTransport } from "@connectrpc/connect-node";
import {
  AckResponseSchema, AgentSchema, AgentSpendSchema, DeltaSchema, HeartbeatSchema, PolicySchema, SnapshotSchema, SyncService, WatchResponseSchema,
  type AckRequest, type AckResponse, type WatchRequest, type WatchResponse,
} from "@agentgov/proto";
import { EMPTY_STATE, type GovernanceState } from "../state/governance-state.js";
import { SyncClient } from "./client.js";
import { loadSnapshot } from "./snapshot-file.js";

type Script = (req: WatchRequest, ctx: HandlerContext, streamNo: number) => AsyncGenerator<WatchResponse>;

/** Without an ack handler the peer is a control plane that has no Sync.Ack (Unimplemented). */
async function syncPeer(script: Script, ack?: (req: AckRequest) => Promise<void>) {
  const requests: WatchRequest[] = [];
  const routes = (router: ConnectRouter) =>
    router.service(SyncService, {
      async *watch(req, ctx) {
        requests.push(req);
        yield* script(req, ctx, requests.length);
      },
      ...(ack
        ? {
            async ack(req: AckRequest): Promise<AckResponse> {
              await ack(req);
              return create(AckResponseSchema, {});
            },
          }
        : {}),
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

function harness(url: string, initial: GovernanceState = EMPTY_STATE, stallMs?: number, acks?: boolean) {
  const dir = mkdtempSync(join(tmpdir(), "agentgov-sync-client-"));
  const states: GovernanceState[] = [];
  const client = new SyncClient(
    createGrpcTransport({ baseUrl: url }),
    "svc_ingest_test",
    initial,
    join(dir, "snapshot.bin"),
    { onState: (s) => states.push(s), onConnected: () => undefined, onError: () => undefined },
    "sc_test",
    { stallMs, acks },
  );
  return { client, states, path: join(dir, "snapshot.bin"), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A harness on `peer` whose client, peer and files go when the test ends. */
function harnessFor(t: ExecutionContext, peer: { url: string; close(): Promise<void> }, ...rest: Parameters<typeof harness> extends [string, ...infer R] ? R : never) {
  const h = harness(peer.url, ...rest);
  t.teardown(async () => {
    await h.client.stop();
    await peer.close();
    h.cleanup();
  });
  return h;
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
  const h = harnessFor(t, peer);
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
  const h = harnessFor(t, peer);
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
  const h = harnessFor(t, peer, EMPTY_STATE, 300);
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
  const h = harnessFor(t, peer, EMPTY_STATE, 300);
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

const delta = (version: bigint) =>
  create(WatchResponseSchema, { version, kind: { case: "delta", value: create(DeltaSchema, { upsertAgents: [create(AgentSchema, { id: `agt_${version}`, name: "a", status: "active", policyIds: [] })] }) } });
const heartbeat = (version: bigint) => create(WatchResponseSchema, { version, kind: { case: "heartbeat", value: create(HeartbeatSchema, {}) } });

test("the client acks each version once it has swapped the state in: snapshots, deltas, a heartbeat only when it moves the version, and each stream's first message", async (t) => {
  const acks: bigint[] = [];
  /** Per Ack, the newest state published when it was sent. */
  const stateAtAck: bigint[] = [];
  const ref: { h?: ReturnType<typeof harness> } = {};
  const acked = (n: number) => until(() => acks.length >= n);
  const peer = await syncPeer(
    async function* (req, ctx, n) {
      if (n === 1) {
        yield snapshot(10n);
        await acked(1);
        yield delta(12n);
        await acked(2);
        yield heartbeat(12n); // the version does not move: no Ack
        yield heartbeat(15n); // it moves: acked
        await acked(3);
        return; // the stream ends; the next one resumes
      }
      yield heartbeat(req.resumeFromVersion); // a resume: nothing moves, but the stream's first message is acked
      await idle(ctx);
    },
    async (req) => {
      if (req.leaving) return; // the goodbye when the test stops it
      t.is(req.sidecarId, "sc_test");
      stateAtAck.push(ref.h?.states.at(-1)?.version ?? -1n);
      acks.push(req.version);
    },
  );
  const h = harness(peer.url);
  ref.h = h;
  t.teardown(async () => {
    await h.client.stop();
    await peer.close();
    h.cleanup();
  });
  h.client.start();
  await acked(4);
  t.deepEqual(acks, [10n, 12n, 15n, 15n]);
  t.deepEqual(stateAtAck, acks, "each Ack is sent once its state is published (the proxy serves it)");
  t.true(peer.requests.every((r) => r.acksApplied), "every Watch says it acks");
  await until(() => h.client.ackStats().sent === 4);
  t.is(h.client.ackStats().failed, 0);
});

test("Acks are coalesced: at most one in flight; when it ends only the newest version is sent", async (t) => {
  const acks: bigint[] = [];
  let release!: () => void;
  const firstAckHeld = new Promise<void>((r) => (release = r));
  const peer = await syncPeer(
    async function* (_req, ctx) {
      yield snapshot(1n);
      await until(() => acks.length >= 1);
      for (let v = 2n; v <= 6n; v++) yield delta(v);
      await idle(ctx);
    },
    async (req) => {
      acks.push(req.version);
      if (acks.length === 1) await firstAckHeld;
    },
  );
  const h = harnessFor(t, peer);
  h.client.start();
  await until(() => h.client.stats().version === 6n);
  t.deepEqual(acks, [1n], "the stream went on while the first Ack was held");
  release();
  await until(() => acks.length >= 2);
  await new Promise((r) => setTimeout(r, 100));
  t.deepEqual(acks, [1n, 6n]);
});

test("a failed Ack is dropped and the stream goes on; a control plane without Ack gets none until the next stream; acks: false sends none", async (t) => {
  let calls = 0;
  const flaky = await syncPeer(
    async function* (_req, ctx) {
      yield snapshot(1n);
      await until(() => calls >= 1);
      yield delta(2n);
      await idle(ctx);
    },
    async () => {
      if (++calls === 1) throw new ConnectError("restarting", Code.Unavailable);
    },
  );
  const h1 = harnessFor(t, flaky);
  h1.client.start();
  await until(() => h1.client.ackStats().sent >= 1);
  t.is(h1.client.stats().version, 2n);
  t.is(calls, 2);
  t.deepEqual(h1.client.ackStats(), { sent: 1, failed: 1 });

  // An older control plane: Unimplemented once per stream.
  const old = await syncPeer(async function* (_req, ctx, n) {
    yield snapshot(BigInt(n * 10));
    for (let v = 1n; v <= 3n; v++) {
      await new Promise((r) => setTimeout(r, 30));
      yield delta(BigInt(n * 10) + v);
    }
    if (n === 1) return;
    await idle(ctx);
  });
  const h2 = harnessFor(t, old);
  h2.client.start();
  await until(() => h2.client.stats().version === 23n);
  await new Promise((r) => setTimeout(r, 100));
  t.deepEqual(h2.client.ackStats(), { sent: 0, failed: 2 }, "one failed Ack per stream");

  let acked = 0;
  const off = await syncPeer(
    async function* (_req, ctx) {
      yield snapshot(1n);
      yield delta(2n);
      await idle(ctx);
    },
    async () => {
      acked++;
    },
  );
  const h3 = harnessFor(t, off, EMPTY_STATE, undefined, false);
  h3.client.start();
  await until(() => h3.client.stats().version === 2n);
  await new Promise((r) => setTimeout(r, 100));
  t.false(off.requests[0]!.acksApplied);
  t.is(acked, 0);
});

test("stop says goodbye while its stream is still open (an Ack with `leaving` and the version it serves), not counted as an Ack; with acks off, or before any message, it says none", async (t) => {
  const goodbyes: { version: bigint; streamOpen: boolean }[] = [];
  let open = 0;
  const serving = (first: boolean) =>
    syncPeer(
      async function* (_req, ctx) {
        open++;
        try {
          if (first) yield snapshot(7n);
          await idle(ctx);
        } finally {
          open--;
        }
      },
      async (req) => {
        if (req.leaving) goodbyes.push({ version: req.version, streamOpen: open > 0 });
      },
    );
  const h = harnessFor(t, await serving(true));
  h.client.start();
  await until(() => h.client.ackStats().sent >= 1);
  await h.client.stop();
  t.deepEqual(goodbyes, [{ version: 7n, streamOpen: true }]);
  t.deepEqual(h.client.ackStats(), { sent: 1, failed: 0 });

  const off = harnessFor(t, await serving(true), EMPTY_STATE, undefined, false);
  off.client.start();
  await until(() => off.client.stats().version === 7n);
  await off.client.stop();
  const silent = await serving(false);
  const never = harnessFor(t, silent);
  never.client.start();
  await until(() => silent.requests.length >= 1);
  await never.client.stop();
  t.is(goodbyes.length, 1, "no other goodbye");
});

test("spend figures an Ingest acknowledgement carried are raised in the state and persisted; never lowered, never an older day", async (t) => {
  const peer = await syncPeer(async function* (_req, ctx) {
    yield snapshot(10n);
    await idle(ctx);
  });
  const h = harnessFor(t, peer);
  const spend = (agentId: string, day: string, spentUsd: number) => create(AgentSpendSchema, { agentId, day, spentUsd });
  h.client.raiseSpend([spend("agt_1", "2026-11-23", 1)]);
  t.is(h.states.length, 0, "no state yet (no tenant): nothing to raise");
  h.client.start();
  await until(() => h.states.length > 0);
  h.client.raiseSpend([spend("agt_1", "2026-11-23", 0.5), spend("agt_2", "2026-11-23", 0.25)]);
  h.client.raiseSpend([spend("agt_1", "2026-11-23", 0.4), spend("agt_2", "2026-11-22", 9)]);
  const last = h.states.at(-1)!;
  t.is(last.version, 10n, "the version is the stream's");
  t.deepEqual([...last.spend.values()].map((s) => [s.agentId, s.day, s.spentUsd]).sort(), [["agt_1", "2026-11-23", 0.5], ["agt_2", "2026-11-23", 0.25]]);
  h.client.raiseSpend([spend("agt_1", "2026-11-24", 0.01)]);
  t.is(h.states.at(-1)!.spend.get("agt_1")!.spentUsd, 0.01, "a later day's figure replaces the earlier day's");
  await h.client.stop();
  const saved = loadSnapshot(h.path);
  t.deepEqual([...saved!.state.spend.values()].map((s) => [s.agentId, s.day, s.spentUsd]).sort(), [["agt_1", "2026-11-24", 0.01], ["agt_2", "2026-11-23", 0.25]]);
});
