// An agent's configYaml is the source of truth of its configuration (DESIGN.md §5).
// Known keys are validated (a 400 names the key and its line); other keys are kept untouched (free-form
// settings: the spec calls configYaml the agent's "full YAML configuration"), except that a new write
// with a top-level key that looks like a misspelling of a known key is refused (see nearMissOf).
import { isDeepStrictEqual } from "node:util";
import { isMap, isScalar, parseDocument, type Document } from "yaml";
import { badRequest, type ErrorDetail } from "../errors/app-error.js";

export interface AgentConfig {
  rate_limit: number | null; // requests per minute; null = no limit
  budget_limit_daily: number | null; // USD per UTC day; null = no budget
  pii_detection: boolean;
  policies: string[] | null; // null: the YAML has no policies key
}

/** The largest value the Sync protocol carries for rate_limit (uint32). */
export const MAX_RATE_LIMIT = 4_294_967_295;

export const DEFAULT_AGENT_CONFIG: Readonly<AgentConfig> = Object.freeze({ rate_limit: null, budget_limit_daily: null, pii_detection: true, policies: null });

const POLICY_ID = /^pol_[0-9A-Z]{26}$/;

/** The keys the service reads from configYaml. */
export const KNOWN_KEYS = ["rate_limit", "budget_limit_daily", "pii_detection", "policies"] as const;
export type KnownKey = (typeof KNOWN_KEYS)[number];

export interface ParseOptions {
  /**
   * Refuse top-level keys that look like a misspelling of a known key (`budget_limit_dayly`,
   * `Budget_Limit_Daily`, `ratelimit`), and a top-level YAML merge key `<<` carrying a known key: kept as
   * free-form keys, their setting would silently not apply. Only for new writes; stored YAML is read as is.
   */
  refuseNearMisses?: boolean;
}

/** Keys longer than this are not taken for a misspelling (the longest known key has 18 characters). */
const MAX_NEAR_MISS_KEY = 64;
/** Near misses named in one error; more are counted. */
const MAX_NEAR_MISSES_NAMED = 10;
/** Spellings a known key is compared with besides its own (squashed). */
const OTHER_SPELLINGS: Partial<Record<KnownKey, readonly string[]>> = { policies: ["policy"] };

/** Lower case without `_`, `-` or white space: `Budget-Limit-Daily` → `budgetlimitdaily`. */
const squash = (key: string): string => key.toLowerCase().replace(/[\s_-]+/g, "");
/** A key's words in alphabetical order, whatever the case style: `dailyBudgetLimit` → `budget daily limit`. */
const words = (key: string): string =>
  key.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase().split(/[\s_-]+/).filter(Boolean).sort().join(" ");

/**
 * Optimal string alignment distance between a and b (insertions, deletions, substitutions and swaps of
 * two adjacent characters), or max + 1 as soon as it is known to exceed max.
 */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2]! + 1);
      cur.push(d);
      rowMin = Math.min(rowMin, d);
    }
    if (rowMin > max) return max + 1;
    prev2 = prev;
    prev = cur;
  }
  return Math.min(prev[b.length]!, max + 1);
}

/**
 * The known key that `key` looks like a misspelling of, if any: not the key itself, but the same once
 * case, `_`, `-` and spaces are ignored, or within 2 edits of it (or of `policy`), or the same words in
 * another order (`daily_budget_limit`).
 */
export function nearMissOf(key: string): KnownKey | undefined {
  if ((KNOWN_KEYS as readonly string[]).includes(key) || key.length > MAX_NEAR_MISS_KEY) return undefined;
  const s = squash(key);
  const w = words(key);
  let best: { key: KnownKey; distance: number } | undefined;
  for (const known of KNOWN_KEYS) {
    if (words(known) === w) return known;
    for (const spelling of [squash(known), ...(OTHER_SPELLINGS[known] ?? [])]) {
      const distance = editDistance(s, spelling, 2);
      if (distance <= 2 && (!best || distance < best.distance)) best = { key: known, distance };
    }
  }
  return best?.key;
}

function firstLine(message: string): string {
  return message.split("\n")[0]!.trim();
}

