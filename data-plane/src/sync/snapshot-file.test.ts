// The persisted governance state: a change of agents, policies or keys is on disk at once; a change of
// spend figures only is written within the spend delay (or at flush), with everything after it.
import test from "ava";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { AgentSchema, AgentSpendSchema, ApiKeySchema, DeltaSchema, PolicySchema, SnapshotSchema } from "@agentgov/proto";
import { applyDelta, fromSnapshot, type GovernanceState } from "../state/governance-state.js";
import { encodeSnapshot, loadSnapshot, snapshotEncodesOnThisThread, SnapshotWriter } from "./snapshot-file.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const base = fromSnapshot(1n, create(SnapshotSchema, { tenantId: "ten_1", agents: [create(AgentSchema, { id: "agt_1", name: "a", status: "active" })] }));
const spend = (version: bigint, usd: number) => applyDelta(base, version, create(DeltaSchema, { spend: [create(AgentSpendSchema, { agentId: "agt_1", day: "2026-11-21", spentUsd: usd })] }));

async function waitFor(cond: () => boolean, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await sleep(5);
  }
  return cond();
}

function harness(spendDelayMs: number) {
  const dir = mkdtempSync(join(tmpdir(), "agentgov-snapshot-"));
  const path = join(dir, "snapshot.bin");
  const errors: unknown[] = [];
  const writer = new SnapshotWriter(path, (e) => errors.push(e), spendDelayMs);
  // The worker is ended before its directory goes: a test that plays a kill (no flush) may leave it
  // writing, and a file it creates during the removal fails the rmdir (ENOTEMPTY).
  const cleanup = async () => {
    await writer.flush().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };
  return { path, errors, writer, cleanup };
}

test("a spend-only change waits for the spend delay, then is written", async (t) => {
  const delayMs = 400;
  const h = harness(delayMs);
  t.teardown(h.cleanup);
  h.writer.save(base);
  await h.writer.flush(); // the first write loop done (see below)
  t.is(loadSnapshot(h.path)?.state.version, 1n);
  const savedAt = Date.now();
  h.writer.save(spend(2n, 1.5), true);
  h.writer.save(spend(3n, 2.5), true);
  // Watched until the new state is on disk, then judged by when that was: a check at a fixed sleep
  // failed on a loaded CI machine whose event loop woke up after the delay had already passed.
  const versions = new Set<bigint>();
  const written = await waitFor(() => {
    const v = loadSnapshot(h.path)?.state.version;
    if (v !== undefined) versions.add(v);
    return v === 3n;
  }, 5000);
  const writtenAfterMs = Date.now() - savedAt;
  t.true(written);
  t.true(writtenAfterMs >= delayMs - 20, `not rewritten before the delay (written after ${writtenAfterMs} ms)`);
  t.deepEqual([...versions], [1n, 3n], "version 2 is never written on its own");
  t.is(loadSnapshot(h.path)?.state.spend.get("agt_1")?.spentUsd, 2.5, "the newest spend is written once");
  t.deepEqual(h.errors, []);
});

test("a key revocation after pending spend is written at once, spend included", async (t) => {
  const h = harness(60_000);
  t.teardown(h.cleanup);
  const withKey = applyDelta(base, 2n, create(DeltaSchema, { upsertKeys: [create(ApiKeySchema, { id: "key_1", keyHash: "ab".repeat(32), scope: "ingest" })] }));
  h.writer.save(withKey);
  t.true(await waitFor(() => loadSnapshot(h.path)?.state.version === 2n));
  const spent = applyDelta(withKey, 3n, create(DeltaSchema, { spend: [create(AgentSpendSchema, { agentId: "agt_1", day: "2026-11-21", spentUsd: 4 })] }));
  h.writer.save(spent, true);
  const revoked = applyDelta(spent, 4n, create(DeltaSchema, { removedKeyIds: ["key_1"] }));
  h.writer.save(revoked);
  t.true(await waitFor(() => loadSnapshot(h.path)?.state.version === 4n), "written without waiting for the spend delay");
  const saved = loadSnapshot(h.path)!.state;
  t.is(saved.keysByHash.size, 0);
  t.is(saved.spend.get("agt_1")?.spentUsd, 4);
});

