// The identity webhook end to end: signature rules (valid, wrong secret, tampered body, missing or
// malformed header, stale and future timestamps, rotation), idempotency (replays, concurrent
// duplicates), every event type's effect — keys stopping and coming back at the control plane and at a
// running sidecar — out-of-order delivery (also of profile fields, field by field), unknown organizations
// and event types, and bad payloads. Users made before any event are claimed: identity-webhook-claim.test.ts.
import test from "ava";
import { createHmac } from "node:crypto";
import type { Sidecar } from "@agentgov/data-plane";
import { startStack, eventually, type Stack } from "../harness/stack.js";
import {
  WEBHOOK_SECRET, deliver, deliverSigned, eventBody, keyFor, nowSec, provisionUser, sendEvent, sidecarStatus, sign, usersByIdp,
} from "./identity-helpers.js";

const INVALID = '{"error":"Invalid webhook signature"}';

let stack: Stack;
let sidecar: Sidecar;
test.before(async () => {
  stack = await startStack({ IDP_WEBHOOK_SECRET: WEBHOOK_SECRET });
  sidecar = await stack.sidecar();
});
test.after.always(async () => {
  await stack?.stop();
});

async function rawPost(body: string, signature?: string): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (signature !== undefined) headers["x-idp-signature"] = signature;
  const r = await fetch(`${stack.cp.restUrl}/api/auth/webhook`, { method: "POST", headers, body });
  return { status: r.status, text: await r.text() };
}

async function userCount(): Promise<number> {
  return (await stack.api.get<{ total: number }>("/api/users?limit=1")).body.total;
}

const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

test.serial("a valid user.created provisions a member; the response is 200 {received: true}", async (t) => {
  const r = await sendEvent(stack, { type: "user.created", userId: "idp_valid", email: "valid@example.com", displayName: "Val Id" });
  t.is(r.status, 200);
  t.deepEqual(r.body, { received: true });
  const [u] = await usersByIdp(stack, "idp_valid");
  t.truthy(u);
  t.regex(u!.id, /^usr_[0-9A-Z]{26}$/);
  t.like(u, { email: "valid@example.com", displayName: "Val Id", role: "member", status: "active", idpUserId: "idp_valid" });
});

test.serial("wrong secret, tampered body, missing and malformed headers: 403 with exactly the spec's body, nothing written", async (t) => {
  const before = await userCount();
  const body = eventBody({ type: "user.created", userId: "idp_forged", email: "forged@example.com" });
  const ts = nowSec();
  const good = sign(WEBHOOK_SECRET, ts, body);
  const cases: [string, string, string | undefined][] = [
    ["wrong secret", body, `t=${ts},v1=${sign("whsec_wrong", ts, body)}`],
    ["tampered body", body.replace("forged@", "forgeD@"), `t=${ts},v1=${good}`],
    ["header missing", body, undefined],
    ["header empty", body, ""],
    ["no v1", body, `t=${ts}`],
    ["no t", body, `v1=${good}`],
    ["t not a number", body, `t=abc,v1=${good}`],
    ["uppercase hex", body, `t=${ts},v1=${good.toUpperCase()}`],
    ["truncated digest", body, `t=${ts},v1=${good.slice(0, 63)}`],
    ["v0 only", body, `t=${ts},v0=${good}`],
    ["spaces", body, `t=${ts}, v1=${good}`],
    ["garbage", body, "sha256=whatever"],
  ];
  for (const [name, b, sig] of cases) {
    const r = await rawPost(b, sig);
    t.is(r.status, 403, name);
    t.is(r.text, INVALID, name);
  }
  // Through the contract checker too: the 403 body is documented.
  t.is((await deliver(stack, body, undefined)).status, 403);
  t.is(await userCount(), before);
  t.deepEqual(await usersByIdp(stack, "idp_forged"), []);
});

