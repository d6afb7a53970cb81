// An agent's configYaml is the source of truth of its configuration (DESIGN.md §5).
// Known keys are validated; unknown keys are kept untouched.
import { isMap, parseDocument, type Document } from "yaml";
import { badRequest, type ErrorDetail } from "../errors/app-error.js";

export interface AgentConfig {
  rate_limit: number | null; // requests per minute
  budget_limit_daily: number | null; // USD per UTC day
  pii_detection: boolean;
  policies: string[] | null; // null: the YAML has no policies key
}

function lineOf(doc: Document, offset: number | undefined, text: string): number | undefined {
  void doc;
  if (offset === undefined) return undefined;
  return text.slice(0, offset).split("\n").length;
}

/** Parses and validates configYaml; throws a 400 naming the line or key. Empty text = all defaults. */
export function parseAgentConfig(text: string): AgentConfig {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    const line = e.linePos?.[0]?.line;
    throw badRequest(`configYaml is not valid YAML${line ? ` (line ${line})` : ""}: ${e.message.split("\n")[0]}`, [
      { path: "configYaml", message: `${line ? `line ${line}: ` : ""}${e.message.split("\n")[0]}` },
    ]);
  }
  const root: unknown = doc.toJS();
  if (root === null || root === undefined) return { rate_limit: null, budget_limit_daily: null, pii_detection: true, policies: null };
  if (!isMap(doc.contents) || typeof root !== "object" || Array.isArray(root)) {
    throw badRequest("configYaml must be a YAML mapping", [{ path: "configYaml", message: "must be a mapping of keys to values" }]);
  }
  const obj = root as Record<string, unknown>;
  const details: ErrorDetail[] = [];
  const at = (key: string): string => {
    const pair = doc.contents && isMap(doc.contents) ? doc.contents.items.find((p) => (p.key as { value?: unknown })?.value === key) : undefined;
    const range = (pair?.key as { range?: [number, number, number] } | undefined)?.range;
    const line = lineOf(doc, range?.[0], text);
    return line ? ` (line ${line})` : "";
  };
  const cfg: AgentConfig = { rate_limit: null, budget_limit_daily: null, pii_detection: true, policies: null };
  if ("rate_limit" in obj && obj.rate_limit !== null) {
    const v = obj.rate_limit;
    if (typeof v !== "number" || !Number.isInteger(v) || v <= 0) details.push({ path: "configYaml.rate_limit", message: `rate_limit must be a positive integer${at("rate_limit")}` });
    else cfg.rate_limit = v;
  }
  if ("budget_limit_daily" in obj && obj.budget_limit_daily !== null) {
    const v = obj.budget_limit_daily;
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0) details.push({ path: "configYaml.budget_limit_daily", message: `budget_limit_daily must be a non-negative number${at("budget_limit_daily")}` });
    else cfg.budget_limit_daily = v;
  }
  if ("pii_detection" in obj) {
    const v = obj.pii_detection;
    if (typeof v !== "boolean") details.push({ path: "configYaml.pii_detection", message: `pii_detection must be true or false${at("pii_detection")}` });
    else cfg.pii_detection = v;
  }
  if ("policies" in obj && obj.policies !== null) {
    const v = obj.policies;
    if (!Array.isArray(v) || v.some((p) => typeof p !== "string")) details.push({ path: "configYaml.policies", message: `policies must be a list of policy ids${at("policies")}` });
    else cfg.policies = [...new Set(v as string[])];
  } else if ("policies" in obj) cfg.policies = [];
  if (details.length > 0) throw badRequest(details.map((d) => d.message).join("; "), details);
  return cfg;
}

/** Returns configYaml with its `policies` key set to ids (other keys, comments and order kept). */
export function withPolicies(text: string, ids: readonly string[]): string {
  const doc = parseDocument(text || "{}");
  if (!isMap(doc.contents)) return text;
  doc.set("policies", [...ids]);
  return doc.toString();
}
