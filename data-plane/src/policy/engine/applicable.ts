// Which active policies apply to an agent in a phase: linked to it or tenant-wide, matching direction.
import type { Agent, Policy } from "@agentgov/proto";

export type Phase = "inbound" | "outbound";

export function applicablePolicies(ordered: readonly Policy[], agent: Agent, phase: Phase): Policy[] {
  const out: Policy[] = [];
  for (const p of ordered) {
    const dir = p.conditions?.direction || "inbound";
    if (dir !== phase && dir !== "both") continue;
    if (p.agentIds.length > 0 && !p.agentIds.includes(agent.id)) continue;
    out.push(p);
  }
  return out;
}