test.serial("timestamps: 6 minutes old and 6 minutes ahead are rejected; 4 minutes either way accepted", async (t) => {
  const body = eventBody({ type: "user.created", userId: "idp_clock", email: "clock@example.com" });
  for (const skew of [-360, 360]) {
    const ts = nowSec() + skew;
    const r = await rawPost(body, `t=${ts},v1=${sign(WEBHOOK_SECRET, ts, body)}`);
    t.is(r.status, 403, `skew ${skew}`);
    t.is(r.text, INVALID);
  }
  t.deepEqual(await usersByIdp(stack, "idp_clock"), []);
  const early = await deliverSigned(stack, body, WEBHOOK_SECRET, nowSec() - 240);
  t.is(early.status, 200);
  const late = await deliverSigned(stack, eventBody({ type: "user.updated", userId: "idp_clock", displayName: "Clock" }), WEBHOOK_SECRET, nowSec() + 240);
  t.is(late.status, 200);
  t.is((await usersByIdp(stack, "idp_clock"))[0]?.displayName, "Clock");
});

test.serial("rotation: two v1 entries, only one made with the configured secret, in either order", async (t) => {
  const body = eventBody({ type: "user.created", userId: "idp_rotation", email: "rotation@example.com" });
  const ts = nowSec();
  const oldSig = sign("whsec_previous_secret", ts, body);
  const r1 = await deliver(stack, body, `t=${ts},v1=${oldSig},v1=${sign(WEBHOOK_SECRET, ts, body)}`);
  t.is(r1.status, 200);
  const body2 = eventBody({ type: "user.updated", userId: "idp_rotation", displayName: "Rotated" });
  const r2 = await deliver(stack, body2, `t=${ts},v1=${sign(WEBHOOK_SECRET, ts, body2)},v1=${oldSig}`);
  t.is(r2.status, 200);
  t.is((await usersByIdp(stack, "idp_rotation"))[0]?.displayName, "Rotated");
});

test.serial("the same user.created delivered twice, and ten times at the same moment, makes one user", async (t) => {
  const body = eventBody({ type: "user.created", userId: "idp_dup", email: "dup@example.com" });
  t.deepEqual((await deliverSigned(stack, body)).body, { received: true });
  // A retry carries a fresh, valid signature over the same bytes.
  const retry = await deliverSigned(stack, body, WEBHOOK_SECRET, nowSec() + 1);
  t.is(retry.status, 200);
  t.deepEqual(retry.body, { received: true, duplicate: true });
  t.is((await usersByIdp(stack, "idp_dup")).length, 1);

  const burst = eventBody({ type: "user.created", userId: "idp_burst", email: "burst@example.com" });
  const results = await Promise.all(Array.from({ length: 10 }, () => deliverSigned(stack, burst)));
  t.true(results.every((r) => r.status === 200));
  t.is(results.filter((r) => (r.body as { duplicate?: boolean }).duplicate !== true).length, 1);
  t.is((await usersByIdp(stack, "idp_burst")).length, 1);

  // Distinct deliveries of the same user's creation (different bytes) at the same moment: still one user.
  const variants = Array.from({ length: 8 }, (_, i) => eventBody({ type: "user.created", userId: "idp_burst2", email: "burst2@example.com", extra: { attempt: i } }));
  const rs = await Promise.all(variants.map((b) => deliverSigned(stack, b)));
  t.true(rs.every((r) => r.status === 200));
  t.is((await usersByIdp(stack, "idp_burst2")).length, 1);
});

test.serial("user.updated changes email and display name", async (t) => {
  const id = await provisionUser(stack, "idp_upd", "before@example.com");
  const r = await sendEvent(stack, { type: "user.updated", userId: "idp_upd", email: "after@example.com", displayName: "After" });
  t.deepEqual(r.body, { received: true });
  const [u] = await usersByIdp(stack, "idp_upd");
  t.like(u, { id, email: "after@example.com", displayName: "After", status: "active" });
});

