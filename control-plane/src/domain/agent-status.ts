// Agent status transitions (DESIGN.md §5): active ⇄ paused, either → archived; archived is final.
// Setting the status an agent already has is a no-op, not an error.
import { conflict } from "../errors/app-error.js";

export const AGENT_STATUSES = ["active", "paused", "archived"] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

const NEXT: Record<AgentStatus, readonly AgentStatus[]> = {
  active: ["paused", "archived"],
  paused: ["active", "archived"],
  archived: [],
};

export function canTransition(from: AgentStatus, to: AgentStatus): boolean {
  return from === to || NEXT[from].includes(to);
}

/** Throws 409 conflict when `from → to` is not allowed. */
export function checkTransition(agentId: string, from: AgentStatus, to: AgentStatus): void {
  if (canTransition(from, to)) return;
  const reason = from === "archived" ? "archived is final" : `allowed from ${from}: ${NEXT[from].join(", ")}`;
  throw conflict(`agent ${agentId} cannot go from ${from} to ${to} (${reason})`);
}