test("flush writes deferred spend at once (graceful stop)", async (t) => {
  const h = harness(60_000);
  t.teardown(h.cleanup);
  h.writer.save(spend(2n, 7), true);
  await sleep(50);
  t.false(existsSync(h.path));
  await h.writer.flush();
  t.is(loadSnapshot(h.path)?.state.spend.get("agt_1")?.spentUsd, 7);
});

test("spend figures are on disk at once in the spend file: a sidecar killed within the spend delay restarts with them", async (t) => {
  const h = harness(60_000);
  t.teardown(h.cleanup);
  h.writer.save(base);
  // The first write done (not only its file in place: a spend state handed over while its write loop still
  // runs is written with it, which the writer allows and this test would take for no delay).
  await h.writer.flush();
  t.is(loadSnapshot(h.path)?.state.version, 1n);
  h.writer.save(spend(2n, 1.5), true);
  h.writer.save(spend(3n, 2.5), true);
  // No flush (a kill -9): the snapshot is still version 1, the newest spend is read beside it.
  t.true(await waitFor(() => loadSnapshot(h.path)?.state.spend.get("agt_1")?.spentUsd === 2.5));
  t.is(loadSnapshot(h.path)?.state.version, 1n, "the snapshot itself waits for the spend delay");
  t.is(loadSnapshot(h.path)?.state.agents.size, 1);
  t.deepEqual(h.errors, []);
});

test("the spend file never lowers a figure of the same day, and a damaged or foreign one is ignored", async (t) => {
  const h = harness(60_000);
  t.teardown(h.cleanup);
  h.writer.save(spend(2n, 4));
  await h.writer.flush();
  const { writeFileSync } = await import("node:fs");
  const { spendPathOf } = await import("./snapshot-file.js");
  writeFileSync(spendPathOf(h.path), encodeSnapshot(spend(3n, 1))); // an older, lower figure of the same day
  t.is(loadSnapshot(h.path)?.state.spend.get("agt_1")?.spentUsd, 4);
  const nextDay = applyDelta(base, 4n, create(DeltaSchema, { spend: [create(AgentSpendSchema, { agentId: "agt_1", day: "2026-11-22", spentUsd: 0.5 })] }));
  writeFileSync(spendPathOf(h.path), encodeSnapshot(nextDay));
  t.deepEqual(loadSnapshot(h.path)?.state.spend.get("agt_1"), nextDay.spend.get("agt_1"), "a later day's figure replaces it");
  writeFileSync(spendPathOf(h.path), Buffer.from([0xff, 0xff, 0xff]));
  t.is(loadSnapshot(h.path)?.state.spend.get("agt_1")?.spentUsd, 4, "damaged: the snapshot's figures");
  const foreign = fromSnapshot(5n, create(SnapshotSchema, { tenantId: "ten_other", spend: [create(AgentSpendSchema, { agentId: "agt_1", day: "2026-11-21", spentUsd: 99 })] }));
  writeFileSync(spendPathOf(h.path), encodeSnapshot(foreign));
  t.is(loadSnapshot(h.path)?.state.spend.get("agt_1")?.spentUsd, 4, "another tenant's file is not read");
});

/** A large tenant's state (encoding it takes ~100 ms here: the main thread must not). */
function largeState(): GovernanceState {
  const agents = Array.from({ length: 3000 }, (_, i) => create(AgentSchema, { id: `agt_${i}`, name: `agent ${i}`, status: "active", policyIds: [`pol_${i % 500}`] }));
  const policies = Array.from({ length: 500 }, (_, i) =>
    create(PolicySchema, { id: `pol_${i}`, status: "active", action: "log", priority: i, agentIds: Array.from({ length: 50 }, (_, j) => `agt_${(i * 7 + j) % 3000}`) }),
  );
  const keys = Array.from({ length: 6000 }, (_, i) => create(ApiKeySchema, { id: `key_${i}`, keyHash: i.toString(16).padStart(64, "0"), scope: "ingest" }));
  return fromSnapshot(1n, create(SnapshotSchema, { tenantId: "ten_1", agents, policies, keys }));
}

