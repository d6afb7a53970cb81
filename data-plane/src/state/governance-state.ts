// The sidecar's view of its tenant: an immutable value replaced whole on every snapshot or delta,
// so a request sees either the old or the new policy set, never a mix. A delta's new value shares
// the maps it does not change with the previous one (applyDelta): nothing may mutate them.
import type { Agent, AgentSpend, ApiKey, Delta, Policy, Snapshot } from "@agentgov/proto";

export interface GovernanceState {
  readonly version: bigint;
  readonly tenantId: string;
  readonly agents: ReadonlyMap<string, Agent>;
  readonly policies: ReadonlyMap<string, Policy>;
  /** Active policies sorted by priority (lower first), then id. */
  readonly orderedPolicies: readonly Policy[];
  readonly keysByHash: ReadonlyMap<string, ApiKey>;
  /** agent id → spend known to the control plane for `day`. */
  readonly spend: ReadonlyMap<string, AgentSpend>;
  /** The control plane refused this sidecar's own key: no key is served (sync/client.ts ownKeyRefused). */
  readonly ownKeyRevoked?: boolean;
}

export const EMPTY_STATE: GovernanceState = {
  version: 0n,
  tenantId: "",
  agents: new Map(),
  policies: new Map(),
  orderedPolicies: [],
  keysByHash: new Map(),
  spend: new Map(),
};

/** Priority (lower first), then id: a total order, ids being unique. */
function byPriority(a: Policy, b: Policy): number {
  return a.priority - b.priority || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

function order(policies: ReadonlyMap<string, Policy>): Policy[] {
  return [...policies.values()].filter((p) => p.status === "active").sort(byPriority);
}

/**
 * `prev` (sorted, from the policies before the change) with the policies of `changed` ids taken out and
 * put back as they are in `policies` (active ones only), each at its place by binary search: the same
 * list as order(policies), without sorting them all again (a one-policy delta on 2,000 policies).
 */
function reorder(prev: readonly Policy[], changed: ReadonlySet<string>, policies: ReadonlyMap<string, Policy>): Policy[] {
  if (changed.size * 8 > prev.length) return order(policies);
  const out = prev.filter((p) => !changed.has(p.id));
  for (const id of changed) {
    const p = policies.get(id);
    if (p?.status !== "active") continue;
    let lo = 0;
    let hi = out.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (byPriority(out[mid]!, p) < 0) lo = mid + 1;
      else hi = mid;
    }
    out.splice(lo, 0, p);
  }
  return out;
}

export function fromSnapshot(version: bigint, s: Snapshot): GovernanceState {
  const policies = new Map(s.policies.map((p) => [p.id, p]));
  return {
    version,
    tenantId: s.tenantId,
    agents: new Map(s.agents.map((a) => [a.id, a])),
    policies,
    orderedPolicies: order(policies),
    keysByHash: new Map(s.keys.map((k) => [k.keyHash, k])),
    spend: new Map(s.spend.map((x) => [x.agentId, x])),
  };
}

/**
 * The state after `d`. Copy on write: only the maps the delta changes are copied (the others, and the
 * ordered policy list when no policy changed, are shared with `prev`, which stays as it was), and the
 * ordered list is updated for the changed policies only. On a large tenant (10,000 agents, 20,000 keys)
 * copying every map and sorting every policy cost ~10 ms per one-policy delta.
 */
/** `prev` itself when nothing changes, else a copy with `upserts` set under keyOf and `removed` keys deleted (applyDelta's copy on write). */
function changed<V>(prev: ReadonlyMap<string, V>, upserts: readonly V[], keyOf: (v: V) => string, removed: readonly string[]): ReadonlyMap<string, V> {
  if (upserts.length === 0 && removed.length === 0) return prev;
  const m = new Map(prev);
  for (const u of upserts) m.set(keyOf(u), u);
  for (const id of removed) m.delete(id);
  return m;
}

export function applyDelta(prev: GovernanceState, version: bigint, d: Delta): GovernanceState {
  const agents = changed(prev.agents, d.upsertAgents, (a) => a.id, d.removedAgentIds);
  const policies = changed(prev.policies, d.upsertPolicies, (p) => p.id, d.removedPolicyIds);
  const orderedPolicies =
    policies === prev.policies ? prev.orderedPolicies : reorder(prev.orderedPolicies, new Set([...d.upsertPolicies.map((p) => p.id), ...d.removedPolicyIds]), policies);
  let keysByHash = prev.keysByHash;
  if (d.upsertKeys.length > 0 || d.removedKeyIds.length > 0) {
    const m = new Map(prev.keysByHash);
    if (d.removedKeyIds.length > 0) {
      const removed = new Set(d.removedKeyIds);
      for (const [h, k] of m) if (removed.has(k.id)) m.delete(h);
    }
    for (const k of d.upsertKeys) m.set(k.keyHash, k);
    keysByHash = m;
  }
  const spend = changed(prev.spend, d.spend, (s) => s.agentId, []);
  return { version, tenantId: prev.tenantId, agents, policies, orderedPolicies, keysByHash, spend };
}
