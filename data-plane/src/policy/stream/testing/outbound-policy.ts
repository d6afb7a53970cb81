// Outbound policies for the stream governor's tests: a fresh id and name per policy (pol_1/p1, pol_2/p2, …).
import { create } from "@bufbuild/protobuf";
import { PolicyConditionsSchema, PolicySchema, type Policy } from "@agentgov/proto";

export type OutboundConditions = Partial<{ piiTypes: string[]; keywords: string[]; regex: string; models: string[] }>;

let n = 0;

export function outboundPolicy(action: "block" | "redact" | "log", conditions: OutboundConditions, priority = 1): Policy {
  n++;
  return create(PolicySchema, {
    id: `pol_${n}`,
    name: `p${n}`,
    status: "active",
    action,
    priority,
    conditions: create(PolicyConditionsSchema, { direction: "outbound", ...conditions }),
  });
}
