// Applies one verified identity event in one transaction: remember the delivery (replays are no-ops,
// also when two copies arrive at the same moment), map the organization to a tenant, serialize on the
// user, find it (by provider user id; failing that, any event carrying an e-mail claims a user made
// before any identity event with that e-mail), decide with planEvent, write the user, its memberships and
// keys, audit, and tell the sidecars (recordChange kind 'user' makes the Sync delta drop or restore that
// user's keys).
import { createHash } from "node:crypto";
import type { Db } from "../stores/postgres/db.js";
import { newId } from "../domain/ids.js";
import { appendAudit } from "../stores/postgres/audit-repo.js";
import { findTenantByOrg } from "../stores/postgres/identity-repo.js";
import { recordChange } from "../stores/postgres/sync-changes.js";
import { deleteKeysOfUser } from "../stores/postgres/keys-repo.js";
import { deleteMembershipsOfUser } from "../stores/postgres/teams-repo.js";
import {
  findUnlinkedUserByEmailForUpdate, getUserByIdpForUpdate, insertIdpUser, linkIdpUser, setStatus, updateProfile, type UserRow,
} from "../stores/postgres/users-repo.js";
import { claimDelivery, pruneDeliveries, setDeliveryOutcome, releaseDelivery } from "../stores/postgres/webhook-repo.js";
import { isKnownEventType, planEvent, type IdentityEventInput } from "./events.js";

export interface WebhookAck {
  received: true;
  ignored?: string;
  duplicate?: true;
}

/** Deliveries are recognised by the event's own id when the provider sends one, else by the body's hash. */
export function deliveryKey(rawBody: Buffer, eventId: unknown): string {
  if (typeof eventId === "string" && eventId.length > 0 && eventId.length <= 200) return `id:${eventId}`;
  return `sha256:${createHash("sha256").update(rawBody).digest("hex")}`;
}

const IGNORED = {
  stale: "out of order: a newer event for this user was already applied",
  user_deleted: "the user is deleted",
  unknown_user: "unknown user",
} as const;

let pruneCounter = 0;

export async function applyIdentityEvent(
  db: Db,
  ev: { type: string; createdAt: string; data: Record<string, unknown> },
  parsed: IdentityEventInput | undefined,
  key: string,
  requestId: string,
  /** Called after the commit when a user's status changed: the change's version for the sidecars (revocations wait for it). */
  afterStatusChange?: (tenantId: string, version: number) => Promise<unknown>,
): Promise<WebhookAck> {
  let statusChange: { tenantId: string; version: number } | undefined;
  const ack = await db.tx(async (c): Promise<WebhookAck> => {
    if (!(await claimDelivery(c, key, ev.type))) return { received: true, duplicate: true };
    const orgId = typeof ev.data.orgId === "string" ? ev.data.orgId : undefined;
    const idpUserId = typeof ev.data.userId === "string" ? ev.data.userId : undefined;
    const tenant = orgId ? await findTenantByOrg(c, orgId) : undefined;
    const base = { actorUserId: null, actorKeyId: null, requestId };
    const eventDetails = { eventType: ev.type, eventCreatedAt: ev.createdAt, idpUserId: idpUserId ?? null };

    if (!isKnownEventType(ev.type) || !parsed) {
      await appendAudit(c, { ...base, tenantId: tenant?.id ?? null, action: "identity.ignored", targetType: "identity_event", targetId: null, details: { ...eventDetails, reason: "unknown event type" } });
      await releaseDelivery(c, key);
      return { received: true, ignored: "unknown event type" };
    }
    if (!tenant) {
      await appendAudit(c, { ...base, tenantId: null, action: "identity.ignored", targetType: "organization", targetId: orgId ?? null, details: { ...eventDetails, reason: "unknown organization" } });
      await releaseDelivery(c, key);
      return { received: true, ignored: "unknown organization" };
    }

    const type = ev.type;
    const at = new Date(parsed.createdAt);
    const data = parsed.data;
    // Every event of one user is applied one at a time, whatever replica receives it.
    await c.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`idp-user:${tenant.id}:${data.userId}`]);
    let user: UserRow | undefined = await getUserByIdpForUpdate(c, tenant.id, data.userId);
    let linked = false;
    if (!user && data.email !== undefined) {
      // A user made before any identity event (bootstrap or CLI admin) is claimed by its email, whatever
      // the event: a first `user.deactivated`/`user.deleted` must suspend or delete that user (and stop its
      // keys), not provision a second one beside it (DESIGN.md §3, §10).
      const unlinked = await findUnlinkedUserByEmailForUpdate(c, tenant.id, data.email);
      if (unlinked) {
        await linkIdpUser(c, unlinked.id, data.userId);
        user = { ...unlinked, idp_user_id: data.userId };
        linked = true;
      }
    }
    const carried = { email: data.email !== undefined, displayName: data.displayName !== undefined };
    const plan = planEvent(
      type,
      at,
      user && { status: user.status, lastEventAt: user.last_event_at, emailEventAt: user.email_event_at, displayNameEventAt: user.display_name_event_at },
      carried,
    );
    const changes: Record<string, unknown> = {};
    let userId = user?.id ?? null;
    const email = plan.email ? data.email : undefined;
    const displayName = plan.displayName ? data.displayName : undefined;

    if (plan.create) {
      const created = await insertIdpUser(c, { id: newId("usr"), tenantId: tenant.id, email, displayName, status: plan.create, idpUserId: data.userId, eventAt: at, statusEvent: type !== "user.updated" });
      userId = created.id;
      changes.created = { status: plan.create, role: created.role };
    } else if (user) {
      if (email !== undefined || displayName !== undefined) {
        await updateProfile(c, user.id, { email, displayName, eventAt: at });
        changes.profile = { email: email ?? user.email, displayName: displayName === undefined ? user.display_name : displayName };
      }
      if (plan.status) {
        await setStatus(c, user.id, plan.status, at);
        if (plan.status !== user.status) changes.status = { from: user.status, to: plan.status };
        if (plan.status === "deleted") {
          changes.removedFromTeams = await deleteMembershipsOfUser(c, tenant.id, user.id);
          changes.deletedKeys = await deleteKeysOfUser(c, tenant.id, user.id);
        }
        if (plan.status !== user.status) statusChange = { tenantId: tenant.id, version: await recordChange(c, tenant.id, "user", user.id) };
      }
      if (linked) changes.linked = true;
    }

    await appendAudit(c, {
      ...base,
      tenantId: tenant.id,
      action: `identity.${type}`,
      targetType: "user",
      targetId: userId,
      details: { ...eventDetails, outcome: plan.outcome, ...changes },
    });
    await setDeliveryOutcome(c, key, plan.outcome);
    return plan.outcome === "applied" ? { received: true } : { received: true, ignored: IGNORED[plan.outcome] };
  });
  if (statusChange && afterStatusChange) await afterStatusChange(statusChange.tenantId, statusChange.version);
  if (++pruneCounter % 100 === 1) await pruneDeliveries(db).catch(() => undefined);
  return ack;
}
