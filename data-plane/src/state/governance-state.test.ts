// applyDelta copies only the maps a delta changes and keeps the ordered policy list sorted
// incrementally: the state it gives must be exactly the one the former full-copy implementation
// (kept below as the reference) gives, for any sequence of deltas.
import test from "ava";
import { create } from "@bufbuild/protobuf";
import { AgentSchema, AgentSpendSchema, ApiKeySchema, DeltaSchema, PolicySchema, SnapshotSchema, type Delta, type Policy } from "@agentgov/proto";
import { applyDelta, fromSnapshot, type GovernanceState } from "./governance-state.js";

/** The implementation before copy-on-write (session 17): every map copied, every policy sorted. */
function referenceApplyDelta(prev: GovernanceState, version: bigint, d: Delta): GovernanceState {
  const agents = new Map(prev.agents);
  for (const a of d.upsertAgents) agents.set(a.id, a);
  for (const id of d.removedAgentIds) agents.delete(id);
  const policies = new Map(prev.policies);
  for (const p of d.upsertPolicies) policies.set(p.id, p);
  for (const id of d.removedPolicyIds) policies.delete(id);
  const keysByHash = new Map(prev.keysByHash);
  if (d.removedKeyIds.length > 0) {
    const removed = new Set(d.removedKeyIds);
    for (const [h, k] of keysByHash) if (removed.has(k.id)) keysByHash.delete(h);
  }
  for (const k of d.upsertKeys) keysByHash.set(k.keyHash, k);
  const spend = new Map(prev.spend);
  for (const s of d.spend) spend.set(s.agentId, s);
  const orderedPolicies = [...policies.values()]
    .filter((p) => p.status === "active")
    .sort((a, b) => a.priority - b.priority || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { version, tenantId: prev.tenantId, agents, policies, orderedPolicies, keysByHash, spend };
}

/** Deterministic PRNG (mulberry32), so that a failure can be replayed from its seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomDelta(r: () => number, n: number): Delta {
  const int = (k: number) => Math.floor(r() * k);
  const some = <T>(max: number, f: () => T): T[] => Array.from({ length: int(max + 1) }, f);
  // Few distinct priorities, so that ties broken by id are frequent; ids reused so upserts replace.
  const policy = (): Policy =>
    create(PolicySchema, { id: `pol_${int(n)}`, name: `p${int(1000)}`, priority: int(6), status: r() < 0.75 ? "active" : "paused", action: "log" });
  const pick = r();
  return create(DeltaSchema, {
    upsertAgents: pick < 0.3 ? some(3, () => create(AgentSchema, { id: `agt_${int(n)}`, name: `a${int(1000)}`, status: "active" })) : [],
    removedAgentIds: pick < 0.3 ? some(2, () => `agt_${int(n)}`) : [],
    upsertPolicies: pick > 0.2 && pick < 0.8 ? some(r() < 0.1 ? 12 : 2, policy) : [],
    removedPolicyIds: pick > 0.5 && pick < 0.8 ? some(2, () => `pol_${int(n)}`) : [],
    // Several hashes per key id: a removal by id takes all of them.
    upsertKeys: pick > 0.6 ? some(3, () => create(ApiKeySchema, { id: `key_${int(n)}`, keyHash: `h${int(n * 2)}`, scope: "ingest" })) : [],
    removedKeyIds: pick > 0.7 ? some(2, () => `key_${int(n)}`) : [],
    spend: r() < 0.4 ? some(3, () => create(AgentSpendSchema, { agentId: `agt_${int(n)}`, day: "2026-11-22", spentUsd: int(100) })) : [],
  });
}

function seedState(r: () => number, n: number): GovernanceState {
  const ids = (prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}_${i}`).filter(() => r() < 0.6);
  return fromSnapshot(
    1n,
    create(SnapshotSchema, {
      tenantId: "ten_1",
      agents: ids("agt").map((id) => create(AgentSchema, { id, name: id, status: "active" })),
      policies: ids("pol").map((id) => create(PolicySchema, { id, priority: Math.floor(r() * 6), status: r() < 0.75 ? "active" : "paused" })),
      keys: ids("key").map((id) => create(ApiKeySchema, { id, keyHash: `h_${id}`, scope: "ingest" })),
      spend: ids("agt").map((agentId) => create(AgentSpendSchema, { agentId, day: "2026-11-22", spentUsd: 1 })),
    }),
  );
}

/** Everything a reader can see, element identity included (entries are compared by reference). */
function assertSame(t: import("ava").ExecutionContext, got: GovernanceState, want: GovernanceState, where: string): void {
  t.is(got.version, want.version, where);
  t.is(got.tenantId, want.tenantId, where);
  for (const k of ["agents", "policies", "keysByHash", "spend"] as const) {
    const g = [...got[k].entries()];
    const w = [...want[k].entries()];
    t.is(g.length, w.length, `${where}: ${k} size`);
    t.true(g.every(([key, v], i) => key === w[i]![0] && v === w[i]![1]), `${where}: ${k} entries (same order, same values)`);
  }
  t.deepEqual(got.orderedPolicies.map((p) => p.id), want.orderedPolicies.map((p) => p.id), `${where}: orderedPolicies`);
  t.true(got.orderedPolicies.every((p, i) => p === want.orderedPolicies[i]), `${where}: orderedPolicies values`);
}

test("applying random deltas gives exactly the state the full-copy implementation gives", (t) => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    const r = rng(seed);
    const n = seed % 2 === 0 ? 12 : 80; // small id spaces: removals and replacements hit often
    let got = seedState(r, n);
    let want = got;
    for (let i = 0; i < 300; i++) {
      const d = randomDelta(r, n);
      const before = { agents: got.agents, policies: got.policies, keysByHash: got.keysByHash, spend: got.spend, ordered: [...got.orderedPolicies] };
      const next = applyDelta(got, BigInt(i + 2), d);
      want = referenceApplyDelta(want, BigInt(i + 2), d);
      assertSame(t, next, want, `seed ${seed}, delta ${i}`);
      // The previous state is left as it was (readers may still hold it).
      t.deepEqual(got.orderedPolicies, before.ordered, `seed ${seed}, delta ${i}: previous ordered list untouched`);
      got = next;
    }
  }
});

test("a delta shares the maps it does not change with the previous state", (t) => {
  const s = seedState(rng(9), 50);
  const d = create(DeltaSchema, { upsertPolicies: [create(PolicySchema, { id: "pol_new", priority: 3, status: "active" })] });
  const next = applyDelta(s, 2n, d);
  t.is(next.agents, s.agents);
  t.is(next.keysByHash, s.keysByHash);
  t.is(next.spend, s.spend);
  t.not(next.policies, s.policies);
  t.false(s.policies.has("pol_new"), "the previous state's map is not changed");
  const spendOnly = applyDelta(next, 3n, create(DeltaSchema, { spend: [create(AgentSpendSchema, { agentId: "agt_1", day: "2026-11-22", spentUsd: 2 })] }));
  t.is(spendOnly.policies, next.policies);
  t.is(spendOnly.orderedPolicies, next.orderedPolicies, "no policy changed: the ordered list is not rebuilt");
  t.not(spendOnly.spend, next.spend);
});
