// The sidecar's view of its tenant: an immutable value replaced whole on every snapshot or delta,
// so a request sees either the old or the new policy set, never a mix.
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

function order(policies: ReadonlyMap<string, Policy>): Policy[] {
  return [...policies.values()]
    .filter((p) => p.status === "active")
    .sort((a, b) => a.priority - b.priority || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
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

export function applyDelta(prev: GovernanceState, version: bigint, d: Delta): GovernanceState {
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
  return { version, tenantId: prev.tenantId, agents, policies, orderedPolicies: order(policies), keysByHash, spend };
}
