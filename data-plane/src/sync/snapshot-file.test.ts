// The persisted governance state: a change of agents, policies or keys is on disk at once; a change of
// spend figures only is written within the spend delay (or at flush), with everything after it.
import test from "ava";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { AgentSchema, AgentSpendSchema, ApiKeySchema, DeltaSchema, SnapshotSchema } from "@agentgov/proto";
import { applyDelta, fromSnapshot } from "../state/governance-state.js";
import { loadSnapshot, SnapshotWriter } from "./snapshot-file.js";

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
  return { path, errors, writer: new SnapshotWriter(path, (e) => errors.push(e), spendDelayMs), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
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
  const { encodeSnapshot, spendPathOf } = await import("./snapshot-file.js");
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
