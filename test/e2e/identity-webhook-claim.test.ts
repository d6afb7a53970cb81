// Identity events for users made before any identity event (the bootstrap admin of
// BOOTSTRAP_ADMIN_EMAIL, the admin of `agentgov tenants create`): whatever the first event for such a
// person is — user.deactivated and user.deleted included — it claims that user by e-mail
// (case-insensitive) and applies to it, so an IdP suspension or deletion revokes the admin's keys at
// once, at the control plane and at a running sidecar, and no second user with the same e-mail appears.
import test from "ava";
import type { Sidecar } from "@agentgov/data-plane";
import { createTenant } from "@agentgov/control-plane";
import { startStack, eventually, type Stack } from "../harness/stack.js";
import { WEBHOOK_SECRET, keyFor, provisionUser, sendEvent, sidecarStatus } from "./identity-helpers.js";

// An address an identity provider can send (the default admin@localhost is not a valid data.email).
const BOOTSTRAP_EMAIL = "root@agentgov.example.com";

interface UserRow {
  id: string;
  email: string;
  role: string;
  status: string;
  idp_user_id: string | null;
}

let stack: Stack;
let sidecar: Sidecar;
test.before(async () => {
  stack = await startStack({ IDP_WEBHOOK_SECRET: WEBHOOK_SECRET, BOOTSTRAP_ADMIN_EMAIL: BOOTSTRAP_EMAIL });
  // The sidecar authenticates with a member's key, so that suspending the bootstrap admin (who made the
  // stack's own keys) leaves the sidecar's Sync stream alone and the test observes only the admin's keys.
  const member = await provisionUser(stack, "idp_sidecar_owner");
  sidecar = await stack.sidecar({ SIDECAR_KEY: (await keyFor(stack, member, "ingest", "sidecar key")).key });
});
test.after.always(async () => {
  await stack?.stop();
});

/** Every user of a tenant with this e-mail (any case, any status), read from the database. */
async function usersWithEmail(tenantId: string, email: string): Promise<UserRow[]> {
  const r = await stack.cp.db.query<UserRow>(
    "SELECT id, email, role, status, idp_user_id FROM users WHERE tenant_id = $1 AND lower(email) = lower($2) ORDER BY created_at, id",
    [tenantId, email],
  );
  return r.rows;
}

test.serial("user.deactivated as the first event for the bootstrap admin suspends that admin: its keys get 401 at once, at the sidecar too", async (t) => {
  const [admin] = await usersWithEmail(stack.cp.tenantId, BOOTSTRAP_EMAIL);
  t.like(admin, { role: "admin", status: "active", idp_user_id: null });
  const adminIngest = await stack.api.post<{ data: { key: string } }>("/api/keys", { name: "admin ingest", scope: "ingest" });
  t.is(adminIngest.status, 201);
  await eventually(async () => (await sidecarStatus(sidecar.url, adminIngest.body.data.key)) === 404);
  t.is((await stack.api.get("/api/users")).status, 200);

  // The provider spells the address differently; the match is case-insensitive.
  const r = await sendEvent(stack, { type: "user.deactivated", userId: "idp_bootstrap_admin", email: "Root@AgentGov.EXAMPLE.com" });
  t.is(r.status, 200);
  t.deepEqual(r.body, { received: true });

  t.is((await stack.api.get("/api/users")).status, 401, "the admin's api key is refused on the very next request");
  t.is(await sidecarStatus(sidecar.url, adminIngest.body.data.key), 401, "and at the sidecar, at once");
  const rows = await usersWithEmail(stack.cp.tenantId, BOOTSTRAP_EMAIL);
  t.is(rows.length, 1, "no second user with the admin's e-mail");
  t.like(rows[0], { id: admin!.id, role: "admin", status: "deactivated", idp_user_id: "idp_bootstrap_admin" });
  const audit = await stack.cp.db.query<{ target_id: string; details: { outcome: string; linked?: boolean; status?: unknown } }>(
    "SELECT target_id, details FROM audit_log WHERE tenant_id = $1 AND action = 'identity.user.deactivated' AND details->>'idpUserId' = 'idp_bootstrap_admin'",
    [stack.cp.tenantId],
  );
  t.is(audit.rows.length, 1);
  t.like(audit.rows[0], { target_id: admin!.id, details: { outcome: "applied", linked: true, status: { from: "active", to: "deactivated" } } });

  // Later events for that provider user reach the same user: reactivation restores the admin's keys.
  t.deepEqual((await sendEvent(stack, { type: "user.reactivated", userId: "idp_bootstrap_admin" })).body, { received: true });
  t.is((await stack.api.get("/api/users")).status, 200);
  await eventually(async () => (await sidecarStatus(sidecar.url, adminIngest.body.data.key)) === 404);
  t.like((await usersWithEmail(stack.cp.tenantId, BOOTSTRAP_EMAIL))[0], { id: admin!.id, status: "active", idp_user_id: "idp_bootstrap_admin" });
});