test.serial("user.deactivated stops the user's keys at once at the control plane and at the sidecar; user.reactivated restores them", async (t) => {
  const userId = await provisionUser(stack, "idp_deact");
  const api = await keyFor(stack, userId, "api");
  const ingest = await keyFor(stack, userId, "ingest");
  const asUser = stack.api.withKey(api.key);
  t.is((await asUser.get("/api/keys")).status, 403, "a member without teams is authenticated but not permitted");
  await eventually(async () => (await sidecarStatus(sidecar.url, ingest.key)) === 404);

  t.deepEqual((await sendEvent(stack, { type: "user.deactivated", userId: "idp_deact" })).body, { received: true });
  t.is((await asUser.get("/api/keys")).status, 401, "the very next request is refused");
  t.is(await sidecarStatus(sidecar.url, ingest.key), 401, "and at the sidecar: the webhook answers once the sidecars have been sent it");
  t.is((await usersByIdp(stack, "idp_deact"))[0]?.status, "deactivated");
  t.is((await stack.api.post("/api/keys", { name: "for a suspended user", scope: "api", userId })).status, 409, "a key for a deactivated user could not work");

  t.deepEqual((await sendEvent(stack, { type: "user.reactivated", userId: "idp_deact" })).body, { received: true });
  t.is((await asUser.get("/api/keys")).status, 403);
  await eventually(async () => (await sidecarStatus(sidecar.url, ingest.key)) === 404);
  t.is((await usersByIdp(stack, "idp_deact"))[0]?.status, "active");
});

test.serial("user.deleted marks the user deleted, removes memberships, deletes keys everywhere; reactivation never restores", async (t) => {
  const userId = await provisionUser(stack, "idp_del");
  const team = await stack.api.post<{ data: { id: string } }>("/api/teams", { name: "deletion team" });
  t.is((await stack.api.post(`/api/teams/${team.body.data.id}/members`, { userId, role: "member" })).status, 201);
  const api = await keyFor(stack, userId, "api");
  const ingest = await keyFor(stack, userId, "ingest");
  await eventually(async () => (await sidecarStatus(sidecar.url, ingest.key)) === 404);

  t.deepEqual((await sendEvent(stack, { type: "user.deleted", userId: "idp_del" })).body, { received: true });
  t.is((await stack.api.withKey(api.key).get("/api/keys")).status, 401);
  await eventually(async () => (await sidecarStatus(sidecar.url, ingest.key)) === 401);
  t.is((await usersByIdp(stack, "idp_del"))[0]?.status, "deleted");
  const members = await stack.api.get<{ data: { userId: string }[]; total: number }>(`/api/teams/${team.body.data.id}/members`);
  t.is(members.body.total, 0);
  const keys = await stack.api.get<{ data: { id: string }[] }>("/api/keys?limit=500");
  t.false(keys.body.data.some((k) => k.id === api.id || k.id === ingest.id));

  const re = await sendEvent(stack, { type: "user.reactivated", userId: "idp_del" });
  t.is(re.status, 200);
  t.is((re.body as { ignored?: string }).ignored, "the user is deleted");
  t.is((await usersByIdp(stack, "idp_del"))[0]?.status, "deleted");
  t.is((await stack.api.withKey(api.key).get("/api/keys")).status, 401);
  t.is(await sidecarStatus(sidecar.url, ingest.key), 401);
  // A key cannot be issued to a deleted user.
  t.is((await stack.api.post("/api/keys", { name: "zombie", scope: "api", userId })).status, 404);
});

test.serial("session.terminated is audited", async (t) => {
  const userId = await provisionUser(stack, "idp_sess");
  const r = await sendEvent(stack, { type: "session.terminated", userId: "idp_sess", extra: { sessionId: "sess_1" } });
  t.deepEqual(r.body, { received: true });
  const audit = await stack.api.get<{ data: { action: string; targetId: string; actorUserId: string | null; details: Record<string, unknown> }[] }>(
    "/api/audit?action=identity.session.terminated",
  );
  const entry = audit.body.data.find((a) => a.targetId === userId);
  t.truthy(entry);
  t.is(entry?.actorUserId, null);
  t.is(entry?.details.idpUserId, "idp_sess");
});

