// DESIGN.md §3 on every REST endpoint of both groups, table-driven from the served /openapi.json (so
// endpoints added later are covered without editing this file): each operation's `x-required-scope` ×
// key scope (api, agent, ingest) × the key creator's team scopes (tenant admin; member in no team;
// member with exactly the endpoint's scope; member with the write scope that implies a read; member
// with every other scope) must be permitted (any 2xx or 4xx but 403) or refused (403) as the rules say;
// no key, an invalid key and a deleted key are 401 everywhere.
import test from "ava";
import { startStack, type Stack } from "../harness/stack.js";
import { WEBHOOK_SECRET, keyFor, provisionUser } from "./identity-helpers.js";

const SCOPES = [
  "agents:read", "agents:write", "policies:read", "policies:write", "traces:read", "costs:read", "costs:write",
  "teams:read", "teams:write", "keys:read", "keys:write", "compliance:read", "audit:read",
] as const;
type Scope = (typeof SCOPES)[number];
const KEY_SCOPES = ["api", "agent", "ingest"] as const;
type KeyScope = (typeof KEY_SCOPES)[number];

/**
 * The spec's key-scope table, restated: api all; agent reads agents, traces (their stats included, whose
 * team scope is costs:read) and policies; ingest no REST.
 */
function keyScopeAllows(k: KeyScope, need: Scope): boolean {
  if (k === "api") return true;
  if (k === "ingest") return false;
  return need === "agents:read" || need === "traces:read" || need === "policies:read" || need === "costs:read";
}

const writeOf = (s: Scope): Scope | undefined => {
  const w = s.replace(/:read$/, ":write");
  return w !== s && (SCOPES as readonly string[]).includes(w) ? (w as Scope) : undefined;
};

interface Operation {
  method: string;
  path: string;
  scope: Scope;
  hasBody: boolean;
  group: "A" | "B";
}

interface OpenApiOperation {
  security?: unknown[];
  "x-required-scope"?: string;
  requestBody?: unknown;
}

let stack: Stack;
let operations: Operation[] = [];
const publicOps: string[] = [];
/** key scope → team set → required scope → key */
const keys = new Map<string, string>();
const keyIndex = (k: KeyScope, set: string, scope?: Scope) => `${k}|${set}|${scope ?? ""}`;
let deletedKey = "";

test.before(async () => {
  stack = await startStack({ IDP_WEBHOOK_SECRET: WEBHOOK_SECRET });
  const doc = (await (await fetch(`${stack.cp.restUrl}/openapi.json`)).json()) as { paths: Record<string, Record<string, OpenApiOperation>> };
  for (const [path, item] of Object.entries(doc.paths)) {
    if (!path.startsWith("/v1/") && !path.startsWith("/api/")) continue;
    for (const [method, op] of Object.entries(item)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
      if (Array.isArray(op.security) && op.security.length === 0) {
        publicOps.push(`${method.toUpperCase()} ${path}`);
        continue;
      }
      const scope = op["x-required-scope"];
      if (!scope || !(SCOPES as readonly string[]).includes(scope)) throw new Error(`${method.toUpperCase()} ${path}: no valid x-required-scope in the OpenAPI document (${String(scope)})`);
      operations.push({ method: method.toUpperCase(), path, scope: scope as Scope, hasBody: op.requestBody !== undefined, group: path.startsWith("/v1/") ? "A" : "B" });
    }
  }
  operations = operations.sort((a, b) => `${a.path} ${a.method}`.localeCompare(`${b.path} ${b.method}`));

  // The tenant admin (the bootstrap user) holds its keys through POST /api/keys without userId.
  for (const k of KEY_SCOPES) keys.set(keyIndex(k, "admin"), (await stack.api.post<{ data: { key: string } }>("/api/keys", { name: `admin ${k}`, scope: k })).body.data.key);
  const none = await provisionUser(stack, "idp_perm_none");
  for (const k of KEY_SCOPES) keys.set(keyIndex(k, "none"), (await keyFor(stack, none, k)).key);
  // One member per scope with exactly that scope, one with every scope except it (and its implying write).
  for (const s of SCOPES) {
    const others = SCOPES.filter((x) => x !== s && x !== writeOf(s));
    for (const [set, scopes] of [["exact", [s]], ["others", others]] as const) {
      const uid = await provisionUser(stack, `idp_perm_${set}_${s.replace(":", "_")}`);
      const team = await stack.api.post<{ data: { id: string } }>("/api/teams", { name: `${set} ${s}` });
      const put = await stack.api.call("PUT", `/api/teams/${team.body.data.id}/scopes`, { scopes });
      if (put.status !== 200) throw new Error(`PUT scopes: ${put.status}`);
      await stack.api.post(`/api/teams/${team.body.data.id}/members`, { userId: uid, role: "member" });
      for (const k of KEY_SCOPES) keys.set(keyIndex(k, set, s), (await keyFor(stack, uid, k)).key);
    }
  }
  const doomed = await stack.api.post<{ data: { id: string; key: string } }>("/api/keys", { name: "deleted", scope: "api" });
  deletedKey = doomed.body.data.key;
  await stack.api.call("DELETE", `/api/keys/${doomed.body.data.id}`);
});
test.after.always(async () => {
  await stack?.stop();
});

