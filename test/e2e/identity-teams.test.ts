// Teams, members, scopes and users end to end: the spec's bodies and statuses, effective scopes taking
// effect on the member's next request, no escalation through teams, the users list, the audit trail of
// every write, and bad input on every team write endpoint.
import test from "ava";
import { startStack, type Stack } from "../harness/stack.js";
import { WEBHOOK_SECRET, keyFor, provisionUser, sendEvent } from "./identity-helpers.js";

interface Team {
  id: string;
  name: string;
  description: string | null;
  memberCount: number;
  scopes: string[];
  createdAt: string;
}
interface Member {
  userId: string;
  email: string;
  role: string;
  joinedAt: string;
}

const ALL_SCOPES = [
  "agents:read", "agents:write", "policies:read", "policies:write", "traces:read", "costs:read", "costs:write",
  "teams:read", "teams:write", "keys:read", "keys:write", "compliance:read", "audit:read",
];

let stack: Stack;
test.before(async () => {
  stack = await startStack({ IDP_WEBHOOK_SECRET: WEBHOOK_SECRET });
});
test.after.always(async () => {
  await stack?.stop();
});

async function createTeam(name: string, description?: string): Promise<Team> {
  const r = await stack.api.post<{ data: Team }>("/api/teams", description === undefined ? { name } : { name, description });
  if (r.status !== 201) throw new Error(`POST /api/teams: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data;
}

test.serial("POST /api/teams answers 201 {data: Team} with memberCount 0 and no scopes; GET lists newest first with offset pagination", async (t) => {
  const a = await createTeam("Platform", "runs the platform");
  t.regex(a.id, /^team_[0-9A-Z]{26}$/);
  t.like(a, { name: "Platform", description: "runs the platform", memberCount: 0, scopes: [] });
  const b = await createTeam("Research");
  t.is(b.description, null);
  t.is((await stack.api.post("/api/teams", { name: "platform" })).status, 409, "names are unique per tenant, case-insensitively");
  const list = await stack.api.get<{ data: Team[]; total: number; limit: number; offset: number }>("/api/teams");
  t.is(list.status, 200);
  t.is(list.body.limit, 50);
  t.is(list.body.offset, 0);
  t.deepEqual(list.body.data.slice(0, 2).map((x) => x.id), [b.id, a.id]);
  const page = await stack.api.get<{ data: Team[]; total: number }>("/api/teams?limit=1&offset=1");
  t.is(page.body.data[0]?.id, list.body.data[1]?.id);
  t.is(page.body.total, list.body.total);
  for (const q of ["limit=0", "limit=501", "offset=x"]) t.is((await stack.api.get(`/api/teams?${q}`)).status, 400, q);
});

test.serial("members: add by userId or by email (201, unwrapped), list, remove ({success: true}); memberCount follows", async (t) => {
  const team = await createTeam("Members team");
  const u1 = await provisionUser(stack, "idp_m1", "m1@example.com");
  await provisionUser(stack, "idp_m2", "M2@Example.com");
  const byId = await stack.api.post<Member>(`/api/teams/${team.id}/members`, { userId: u1, role: "admin" });
  t.is(byId.status, 201);
  t.like(byId.body, { userId: u1, email: "m1@example.com", role: "admin" });
  t.truthy(Date.parse(byId.body.joinedAt));
  const byEmail = await stack.api.post<Member>(`/api/teams/${team.id}/members`, { email: "m2@example.com" });
  t.is(byEmail.status, 201);
  t.is(byEmail.body.role, "member", "role defaults to member");
  t.is((await stack.api.post(`/api/teams/${team.id}/members`, { userId: u1, role: "member" })).status, 409, "already a member");
  const members = await stack.api.get<{ data: Member[]; total: number }>(`/api/teams/${team.id}/members`);
  t.is(members.status, 200);
  t.is(members.body.total, 2);
  t.deepEqual(members.body.data.map((m) => m.userId).sort(), [u1, byEmail.body.userId].sort());
  const listed = (await stack.api.get<{ data: Team[] }>("/api/teams?limit=500")).body.data.find((x) => x.id === team.id);
  t.is(listed?.memberCount, 2);

  const del = await stack.api.call("DELETE", `/api/teams/${team.id}/members`, { userId: u1 });
  t.is(del.status, 200);
  t.deepEqual(del.body, { success: true });
  t.is((await stack.api.call("DELETE", `/api/teams/${team.id}/members`, { userId: u1 })).status, 404, "no longer a member");
  t.is((await stack.api.get<{ total: number }>(`/api/teams/${team.id}/members`)).body.total, 1);

  t.is((await stack.api.post(`/api/teams/${team.id}/members`, { userId: "usr_01ZZZZZZZZZZZZZZZZZZZZZZZZ" })).status, 404);
  t.is((await stack.api.post(`/api/teams/${team.id}/members`, { email: "nobody@example.com" })).status, 404);
  t.is((await stack.api.post(`/api/teams/${team.id}/members`, { email: "not-an-email" })).status, 404, "any text is a lookup key; nobody has this one");
  t.is((await stack.api.post("/api/teams/team_01ZZZZZZZZZZZZZZZZZZZZZZZZ/members", { userId: u1 })).status, 404);
  t.is((await stack.api.get("/api/teams/team_01ZZZZZZZZZZZZZZZZZZZZZZZZ/members")).status, 404);
});

test.serial("members by e-mail: any stored address is a lookup key, such as the bootstrap admin's admin@localhost, in any case", async (t) => {
  const users = await stack.api.get<{ data: { id: string; email: string }[] }>("/api/users?limit=500");
  const admin = users.body.data.find((u) => u.email === "admin@localhost");
  t.truthy(admin, "the bootstrap admin has the default address");
  const team = await createTeam("Admins by e-mail");
  const added = await stack.api.post<Member>(`/api/teams/${team.id}/members`, { email: "ADMIN@localhost" });
  t.is(added.status, 201);
  t.like(added.body, { userId: admin!.id, email: "admin@localhost" });
  const removed = await stack.api.call("DELETE", `/api/teams/${team.id}/members`, { email: "admin@LOCALHOST" });
  t.is(removed.status, 200);
  t.deepEqual(removed.body, { success: true });
  t.is((await stack.api.call("DELETE", `/api/teams/${team.id}/members`, { email: "admin@localhost" })).status, 404, "no longer a member");
  t.is((await stack.api.call("DELETE", `/api/teams/${team.id}/members`, { email: "nobody@localhost" })).status, 404, "nobody has it");
});

test.serial("members by e-mail when two users share it: adding takes the active one, removing takes the team's member with it", async (t) => {
  const older = await provisionUser(stack, "idp_shared_old", "shared@example.com");
  await sendEvent(stack, { type: "user.deactivated", userId: "idp_shared_old" });
  const newer = await provisionUser(stack, "idp_shared_new", "shared@example.com");
  const team = await stack.api.post<{ data: { id: string } }>("/api/teams", { name: "shared address team" });
  const added = await stack.api.post<{ userId: string }>(`/api/teams/${team.body.data.id}/members`, { email: "shared@example.com" });
  t.is(added.status, 201);
  t.is(added.body.userId, newer, "the active user, not the older deactivated one");
  const removed = await stack.api.call("DELETE", `/api/teams/${team.body.data.id}/members`, { email: "SHARED@example.com" });
  t.is(removed.status, 200, "the member with that address is removed");
  // The deactivated one, added by id, is removed by the same address too.
  t.is((await stack.api.post(`/api/teams/${team.body.data.id}/members`, { userId: older })).status, 201);
  t.is((await stack.api.call("DELETE", `/api/teams/${team.body.data.id}/members`, { email: "shared@example.com" })).status, 200);
  t.is((await stack.api.call("DELETE", `/api/teams/${team.body.data.id}/members`, { email: "shared@example.com" })).status, 404, "no member with it left");
});

test.serial("PUT /api/teams/:id/scopes replaces the list (only the 13 scopes) and answers {data: Team}; members get them on their next request", async (t) => {
  const team = await createTeam("Scoped");
  const uid = await provisionUser(stack, "idp_scoped");
  const key = (await keyFor(stack, uid, "api")).key;
  const member = stack.api.withKey(key);
  await stack.api.post(`/api/teams/${team.id}/members`, { userId: uid });
  t.is((await member.get("/v1/agents")).status, 403, "no scopes yet");

  const r = await stack.api.call<{ data: Team }>("PUT", `/api/teams/${team.id}/scopes`, { scopes: ["agents:write", "audit:read", "agents:write"] });
  t.is(r.status, 200);
  t.deepEqual(r.body.data.scopes, ["agents:write", "audit:read"]);
  t.is(r.body.data.memberCount, 1);
  t.is((await member.get("/v1/agents")).status, 200, "agents:write implies agents:read");
  t.is((await member.post("/api/agents", { name: "member-made" })).status, 201);
  t.is((await member.get("/api/audit")).status, 200);
  t.is((await member.get("/v1/policies")).status, 403);

  const replaced = await stack.api.call<{ data: Team }>("PUT", `/api/teams/${team.id}/scopes`, { scopes: ["policies:read"] });
  t.deepEqual(replaced.body.data.scopes, ["policies:read"]);
  t.is((await member.get("/v1/agents")).status, 403, "the old scopes are gone on the next request");
  t.is((await member.get("/v1/policies")).status, 200);

  const all = await stack.api.call<{ data: Team }>("PUT", `/api/teams/${team.id}/scopes`, { scopes: ALL_SCOPES });
  t.deepEqual([...all.body.data.scopes].sort(), [...ALL_SCOPES].sort());
  const none = await stack.api.call<{ data: Team }>("PUT", `/api/teams/${team.id}/scopes`, { scopes: [] });
  t.deepEqual(none.body.data.scopes, []);
  t.is((await stack.api.call("PUT", "/api/teams/team_01ZZZZZZZZZZZZZZZZZZZZZZZZ/scopes", { scopes: [] })).status, 404);
});

test.serial("removing a member takes its team scopes away on its next request; a member's scopes are the union of its teams", async (t) => {
  const a = await createTeam("Union A");
  const b = await createTeam("Union B");
  await stack.api.call("PUT", `/api/teams/${a.id}/scopes`, { scopes: ["traces:read"] });
  await stack.api.call("PUT", `/api/teams/${b.id}/scopes`, { scopes: ["keys:read"] });
  const uid = await provisionUser(stack, "idp_union");
  const member = stack.api.withKey((await keyFor(stack, uid, "api")).key);
  await stack.api.post(`/api/teams/${a.id}/members`, { userId: uid });
  await stack.api.post(`/api/teams/${b.id}/members`, { userId: uid });
  t.is((await member.get("/v1/traces")).status, 200);
  t.is((await member.get("/api/keys")).status, 200);
  await stack.api.call("DELETE", `/api/teams/${a.id}/members`, { userId: uid });
  t.is((await member.get("/v1/traces")).status, 403);
  t.is((await member.get("/api/keys")).status, 200);
});

test.serial("no escalation through teams: a member with teams:write may only grant scopes it holds and only join teams whose scopes it holds", async (t) => {
  const own = await createTeam("Team managers");
  await stack.api.call("PUT", `/api/teams/${own.id}/scopes`, { scopes: ["teams:write", "traces:read"] });
  const uid = await provisionUser(stack, "idp_manager");
  await stack.api.post(`/api/teams/${own.id}/members`, { userId: uid });
  const manager = stack.api.withKey((await keyFor(stack, uid, "api")).key);

  const t2 = await manager.post<{ data: Team }>("/api/teams", { name: "Managed" });
  t.is(t2.status, 201);
  t.is((await manager.call("PUT", `/api/teams/${t2.body.data.id}/scopes`, { scopes: ["traces:read", "teams:read"] })).status, 200);
  t.is((await manager.call("PUT", `/api/teams/${t2.body.data.id}/scopes`, { scopes: ["audit:read"] })).status, 403);
  const admins = await createTeam("Auditors");
  await stack.api.call("PUT", `/api/teams/${admins.id}/scopes`, { scopes: ["audit:read"] });
  t.is((await manager.post(`/api/teams/${admins.id}/members`, { userId: uid })).status, 403);
  t.is((await manager.post(`/api/teams/${t2.body.data.id}/members`, { userId: uid })).status, 201);
  t.is((await manager.get("/api/audit")).status, 403);
});

test.serial("GET /api/users: the user record, newest first, offset pagination, limit default 50 max 500, status filter", async (t) => {
  await provisionUser(stack, "idp_list_1", "l1@example.com");
  await provisionUser(stack, "idp_list_2", "l2@example.com");
  const r = await stack.api.get<{ data: Record<string, unknown>[]; total: number; limit: number; offset: number }>("/api/users");
  t.is(r.status, 200);
  t.is(r.body.limit, 50);
  t.deepEqual(Object.keys(r.body.data[0]!).sort(), ["createdAt", "displayName", "email", "id", "idpUserId", "role", "status", "updatedAt"]);
  const ids = r.body.data.map((u) => u.idpUserId);
  t.true(ids.indexOf("idp_list_2") < ids.indexOf("idp_list_1"));
  const admin = r.body.data.find((u) => u.role === "admin");
  t.like(admin, { email: "admin@localhost", status: "active", idpUserId: null });
  const page = await stack.api.get<{ data: { id: string }[] }>("/api/users?limit=1&offset=1");
  t.is(page.body.data[0]?.id, r.body.data[1]?.id as string | undefined);
  t.is((await stack.api.get("/api/users?limit=500")).status, 200);
  for (const q of ["limit=501", "limit=0", "status=gone"]) t.is((await stack.api.get(`/api/users?${q}`)).status, 400, q);
  const active = await stack.api.get<{ data: { status: string }[] }>("/api/users?status=active&limit=500");
  t.true(active.body.data.every((u) => u.status === "active"));
});

test.serial("every team write is audited with actor, target and request id", async (t) => {
  const team = await createTeam("Audited");
  const uid = await provisionUser(stack, "idp_audited");
  await stack.api.post(`/api/teams/${team.id}/members`, { userId: uid }, );
  await stack.api.call("PUT", `/api/teams/${team.id}/scopes`, { scopes: ["agents:read"] });
  await stack.api.call("DELETE", `/api/teams/${team.id}/members`, { userId: uid }, { "x-request-id": "req-audit-me" });
  const r = await stack.api.get<{ data: { action: string; actorUserId: string; actorKeyId: string; requestId: string; targetType: string }[] }>(
    `/api/audit?targetId=${team.id}`,
  );
  t.deepEqual(r.body.data.map((a) => a.action), ["team.member.remove", "team.scopes.set", "team.member.add", "team.create"]);
  t.true(r.body.data.every((a) => a.targetType === "team" && a.actorKeyId.startsWith("key_") && a.actorUserId.startsWith("usr_")));
  t.is(r.body.data[0]?.requestId, "req-audit-me");
});

test.serial("bad input on every team write endpoint: 400/413 in group B's shape, nothing written", async (t) => {
  const team = await createTeam("Validation");
  const uid = await provisionUser(stack, "idp_validation");
  const teamsBefore = (await stack.api.get<{ total: number }>("/api/teams?limit=1")).body.total;
  const cases: [string, string, unknown][] = [
    ["POST", "/api/teams", {}],
    ["POST", "/api/teams", { name: "" }],
    ["POST", "/api/teams", { name: "   " }],
    ["POST", "/api/teams", { name: "x".repeat(201) }],
    ["POST", "/api/teams", { name: 5 }],
    ["POST", "/api/teams", { name: "ok", description: 5 }],
    ["POST", "/api/teams", { name: "ok", extra: true }],
    ["POST", `/api/teams/${team.id}/members`, {}],
    ["POST", `/api/teams/${team.id}/members`, { userId: uid, email: "both@example.com" }],
    ["POST", `/api/teams/${team.id}/members`, { userId: uid, role: "owner" }],
    ["POST", `/api/teams/${team.id}/members`, { email: "" }],
    ["POST", `/api/teams/${team.id}/members`, { email: `${"x".repeat(310)}@example.com` }],
    ["DELETE", `/api/teams/${team.id}/members`, { email: "" }],
    ["POST", `/api/teams/${team.id}/members`, { userId: uid, extra: 1 }],
    ["DELETE", `/api/teams/${team.id}/members`, {}],
    ["DELETE", `/api/teams/${team.id}/members`, { userId: 5 }],
    ["PUT", `/api/teams/${team.id}/scopes`, {}],
    ["PUT", `/api/teams/${team.id}/scopes`, { scopes: ["agents:admin"] }],
    ["PUT", `/api/teams/${team.id}/scopes`, { scopes: "agents:read" }],
    ["PUT", `/api/teams/${team.id}/scopes`, { scopes: ["agents:read"], extra: 1 }],
  ];
  for (const [method, path, body] of cases) {
    const r = await stack.api.call<{ error: string; details?: unknown[] }>(method, path, body);
    t.is(r.status, 400, `${method} ${path} ${JSON.stringify(body)}`);
    t.is(typeof r.body.error, "string");
    t.true(Array.isArray(r.body.details));
  }
  for (const [method, path] of [["POST", "/api/teams"], ["POST", `/api/teams/${team.id}/members`], ["DELETE", `/api/teams/${team.id}/members`], ["PUT", `/api/teams/${team.id}/scopes`]] as const) {
    t.is((await stack.api.call(method, path, "{nope", { "content-type": "application/json" })).status, 400, `${method} ${path} non-JSON`);
    t.is((await stack.api.call(method, path, "")).status, 400, `${method} ${path} empty`);
    t.is((await stack.api.call(method, path, JSON.stringify({ name: "x".repeat(1024 * 1024 + 1) }))).status, 413, `${method} ${path} huge`);
  }
  t.is((await stack.api.get<{ total: number }>("/api/teams?limit=1")).body.total, teamsBefore);
  const after = (await stack.api.get<{ data: Team[] }>("/api/teams?limit=500")).body.data.find((x) => x.id === team.id);
  t.like(after, { memberCount: 0, scopes: [] });
});