function yamlError(line: number | undefined, message: string, col?: number): never {
  const where = line ? `line ${line}${col ? `, column ${col}` : ""}: ` : "";
  throw badRequest(`configYaml is not valid YAML (${where}${message})`, [{ path: "configYaml", message: `${where}${message}` }]);
}

function parseYaml(text: string): { doc: Document; root: unknown } {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    const pos = e.linePos?.[0];
    yamlError(pos?.line, firstLine(e.message).replace(/\s+at line \d+, column \d+:?$/, ""), pos?.col);
  }
  try {
    // maxAliasCount bounds alias expansion ("billion laughs").
    return { doc, root: doc.toJS({ maxAliasCount: 100 }) };
  } catch (e) {
    return yamlError(undefined, firstLine((e as Error).message));
  }
}

/**
 * Parses and validates configYaml; throws a 400 naming the key and line. Empty text = all defaults.
 * Writes pass `refuseNearMisses`; reads of stored YAML do not, so an agent stored before that rule still loads.
 */
export function parseAgentConfig(text: string, opts: ParseOptions = {}): AgentConfig {
  const { doc, root } = parseYaml(text);
  if (root === null || root === undefined) return { ...DEFAULT_AGENT_CONFIG };
  if (!isMap(doc.contents) || typeof root !== "object" || Array.isArray(root) || Buffer.isBuffer(root)) {
    throw badRequest("configYaml must be a YAML mapping of keys to values", [{ path: "configYaml", message: "must be a mapping of keys to values" }]);
  }
  const obj = root as Record<string, unknown>;
  const contents = doc.contents;
  const lineAt = (key: unknown): string => {
    const offset = isScalar(key) ? key.range?.[0] : undefined;
    return offset === undefined ? "" : ` (line ${text.slice(0, offset).split("\n").length})`;
  };
  const lineOf = (key: string): string => lineAt(contents.items.find((p) => isScalar(p.key) && p.key.value === key)?.key);
  const details: ErrorDetail[] = [];
  const bad = (key: string, what: string) => details.push({ path: `configYaml.${key}`, message: `${key} must be ${what}${lineOf(key)}` });
  const cfg: AgentConfig = { ...DEFAULT_AGENT_CONFIG };
  if ("rate_limit" in obj && obj.rate_limit !== null) {
    const v = obj.rate_limit;
    if (typeof v !== "number" || !Number.isInteger(v) || v <= 0 || v > MAX_RATE_LIMIT) bad("rate_limit", `a positive integer (requests per minute) no larger than ${MAX_RATE_LIMIT}`);
    else cfg.rate_limit = v;
  }
  if ("budget_limit_daily" in obj && obj.budget_limit_daily !== null) {
    const v = obj.budget_limit_daily;
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0) bad("budget_limit_daily", "a non-negative number (USD per UTC day)");
    else cfg.budget_limit_daily = v;
  }
  if ("pii_detection" in obj && obj.pii_detection !== null) {
    const v = obj.pii_detection;
    if (typeof v !== "boolean") bad("pii_detection", "true or false");
    else cfg.pii_detection = v;
  }
  if ("policies" in obj) {
    const v = obj.policies;
    if (v === null) cfg.policies = [];
    else if (!Array.isArray(v) || v.some((p) => typeof p !== "string")) bad("policies", "a list of policy ids");
    else {
      const malformed = (v as string[]).filter((p) => !POLICY_ID.test(p));
      if (malformed.length > 0) bad("policies", `a list of policy ids (pol_…); not policy ids: ${malformed.slice(0, 5).join(", ")}`);
      else cfg.policies = [...new Set(v as string[])];
    }
  }
  let nearMisses = 0;
  if (opts.refuseNearMisses) {
    const known = KNOWN_KEYS.join(", ");
    for (const pair of contents.items) {
      if (!isScalar(pair.key) || typeof pair.key.value !== "string") continue;
      const key = pair.key.value;
      if (key === "<<") {
        // YAML 1.2 has no merge keys: `<<: *defaults` is a plain key, and what it would merge is not read.
        const merged = [obj[key]].flat().filter((m): m is Record<string, unknown> => m !== null && typeof m === "object" && !Array.isArray(m));
        const meant = merged.flatMap((m) => Object.keys(m)).map((k) => ((KNOWN_KEYS as readonly string[]).includes(k) ? k : nearMissOf(k)));
        const carried = [...new Set(meant)].filter((k) => k !== undefined);
        if (carried.length > 0 && ++nearMisses <= MAX_NEAR_MISSES_NAMED) {
          details.push({
            path: "configYaml.<<",
            message: `merge key "<<"${lineAt(pair.key)} is not applied (configYaml is YAML 1.2, which has no merge keys): write ${carried.join(", ")} at the top level`,
          });
        }
        continue;
      }
      const meant = nearMissOf(key);
      if (meant !== undefined && ++nearMisses <= MAX_NEAR_MISSES_NAMED) {
        details.push({ path: `configYaml.${key}`, message: `unknown key ${JSON.stringify(key)}${lineAt(pair.key)}; did you mean ${meant}? (known keys: ${known})` });
      }
    }
  }
  if (details.length > 0) {
    const more = nearMisses > MAX_NEAR_MISSES_NAMED ? `; and ${nearMisses - MAX_NEAR_MISSES_NAMED} more keys that look like misspellings of known keys` : "";
    throw badRequest(`invalid configYaml: ${details.map((d) => d.message).join("; ")}${more}`, details);
  }
  return cfg;
}