test.serial("out of order: deleted before created leaves a tombstone; older updates and status changes never undo newer ones", async (t) => {
  const r1 = await sendEvent(stack, { type: "user.deleted", userId: "idp_tomb", createdAt: ago(1_000) });
  t.deepEqual(r1.body, { received: true });
  const late = await sendEvent(stack, { type: "user.created", userId: "idp_tomb", email: "tomb@example.com", createdAt: ago(60_000) });
  t.is(late.status, 200);
  const tomb = await usersByIdp(stack, "idp_tomb");
  t.is(tomb.length, 1);
  t.is(tomb[0]?.status, "deleted");

  await sendEvent(stack, { type: "user.created", userId: "idp_order", email: "v1@example.com", createdAt: ago(60_000) });
  await sendEvent(stack, { type: "user.updated", userId: "idp_order", email: "v3@example.com", displayName: "three", createdAt: ago(10_000) });
  const stale = await sendEvent(stack, { type: "user.updated", userId: "idp_order", email: "v2@example.com", displayName: "two", createdAt: ago(30_000) });
  t.is((stale.body as { ignored?: string }).ignored, "out of order: a newer event for this user was already applied");
  t.like((await usersByIdp(stack, "idp_order"))[0], { email: "v3@example.com", displayName: "three", status: "active" });

  await sendEvent(stack, { type: "user.deactivated", userId: "idp_order", createdAt: ago(5_000) });
  await sendEvent(stack, { type: "user.reactivated", userId: "idp_order", createdAt: ago(20_000) });
  t.is((await usersByIdp(stack, "idp_order"))[0]?.status, "deactivated");
  // A profile change older than the deactivation but newer than the profile still applies.
  await sendEvent(stack, { type: "user.updated", userId: "idp_order", displayName: "four", createdAt: ago(7_000) });
  t.like((await usersByIdp(stack, "idp_order"))[0], { displayName: "four", status: "deactivated" });

  // Deactivated before created: the late creation does not activate the user.
  await sendEvent(stack, { type: "user.deactivated", userId: "idp_early_deact", email: "ed@example.com", createdAt: ago(1_000) });
  await sendEvent(stack, { type: "user.created", userId: "idp_early_deact", email: "ed@example.com", createdAt: ago(9_000) });
  t.is((await usersByIdp(stack, "idp_early_deact"))[0]?.status, "deactivated");
});

test.serial("out of order: a user provisioned by an event without e-mail gets the e-mail and name of the older user.created", async (t) => {
  // A status event without profile fields first: the user exists, deactivated, with no e-mail yet.
  t.deepEqual((await sendEvent(stack, { type: "user.deactivated", userId: "idp_blind", createdAt: ago(1_000) })).body, { received: true });
  t.like((await usersByIdp(stack, "idp_blind"))[0], { email: "", displayName: null, status: "deactivated" });
  // The older creation fills what no newer event set, and does not undo the newer deactivation.
  const late = await sendEvent(stack, { type: "user.created", userId: "idp_blind", email: "blind@example.com", displayName: "Blind", createdAt: ago(60_000) });
  t.deepEqual(late.body, { received: true });
  t.like((await usersByIdp(stack, "idp_blind"))[0], { email: "blind@example.com", displayName: "Blind", status: "deactivated" });
  // The user can now be found by that e-mail.
  const team = await stack.api.post<{ data: { id: string } }>("/api/teams", { name: "blind team" });
  const added = await stack.api.post<{ userId: string; email: string }>(`/api/teams/${team.body.data.id}/members`, { email: "blind@example.com" });
  t.is(added.status, 201);
  t.is(added.body.email, "blind@example.com");
  // Still ordered: an update older than the one that set the e-mail is stale.
  const stale = await sendEvent(stack, { type: "user.updated", userId: "idp_blind", email: "older@example.com", createdAt: ago(90_000) });
  t.is((stale.body as { ignored?: string }).ignored, "out of order: a newer event for this user was already applied");
  t.is((await usersByIdp(stack, "idp_blind"))[0]?.email, "blind@example.com");

  // Field by field: a newer update that set only the display name keeps it; the older creation still brings the e-mail.
  await sendEvent(stack, { type: "user.updated", userId: "idp_half", displayName: "Newer name", createdAt: ago(1_000) });
  t.like((await usersByIdp(stack, "idp_half"))[0], { email: "", displayName: "Newer name", status: "active" });
  t.deepEqual((await sendEvent(stack, { type: "user.created", userId: "idp_half", email: "half@example.com", displayName: "Older name", createdAt: ago(60_000) })).body, { received: true });
  t.like((await usersByIdp(stack, "idp_half"))[0], { email: "half@example.com", displayName: "Newer name", status: "active" });
  // An older update of the display name alone is stale.
  const staleName = await sendEvent(stack, { type: "user.updated", userId: "idp_half", displayName: "Oldest name", createdAt: ago(30_000) });
  t.is((staleName.body as { ignored?: string }).ignored, "out of order: a newer event for this user was already applied");
  t.is((await usersByIdp(stack, "idp_half"))[0]?.displayName, "Newer name");
});

