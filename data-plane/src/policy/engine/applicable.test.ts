// applicablePolicies against the linear scan it replaced (kept here as the reference), on random policy
// sets, and its cost with many agent-scoped policies.
import test from "ava";
import { create, AgentSchema, PolicySchema, PolicyConditionsSchema, type Agent, type Policy } from "@agentgov/proto";
import { applicablePolicies, type Phase } from "./applicable.js";

function reference(ordered: readonly Policy[], agent: Agent, phase: Phase): Policy[] {
  const out: Policy[] = [];
  for (const p of ordered) {
    const dir = p.conditions?.direction || "inbound";
    if (dir !== phase && dir !== "both") continue;
    if (p.agentIds.length > 0 && !p.agentIds.includes(agent.id)) continue;
    out.push(p);
  }
  return out;
}

// mulberry32: a seeded generator, so a failure replays.
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 2 ** 32;
  };
}

const agentOf = (id: string) => create(AgentSchema, { id, name: id, status: "active" });

test("same policies, same order as the linear scan, on random policy sets of every size", (t) => {
  const rand = rng(17);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const ids = Array.from({ length: 12 }, (_, i) => `agt_${i}`);
  let n = 0;
  for (let round = 0; round < 300; round++) {
    const size = Math.floor(rand() * 80);
    const ordered = Array.from({ length: size }, () => {
      n++;
      const scoped = rand() < 0.6;
      const agentIds = scoped ? Array.from({ length: 1 + Math.floor(rand() * 4) }, () => pick(ids)) : []; // duplicates included
      const direction = pick(["inbound", "outbound", "both", "", undefined]);
      return create(PolicySchema, {
        id: `pol_${n}`,
        name: `p${n}`,
        status: "active",
        action: "log",
        priority: n,
        agentIds,
        conditions: direction === undefined ? undefined : create(PolicyConditionsSchema, { direction }),
      });
    });
    for (const id of [...ids, "agt_unlinked"]) {
      for (const phase of ["inbound", "outbound"] as const) {
        const want = reference(ordered, agentOf(id), phase).map((p) => p.id);
        t.deepEqual(applicablePolicies(ordered, agentOf(id), phase).map((p) => p.id), want, `round ${round} ${id} ${phase}`);
        t.deepEqual(applicablePolicies(ordered, agentOf(id), phase).map((p) => p.id), want, "again, from the index");
      }
    }
  }
});

test("a new policy list (a new governance state) is indexed anew; results are the caller's to keep", (t) => {
  const mk = (i: number, agentIds: string[]) => create(PolicySchema, { id: `pol_${i}`, name: `p${i}`, status: "active", action: "log", priority: i, agentIds, conditions: create(PolicyConditionsSchema, { direction: "both" }) });
  const before = Array.from({ length: 40 }, (_, i) => mk(i, i % 2 ? ["agt_A"] : ["agt_B"]));
  const a = agentOf("agt_A");
  t.is(applicablePolicies(before, a, "inbound").length, 20);
  const after = [...before, mk(40, []), mk(41, ["agt_A"])];
  t.deepEqual(applicablePolicies(after, a, "outbound").map((p) => p.id).slice(-2), ["pol_40", "pol_41"]);
  const result = applicablePolicies(after, a, "outbound");
  result.length = 0;
  t.is(applicablePolicies(after, a, "outbound").length, 22);
  t.is(applicablePolicies(after, agentOf("agt_C"), "outbound").length, 1);
});

// The linear scan: 8 ms per lookup here (2,000 policies × 1,000 agent ids), 2–4 lookups per request.
test("lookups cost O(result), not O(policies × agent ids): an indexed lookup reads no agent list", (t) => {
  const scoped = Array.from({ length: 2000 }, (_, i) =>
    create(PolicySchema, { id: `pol_${i}`, name: `p${i}`, status: "active", action: "log", priority: i, agentIds: Array.from({ length: 1000 }, (_, j) => `agt_${i * 7 + j}`) }),
  );
  const agent = agentOf("agt_target");
  t.deepEqual(applicablePolicies(scoped, agent, "inbound"), []); // builds the index
  // Once indexed, a lookup reads no policy's agent list (a scan would read all 2,000 of them).
  for (const p of scoped) {
    Object.defineProperty(p, "agentIds", {
      get() {
        throw new Error("a lookup scanned the policies' agent lists");
      },
    });
  }
  for (let i = 0; i < 1000; i++) applicablePolicies(scoped, agent, i % 2 ? "inbound" : "outbound");
  t.is(applicablePolicies(scoped, agentOf("agt_7"), "inbound").length, 2);
});