/** A concrete request for an operation: unknown ids in the path (→ 404 when permitted), `{}` as body. */
async function callOp(op: Operation, key: string | undefined) {
  const path = op.path.replace(/\{[^}]+\}/g, "zz_does_not_exist");
  return stack.api.withKey(key).call<unknown>(op.method, path, op.hasBody ? {} : undefined);
}

function verdict(status: number): "permitted" | "forbidden" | string {
  if (status === 403) return "forbidden";
  if ((status >= 200 && status < 300) || (status >= 400 && status < 500 && status !== 401)) return "permitted";
  return `unexpected ${status}`;
}

test("the document declares a required scope for every keyed operation; only the webhook is public", (t) => {
  t.true(operations.length >= 10, `only ${operations.length} operations found`);
  t.deepEqual(publicOps, ["POST /api/auth/webhook"]);
  for (const must of ["GET /api/keys", "POST /api/keys", "DELETE /api/keys/{id}", "GET /api/teams", "POST /api/teams", "GET /api/teams/{id}/members",
    "POST /api/teams/{id}/members", "DELETE /api/teams/{id}/members", "PUT /api/teams/{id}/scopes", "GET /api/users", "GET /api/audit", "GET /api/compliance/report"]) {
    const [m, p] = must.split(" ");
    t.truthy(operations.find((o) => o.method === m && o.path === p), must);
  }
});

for (const keyScope of KEY_SCOPES) {
  test(`key scope ${keyScope} × team scopes, on every endpoint`, async (t) => {
    let checked = 0;
    for (const op of operations) {
      const label = `${op.method} ${op.path} [needs ${op.scope}] key=${keyScope}`;
      const sets: [string, string, boolean][] = [
        ["tenant admin", keys.get(keyIndex(keyScope, "admin"))!, true],
        ["member in no team", keys.get(keyIndex(keyScope, "none"))!, false],
        ["member with exactly the scope", keys.get(keyIndex(keyScope, "exact", op.scope))!, true],
        ["member with every other scope", keys.get(keyIndex(keyScope, "others", op.scope))!, false],
      ];
      const w = writeOf(op.scope);
      if (w) sets.push(["member with the implying write scope", keys.get(keyIndex(keyScope, "exact", w))!, true]);
      for (const [set, key, teamAllows] of sets) {
        const expected = keyScopeAllows(keyScope, op.scope) && teamAllows ? "permitted" : "forbidden";
        const r = await callOp(op, key);
        t.is(verdict(r.status), expected, `${label} ${set}: got ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
        if (r.status === 403) {
          if (op.group === "A") t.is((r.body as { error: { code: string } }).error.code, "forbidden", label);
          else t.is(typeof (r.body as { error: unknown }).error, "string", label);
        }
        checked++;
      }
    }
    t.log(`${checked} requests over ${operations.length} operations`);
  });
}

test("no key, an invalid key and a deleted key are 401 on every endpoint, in each group's shape", async (t) => {
  for (const op of operations) {
    for (const [what, key] of [["no key", undefined], ["invalid key", `svc_api_${"x".repeat(40)}`], ["not a key", "hello"], ["deleted key", deletedKey]] as const) {
      const r = await callOp(op, key);
      t.is(r.status, 401, `${op.method} ${op.path}: ${what}`);
      if (op.group === "A") t.is((r.body as { error: { code: string } }).error.code, "unauthorized");
      else t.is(typeof (r.body as { error: unknown }).error, "string");
    }
  }
});