test.serial("out of order: a user provisioned by a later user.updated still takes an older deactivation delivered after it (review, session 16)", async (t) => {
  // The provider's order: created (T1), deactivated (T3), updated (T5); delivered: updated, created, deactivated.
  await sendEvent(stack, { type: "user.updated", userId: "idp_upd_first", displayName: "Later name", createdAt: ago(10_000) });
  await sendEvent(stack, { type: "user.created", userId: "idp_upd_first", email: "upd-first@example.com", createdAt: ago(50_000) });
  const deact = await sendEvent(stack, { type: "user.deactivated", userId: "idp_upd_first", createdAt: ago(30_000) });
  t.deepEqual(deact.body, { received: true }, "a status event is ordered against status events only");
  t.like((await usersByIdp(stack, "idp_upd_first"))[0], { status: "deactivated", displayName: "Later name", email: "upd-first@example.com" });
});

test.serial("an event dated more than 5 minutes ahead is refused and cannot keep a later deactivation from revoking access", async (t) => {
  const userId = await provisionUser(stack, "idp_future");
  const api = await keyFor(stack, userId, "api");
  const asUser = stack.api.withKey(api.key);
  for (const createdAt of ["2099-01-01T00:00:00Z", new Date(Date.now() + 6 * 60_000).toISOString()]) {
    const r = await sendEvent(stack, { type: "user.updated", userId: "idp_future", displayName: "From the future", createdAt });
    t.is(r.status, 400, createdAt);
    t.regex((r.body as { error: string }).error, /createdAt is more than 300 seconds in the future/);
  }
  t.is((await usersByIdp(stack, "idp_future"))[0]?.displayName, "idp_future", "nothing applied");
  t.deepEqual((await sendEvent(stack, { type: "user.updated", userId: "idp_future", displayName: "Skewed", createdAt: new Date(Date.now() + 4 * 60_000).toISOString() })).body, { received: true }, "4 minutes ahead (clock skew) is taken");
  t.deepEqual((await sendEvent(stack, { type: "user.deactivated", userId: "idp_future", createdAt: new Date(Date.now() + 5 * 60_000 - 10_000).toISOString() })).body, { received: true });
  t.is((await asUser.get("/api/keys")).status, 401);
  t.is((await usersByIdp(stack, "idp_future"))[0]?.status, "deactivated");
});

test.serial("a timestamp with leading zeros is signed over the header's text as sent", async (t) => {
  const body = eventBody({ type: "user.created", userId: "idp_zero_t", email: "zero@example.com" });
  const ts = nowSec();
  const text = `00${ts}`;
  const literal = createHmac("sha256", WEBHOOK_SECRET).update(`${text}.${body}`).digest("hex");
  // Signed over the number without its zeros: the header's text was altered, rejected.
  t.is((await rawPost(body, `t=${text},v1=${sign(WEBHOOK_SECRET, ts, body)}`)).status, 403);
  t.deepEqual(await usersByIdp(stack, "idp_zero_t"), []);
  const r = await rawPost(body, `t=${text},v1=${literal}`);
  t.is(r.status, 200);
  t.is((await usersByIdp(stack, "idp_zero_t")).length, 1);
  // The window is still judged on the value: six minutes old with leading zeros is rejected.
  const oldText = `0${ts - 360}`;
  const oldBody = eventBody({ type: "user.created", userId: "idp_zero_old", email: "zero-old@example.com" });
  const oldSig = createHmac("sha256", WEBHOOK_SECRET).update(`${oldText}.${oldBody}`).digest("hex");
  t.is((await rawPost(oldBody, `t=${oldText},v1=${oldSig}`)).status, 403);
});

test.serial("an unknown organization is acknowledged, ignored and audited", async (t) => {
  const before = await userCount();
  const r = await sendEvent(stack, { type: "user.created", userId: "idp_stranger", email: "s@example.com", orgId: "org_nobody" });
  t.is(r.status, 200);
  t.deepEqual(r.body, { received: true, ignored: "unknown organization" });
  t.is(await userCount(), before);
  const rows = await stack.cp.db.query<{ action: string; details: { idpUserId: string; reason: string } }>(
    "SELECT action, details FROM audit_log WHERE tenant_id IS NULL AND target_type = 'organization' AND target_id = 'org_nobody'",
  );
  t.is(rows.rows.length, 1);
  t.is(rows.rows[0]?.details.idpUserId, "idp_stranger");
  t.is(rows.rows[0]?.details.reason, "unknown organization");
});