/** Reads the config of stored YAML (already validated on write); falls back to the defaults if it no longer parses. */
export function storedAgentConfig(text: string): AgentConfig {
  try {
    return parseAgentConfig(text);
  } catch {
    return { ...DEFAULT_AGENT_CONFIG };
  }
}

function sameExceptPolicies(text: string, expected: Record<string, unknown>): boolean {
  try {
    const doc = parseDocument(text, { uniqueKeys: true });
    if (doc.errors.length > 0) return false;
    return isDeepStrictEqual(doc.toJS({ maxAliasCount: 100 }), expected);
  } catch {
    return false;
  }
}

/**
 * Returns configYaml with its `policies` key set to ids. Everything else is kept byte for byte where
 * possible (only the policies entry is replaced or appended); otherwise the document is re-serialized
 * with its comments and values kept.
 */
export function withPolicies(text: string, ids: readonly string[]): string {
  const { doc, root } = parseYaml(text);
  const base = root !== null && typeof root === "object" && !Array.isArray(root) ? (root as Record<string, unknown>) : {};
  const expected = { ...base, policies: [...ids] };
  const entry = `policies: [${ids.join(", ")}]`;
  const candidates: string[] = [];
  const contents = doc.contents;
  if (isMap(contents) && !contents.flow) {
    const pair = contents.items.find((p) => isScalar(p.key) && p.key.value === "policies");
    if (pair && isScalar(pair.key) && pair.key.range) {
      const start = pair.key.range[0];
      const valueRange = (pair.value as { range?: [number, number, number] } | null)?.range;
      let end = valueRange ? Math.max(valueRange[1], pair.key.range[1] + 1) : pair.key.range[1] + 1;
      while (end > pair.key.range[1] + 1 && /\s/.test(text[end - 1]!)) end--;
      const rest = text.slice(end);
      const sep = rest === "" || /^\s/.test(rest) ? "" : " ";
      candidates.push(text.slice(0, start) + entry + sep + rest);
    } else {
      candidates.push(`${text}${text === "" || text.endsWith("\n") ? "" : "\n"}${entry}\n`);
    }
  } else if (root === null || root === undefined) {
    candidates.push(`${text}${text === "" || text.endsWith("\n") ? "" : "\n"}${entry}\n`);
  }
  for (const c of candidates) if (sameExceptPolicies(c, expected)) return c;
  // Fallback: edit the document model (flow maps, odd layouts).
  if (!isMap(doc.contents)) doc.contents = doc.createNode({}) as typeof doc.contents;
  const seq = doc.createNode([...ids]);
  seq.flow = true;
  doc.set("policies", seq);
  return doc.toString({ flowCollectionPadding: false, lineWidth: 0 });
}