test.serial("user.deleted as the first event for a CLI-made tenant admin deletes that admin and its keys; nothing is left working", async (t) => {
  const made = await createTenant(stack.cp.db, { name: "Claim tenant", idpOrgId: "org_claim", adminEmail: "owner@claim.example.com" });
  const asOwner = stack.api.withKey(made.apiKey);
  t.is((await asOwner.get("/api/users")).status, 200);
  const ownerIngest = await asOwner.post<{ data: { key: string } }>("/api/keys", { name: "owner ingest", scope: "ingest" });
  t.is(ownerIngest.status, 201);
  // A sidecar of that tenant, running on a member's key.
  await sendEvent(stack, { type: "user.created", userId: "idp_claim_member", email: "member@claim.example.com", orgId: "org_claim" });
  const member = (await usersWithEmail(made.tenantId, "member@claim.example.com"))[0]!;
  const memberKey = await asOwner.post<{ data: { key: string } }>("/api/keys", { name: "sidecar", scope: "ingest", userId: member.id });
  t.is(memberKey.status, 201);
  const sc = await stack.sidecar({ SIDECAR_KEY: memberKey.body.data.key });
  await eventually(async () => (await sidecarStatus(sc.url, ownerIngest.body.data.key)) === 404);

  const r = await sendEvent(stack, { type: "user.deleted", userId: "idp_claim_owner", email: "owner@claim.example.com", orgId: "org_claim" });
  t.deepEqual(r.body, { received: true });
  t.is((await asOwner.get("/api/users")).status, 401);
  t.is(await sidecarStatus(sc.url, ownerIngest.body.data.key), 401, "and at the sidecar, at once");
  const rows = await usersWithEmail(made.tenantId, "owner@claim.example.com");
  t.is(rows.length, 1, "no tombstone beside the live admin");
  t.like(rows[0], { id: made.adminUserId, status: "deleted", idp_user_id: "idp_claim_owner" });
  const live = await stack.cp.db.query<{ n: number }>("SELECT count(*)::int AS n FROM api_keys WHERE created_by = $1 AND deleted_at IS NULL", [made.adminUserId]);
  t.is(live.rows[0]?.n, 0, "the admin's keys are deleted");
  // Deleted is terminal: a later reactivation for that provider user changes nothing.
  const re = await sendEvent(stack, { type: "user.reactivated", userId: "idp_claim_owner", orgId: "org_claim" });
  t.is((re.body as { ignored?: string }).ignored, "the user is deleted");
  t.is((await asOwner.get("/api/users")).status, 401);
});

test.serial("an event without an e-mail, or with another user's e-mail, claims no one; a linked user is never claimed again", async (t) => {
  const made = await createTenant(stack.cp.db, { name: "No claim tenant", idpOrgId: "org_noclaim", adminEmail: "boss@noclaim.example.com" });
  const asBoss = stack.api.withKey(made.apiKey);
  // No e-mail: nothing to match on, the event provisions the provider's user on its own.
  await sendEvent(stack, { type: "user.deactivated", userId: "idp_noclaim_1", orgId: "org_noclaim" });
  // Another e-mail: no match.
  await sendEvent(stack, { type: "user.deleted", userId: "idp_noclaim_2", email: "someone@noclaim.example.com", orgId: "org_noclaim" });
  t.is((await asBoss.get("/api/users")).status, 200);
  t.like((await usersWithEmail(made.tenantId, "boss@noclaim.example.com"))[0], { id: made.adminUserId, status: "active", idp_user_id: null });

  // Claimed once by one provider user, the admin is not taken over by another provider user with the same e-mail.
  await sendEvent(stack, { type: "user.updated", userId: "idp_noclaim_boss", email: "boss@noclaim.example.com", orgId: "org_noclaim" });
  await sendEvent(stack, { type: "user.deactivated", userId: "idp_noclaim_other", email: "boss@noclaim.example.com", orgId: "org_noclaim" });
  t.is((await asBoss.get("/api/users")).status, 200);
  const rows = await usersWithEmail(made.tenantId, "boss@noclaim.example.com");
  t.like(rows.find((u) => u.id === made.adminUserId), { status: "active", idp_user_id: "idp_noclaim_boss" });
  t.like(rows.find((u) => u.id !== made.adminUserId), { status: "deactivated", idp_user_id: "idp_noclaim_other" });
});

// Last in this file: it deletes the bootstrap admin, whose keys the stack's own client uses.
test.serial("a deleted bootstrap admin is not made again at the next start, and the next provider user with its e-mail is a member, not an admin (review, session 16)", async (t) => {
  const { ensureBootstrap } = await import("../../control-plane/src/tenants/provision.js");
  t.deepEqual((await sendEvent(stack, { type: "user.deleted", userId: "idp_bootstrap_admin" })).body, { received: true });
  t.like((await usersWithEmail(stack.cp.tenantId, BOOTSTRAP_EMAIL))[0], { role: "admin", status: "deleted" });
  // What a restart with the same configuration runs.
  const again = await ensureBootstrap(stack.cp.db, { tenantName: "default", idpOrgId: "org_default", adminEmail: BOOTSTRAP_EMAIL });
  t.is(again.tenantId, stack.cp.tenantId);
  const rows = await usersWithEmail(stack.cp.tenantId, BOOTSTRAP_EMAIL);
  t.is(rows.length, 1, "no new admin with the deleted admin's e-mail");
  t.is(again.apiKey, undefined, "and no new key");
  t.deepEqual((await sendEvent(stack, { type: "user.created", userId: "idp_newcomer", email: BOOTSTRAP_EMAIL })).body, { received: true });
  const after = await usersWithEmail(stack.cp.tenantId, BOOTSTRAP_EMAIL);
  t.is(after.length, 2);
  t.like(after[1], { role: "member", status: "active", idp_user_id: "idp_newcomer" });
});