test("a revoked key is not served after a restart from the persisted state (no graceful stop)", async (t) => {
  const h = harness(60_000);
  t.teardown(h.cleanup);
  t.teardown(() => h.writer.flush());
  const own = create(ApiKeySchema, { id: "key_own", keyHash: "0a".repeat(32), scope: "ingest" });
  const revokedKey = create(ApiKeySchema, { id: "key_x", keyHash: "0b".repeat(32), scope: "ingest" });
  let s = applyDelta(base, 2n, create(DeltaSchema, { upsertKeys: [own, revokedKey] }));
  h.writer.save(s);
  s = applyDelta(s, 3n, create(DeltaSchema, { spend: [create(AgentSpendSchema, { agentId: "agt_1", day: "2026-11-21", spentUsd: 1 })] }));
  h.writer.save(s, true);
  s = applyDelta(s, 4n, create(DeltaSchema, { removedKeyIds: ["key_x"] }));
  h.writer.save(s);
  // No flush: what a restarted sidecar reads (main.ts: loadSnapshot, served when it lists its own key).
  t.true(await waitFor(() => loadSnapshot(h.path)?.state.version === 4n, 10_000), "the removal is written without a graceful stop");
  const restarted = loadSnapshot(h.path)!.state;
  t.true(restarted.keysByHash.has(own.keyHash));
  t.false(restarted.keysByHash.has(revokedKey.keyHash), "the revoked key is not served");
  t.deepEqual(h.errors, []);
});

// Serial: other tests of this file encode on this thread (the count is per thread).
test.serial("a burst of deltas to a large state is persisted without encoding on the main thread", async (t) => {
  const h = harness(60_000);
  t.teardown(h.cleanup);
  t.teardown(() => h.writer.flush());
  let s = largeState();
  const encodesBefore = snapshotEncodesOnThisThread();
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  h.writer.save(s);
  for (let i = 0; i < 40; i++) {
    const p = s.policies.get(`pol_${i}`)!;
    s = applyDelta(s, BigInt(i + 2), create(DeltaSchema, { upsertPolicies: [create(PolicySchema, { ...p, priority: 10_000 + i })] }));
    h.writer.save(s);
    await new Promise((r) => setImmediate(r));
  }
  s = applyDelta(s, 100n, create(DeltaSchema, { removedKeyIds: ["key_7"] }));
  h.writer.save(s);
  t.true(await waitFor(() => loadSnapshot(h.path)?.state.version === 100n, 20_000));
  delay.disable();
  t.is(snapshotEncodesOnThisThread(), encodesBefore, "the main thread encoded no snapshot");
  const saved = loadSnapshot(h.path)!.state;
  t.false(saved.keysByHash.has((7).toString(16).padStart(64, "0")));
  t.is(saved.keysByHash.size, 5999);
  t.is(saved.policies.get("pol_39")?.priority, 10_039);
  t.deepEqual(saved.orderedPolicies.map((p) => p.id), s.orderedPolicies.map((p) => p.id));
  t.is(saved.agents.size, 3000);
  // The format is unchanged: the bytes the former writer wrote on the main thread (old files load as before).
  t.true(Buffer.from(encodeSnapshot(s)).equals(readFileSync(h.path)), "the file is encodeSnapshot of the newest state");
  t.log(`event loop delay during the burst: max ${(delay.max / 1e6).toFixed(1)} ms, p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms`);
  t.deepEqual(h.errors, []);
});

test("a worker that ends is replaced: the next state is written whole and at once", async (t) => {
  const h = harness(60_000);
  t.teardown(h.cleanup);
  t.teardown(() => h.writer.flush());
  h.writer.save(base);
  t.true(await waitFor(() => loadSnapshot(h.path)?.state.version === 1n));
  // The worker dies (as by an error); the next change, spend only, is still written at once and whole.
  await (h.writer as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
  h.writer.save(spend(2n, 3), true);
  t.true(await waitFor(() => loadSnapshot(h.path)?.state.version === 2n, 10_000));
  t.is(loadSnapshot(h.path)?.state.agents.size, 1);
  t.is(loadSnapshot(h.path)?.state.spend.get("agt_1")?.spentUsd, 3);
});