test.serial("an event for an organization without a tenant yet applies when re-sent after the tenant exists (not taken for a duplicate)", async (t) => {
  const body = eventBody({ type: "user.created", userId: "idp_early_org", email: "early-org@example.com", orgId: "org_later" });
  const first = await deliverSigned(stack, body);
  t.deepEqual(first.body, { received: true, ignored: "unknown organization" });
  const { createTenant } = await import("../../control-plane/src/tenants/provision.js");
  const tenant = await createTenant(stack.cp.db, { name: "later org", idpOrgId: "org_later", adminEmail: "admin@later.example" });
  const again = await deliverSigned(stack, body);
  t.deepEqual(again.body, { received: true });
  const rows = await stack.cp.db.query<{ status: string }>("SELECT status FROM users WHERE tenant_id = $1 AND idp_user_id = 'idp_early_org'", [tenant.tenantId]);
  t.deepEqual(rows.rows, [{ status: "active" }]);
  t.deepEqual((await deliverSigned(stack, body)).body, { received: true, duplicate: true }, "once applied, a replay is a duplicate");
});

test.serial("an unknown event type is acknowledged and ignored", async (t) => {
  const r = await sendEvent(stack, { type: "organization.renamed", userId: "idp_x", extra: {} });
  t.is(r.status, 200);
  t.deepEqual(r.body, { received: true, ignored: "unknown event type" });
  const audit = await stack.api.get<{ data: { details: { eventType: string } }[] }>("/api/audit?action=identity.ignored");
  t.true(audit.body.data.some((a) => a.details.eventType === "organization.renamed"));
});

test.serial("a validly signed but invalid payload is a 400 in group B's shape and changes nothing; over 1 MiB is 413", async (t) => {
  const before = await userCount();
  for (const body of [
    "{not json",
    JSON.stringify({ type: "user.created", data: { userId: "idp_bad", orgId: "org_default", email: "b@example.com" } }),
    JSON.stringify({ type: "user.created", createdAt: "yesterday", data: { userId: "idp_bad", orgId: "org_default", email: "b@example.com" } }),
    JSON.stringify({ type: "user.created", createdAt: new Date().toISOString(), data: { orgId: "org_default", email: "b@example.com" } }),
    JSON.stringify({ type: "user.created", createdAt: new Date().toISOString(), data: { userId: "idp_bad", orgId: "org_default" } }),
    JSON.stringify({ type: "user.updated", createdAt: new Date().toISOString(), data: { userId: "idp_bad", orgId: "org_default", email: "not-an-email" } }),
    JSON.stringify({ type: "user.created", createdAt: new Date().toISOString(), data: { userId: 42, orgId: "org_default", email: "b@example.com" } }),
    JSON.stringify([1, 2, 3]),
  ]) {
    const r = await deliverSigned(stack, body);
    t.is(r.status, 400, body);
    t.is(typeof (r.body as { error: unknown }).error, "string");
  }
  t.is(await userCount(), before);
  const huge = eventBody({ type: "user.created", userId: "idp_huge", email: "h@example.com", extra: { pad: "x".repeat(1024 * 1024) } });
  t.is((await deliverSigned(stack, huge)).status, 413);
  t.deepEqual(await usersByIdp(stack, "idp_huge"), []);
});

test.serial("identity events land in the audit log, newest first, with the request id", async (t) => {
  await sendEvent(stack, { type: "user.created", userId: "idp_audit", email: "audit@example.com" });
  const r = await stack.api.get<{ data: { action: string; requestId: string | null; createdAt: string; details: Record<string, unknown> }[] }>("/api/audit?limit=500");
  t.is(r.status, 200);
  const created = r.body.data.find((a) => a.action === "identity.user.created" && a.details.idpUserId === "idp_audit");
  t.truthy(created);
  t.regex(created?.requestId ?? "", /\S/);
  const times = r.body.data.map((a) => Date.parse(a.createdAt));
  t.deepEqual(times, [...times].sort((a, b) => b - a));
});
