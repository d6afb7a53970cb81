// Identity events (spec "Events", DESIGN.md §10): the payload schema and what an event does to a user,
// as a pure decision over the user's current state so that out-of-order delivery is easy to reason about.
//
// Ordering: an event carries the provider's `createdAt`. Status events (created, deactivated, reactivated,
// deleted) are ordered against users.last_event_at, profile events (created, updated) against
// users.profile_event_at; an event older than one already applied changes nothing ("stale"). `deleted`
// is terminal: it applies whatever its time, and nothing applies after it (deleted users never come
// back). An event for a user the service has not seen provisions the user in the state the event
// implies (a `user.deleted` that arrives before its `user.created` leaves a tombstone, a
// `user.deactivated` a deactivated user), so the late `user.created` finds the newer state and is stale.
import { z } from "../http/openapi/zod.js";
import type { UserStatus } from "../stores/postgres/users-repo.js";

export const IDENTITY_EVENT_TYPES = ["user.created", "user.updated", "user.deleted", "user.deactivated", "user.reactivated", "session.terminated"] as const;
export type IdentityEventType = (typeof IDENTITY_EVENT_TYPES)[number];

export const isKnownEventType = (t: string): t is IdentityEventType => (IDENTITY_EVENT_TYPES as readonly string[]).includes(t);

const IsoTime = z
  .string()
  .max(64)
  .refine((s) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/.test(s) && !Number.isNaN(Date.parse(s)), {
    message: "must be an ISO 8601 date-time with a time zone",
  })
  .openapi({ format: "date-time" });

/** The envelope every delivery must have; `data` is checked per type once the type is known. */
export const EventEnvelope = z.object({ type: z.string().min(1).max(200), createdAt: IsoTime, data: z.record(z.string(), z.unknown()) });

export const IdentityEventData = z
  .object({
    userId: z.string().min(1).max(256).openapi({ description: "identity-provider user id" }),
    orgId: z.string().min(1).max(256).openapi({ description: "identity-provider organization id" }),
    email: z.string().email().max(320).optional(),
    displayName: z.string().max(500).nullable().optional(),
  })
  .loose();

export const IdentityEvent = z
  .object({
    type: z.string().min(1).max(200).openapi({ description: `one of ${IDENTITY_EVENT_TYPES.join(", ")}; other types are acknowledged and ignored` }),
    createdAt: IsoTime,
    data: IdentityEventData,
  })
  .loose()
  .openapi("IdentityEvent");

export type IdentityEventInput = z.infer<typeof IdentityEvent>;

export interface UserEventState {
  status: UserStatus;
  lastEventAt: Date | null;
  profileEventAt: Date | null;
}

export type Outcome = "applied" | "stale" | "user_deleted" | "unknown_user";

export interface Plan {
  outcome: Outcome;
  /** The user must be created with this status (no user yet). */
  create?: UserStatus;
  /** New status for an existing user. */
  status?: UserStatus;
  /** Email / display name from the event are written. */
  profile: boolean;
}

const notOlder = (at: Date, than: Date | null) => than === null || at.getTime() >= than.getTime();

export function planEvent(type: IdentityEventType, at: Date, user: UserEventState | undefined): Plan {
  if (!user) {
    switch (type) {
      case "user.created":
      case "user.updated":
      case "user.reactivated":
        return { outcome: "applied", create: "active", profile: true };
      case "user.deactivated":
        return { outcome: "applied", create: "deactivated", profile: true };
      case "user.deleted":
        return { outcome: "applied", create: "deleted", profile: true };
      case "session.terminated":
        return { outcome: "unknown_user", profile: false };
    }
  }
  if (user.status === "deleted") return { outcome: "user_deleted", profile: false };
  switch (type) {
    case "session.terminated":
      return { outcome: "applied", profile: false };
    case "user.deleted":
      return { outcome: "applied", status: "deleted", profile: false };
    case "user.created":
    case "user.updated":
      return notOlder(at, user.profileEventAt) ? { outcome: "applied", profile: true } : { outcome: "stale", profile: false };
    case "user.deactivated":
      return notOlder(at, user.lastEventAt) ? { outcome: "applied", status: "deactivated", profile: false } : { outcome: "stale", profile: false };
    case "user.reactivated":
      return notOlder(at, user.lastEventAt) ? { outcome: "applied", status: "active", profile: false } : { outcome: "stale", profile: false };
  }
}
