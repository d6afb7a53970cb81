// The policy model of DESIGN.md §6 as REST schemas, validated strictly.
import { z } from "../openapi/zod.js";
import { Timestamp, iso } from "../openapi/common-schemas.js";
import type { PolicyRow } from "../../stores/postgres/policies-repo.js";
import { regexSafetyProblem } from "../../domain/regex-safety.js";

export const PII_TYPES = [
  "ssn", "credit_card", "email", "phone", "ip_address", "iban", "us_bank_routing", "us_passport", "api_key", "date_of_birth",
] as const;

const Strings = z.array(z.string().min(1).max(200)).max(200);
// "Any of these found" over an empty list would never hold, yet the sidecar reads an empty list as "no
// condition" (match everything): both lists must name at least one item. An empty `models` is
// consistent with its own rule ("not in the list") and stays allowed.
const NonEmptyStrings = Strings.min(1);

export const Conditions = z
  .object({
    direction: z.enum(["inbound", "outbound", "both"]).default("inbound"),
    pii_types: z.array(z.enum(PII_TYPES)).min(1).max(PII_TYPES.length).optional(),
    injection_score_gte: z.number().min(0).max(1).optional(),
    models: Strings.optional(),
    max_input_tokens: z.number().int().positive().max(4_294_967_295).optional(),
    keywords: NonEmptyStrings.optional(),
    regex: z
      .string()
      .min(1)
      .max(1000)
      .superRefine((v, ctx) => {
        const problem = regexSafetyProblem(v);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      })
      .optional(),
  })
  .strict()
  .openapi("PolicyConditions");

const AgentIds = z.array(z.string().min(1).max(200)).max(1000).openapi({ description: "Agent ids; empty = every agent of the tenant" });
const PolicyName = z.string().trim().min(1).max(200);
const Description = z.string().max(4000).nullable();
const PolicyStatus = z.enum(["active", "disabled"]);
const Action = z.enum(["block", "redact", "log"]);
const Priority = z.number().int().min(-1_000_000).max(1_000_000).openapi({ description: "Lower runs first" });

export const PolicyCreate = z
  .object({
    name: PolicyName,
    description: Description.optional(),
    status: PolicyStatus.default("active"),
    action: Action,
    priority: Priority.default(100),
    conditions: Conditions.default({ direction: "inbound" }),
    agents: AgentIds.default([]),
  })
  .strict()
  .openapi("PolicyCreate");

/** PATCH merges top-level fields; `conditions` is replaced whole. */
export const PolicyPatch = z
  .object({
    name: PolicyName.optional(),
    description: Description.optional(),
    status: PolicyStatus.optional(),
    action: Action.optional(),
    priority: Priority.optional(),
    conditions: Conditions.optional(),
    agents: AgentIds.optional(),
  })
  .strict()
  .openapi("PolicyPatch");

export const PolicyA = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    status: z.enum(["active", "disabled"]),
    action: z.enum(["block", "redact", "log"]),
    priority: z.number().int(),
    conditions: z.object({
      direction: z.enum(["inbound", "outbound", "both"]),
      pii_types: z.array(z.string()).optional(),
      injection_score_gte: z.number().optional(),
      models: z.array(z.string()).optional(),
      max_input_tokens: z.number().int().optional(),
      keywords: z.array(z.string()).optional(),
      regex: z.string().optional(),
    }),
    agents: z.array(z.string()),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("Policy");

export function policyA(p: PolicyRow) {
  return {
    id: p.id,
    name: p.name,
    description: p.description,
    status: p.status,
    action: p.action,
    priority: p.priority,
    conditions: p.conditions,
    agents: p.agents,
    created_at: iso(p.created_at),
    updated_at: iso(p.updated_at),
  };
}
