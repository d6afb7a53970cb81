// What the sidecar's main thread sends the snapshot worker (snapshot-worker.ts) for each state it
// persists: the entries that changed since the state it sent before, found by identity (applyDelta
// shares unchanged maps and entries with the previous state, so a one-policy delta is a diff of one
// entry, found without looking into the other maps). Entries travel as structured clones of the
// protobuf messages (the worker encodes them as they are); nothing is encoded on the main thread.
import type { Agent, AgentSpend, ApiKey, Policy } from "@agentgov/proto";
import type { GovernanceState } from "../state/governance-state.js";

/** Changes of one map: `replace` = the map is `set` alone (a whole new snapshot: its order kept). */
export interface MapDiff<V> {
  readonly replace: boolean;
  readonly set: readonly (readonly [string, V])[];
  readonly del: readonly string[];
}

/** A state as changes to the previous one sent; a map left out is unchanged. */
export interface StateDiff {
  readonly version: bigint;
  readonly tenantId: string;
  readonly agents?: MapDiff<Agent>;
  readonly policies?: MapDiff<Policy>;
  readonly keysByHash?: MapDiff<ApiKey>;
  readonly spend?: MapDiff<AgentSpend>;
}

export type ToWorker =
  | { readonly type: "state"; readonly seq: number; readonly diff: StateDiff; readonly spendOnly: boolean }
  | { readonly type: "touch"; readonly seq: number }
  | { readonly type: "flush"; readonly seq: number };

export type FromWorker =
  | { readonly type: "error"; readonly message: string }
  /** Everything sent up to `seq` is written (deferred spend aside), and nothing is being written. */
  | { readonly type: "idle"; readonly seq: number }
  | { readonly type: "flushed"; readonly seq: number };

function diffMap<V>(prev: ReadonlyMap<string, V> | undefined, next: ReadonlyMap<string, V>): MapDiff<V> | undefined {
  if (prev === next) return undefined;
  if (!prev) return { replace: true, set: [...next.entries()], del: [] };
  const set: [string, V][] = [];
  for (const [k, v] of next) if (prev.get(k) !== v) set.push([k, v]);
  if (set.length === next.size && next.size > 0) return { replace: true, set, del: [] };
  const del: string[] = [];
  for (const k of prev.keys()) if (!next.has(k)) del.push(k);
  return { replace: false, set, del };
}

/** `next` as changes to `prev` (undefined: the whole of `next`). */
export function diffStates(prev: GovernanceState | undefined, next: GovernanceState): StateDiff {
  return {
    version: next.version,
    tenantId: next.tenantId,
    agents: diffMap(prev?.agents, next.agents),
    policies: diffMap(prev?.policies, next.policies),
    keysByHash: diffMap(prev?.keysByHash, next.keysByHash),
    spend: diffMap(prev?.spend, next.spend),
  };
}

/** The worker's own copy of the state, changed in place by each diff. */
export interface LiveState {
  version: bigint;
  tenantId: string;
  agents: Map<string, Agent>;
  policies: Map<string, Policy>;
  /** Not kept (persistence does not need it). */
  readonly orderedPolicies: readonly Policy[];
  keysByHash: Map<string, ApiKey>;
  spend: Map<string, AgentSpend>;
}

export function emptyLiveState(): LiveState {
  return { version: 0n, tenantId: "", agents: new Map(), policies: new Map(), orderedPolicies: [], keysByHash: new Map(), spend: new Map() };
}

function applyMap<V>(m: Map<string, V>, d: MapDiff<V> | undefined): Map<string, V> {
  if (!d) return m;
  if (d.replace) return new Map(d.set);
  for (const k of d.del) m.delete(k);
  for (const [k, v] of d.set) m.set(k, v);
  return m;
}

export function applyStateDiff(s: LiveState, d: StateDiff): void {
  s.version = d.version;
  s.tenantId = d.tenantId;
  s.agents = applyMap(s.agents, d.agents);
  s.policies = applyMap(s.policies, d.policies);
  s.keysByHash = applyMap(s.keysByHash, d.keysByHash);
  s.spend = applyMap(s.spend, d.spend);
}
