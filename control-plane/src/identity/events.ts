// Identity events (spec "Events", DESIGN.md §10): the payload schema and what an event does to a user,
// as a pure decision over the user's current state so that out-of-order delivery is easy to reason about.
//
// Ordering: an event carries the provider's `createdAt`. Status events (created, deactivated, reactivated,
// deleted) are ordered against users.last_event_at. Profile events (created, updated) are ordered field
// by field: the e-mail against users.email_event_at, the display name against
// users.display_name_event_at, so an older event still fills a field that no newer event set, and a
// profile event none of whose fields is newer changes nothing ("stale"); so does a status event older
// than the last one applied. `deleted` is terminal: it applies whatever its time, and nothing applies
// after it (deleted users never come back). An event for a user the service has not seen provisions the
// user in the state the event implies (a `user.deleted` that arrives before its `user.created` leaves a
// tombstone, a `user.deactivated` a deactivated user) with the profile fields the event carries, so the
// late `user.created` finds the newer state and only fills the fields still unset (an e-mail, say).
// Which user an event names (its provider id, or the e-mail of a user made before any event) is decided
// by applyIdentityEvent before planEvent runs.
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
  emailEventAt: Date | null;
  displayNameEventAt: Date | null;
}

/** Which profile fields the event carries (`displayName: null` is carried: it clears the name). */
export interface CarriedFields {
  email: boolean;
  displayName: boolean;
}

export type Outcome = "applied" | "stale" | "user_deleted" | "unknown_user";

export interface Plan {
  outcome: Outcome;
  /** The user must be created with this status (no user yet). */
  create?: UserStatus;
  /** New status for an existing user. */
  status?: UserStatus;
  /** The event's e-mail is written (on creation too). */
  email: boolean;
  /** The event's display name is written (on creation too). */
  displayName: boolean;
}

const notOlder = (at: Date, than: Date | null) => than === null || at.getTime() >= than.getTime();

export function planEvent(type: IdentityEventType, at: Date, user: UserEventState | undefined, carried: CarriedFields): Plan {
  const none = { email: false, displayName: false };
  if (!user) {
    const fields = { email: carried.email, displayName: carried.displayName };
    switch (type) {
      case "user.created":
      case "user.updated":
      case "user.reactivated":
        return { outcome: "applied", create: "active", ...fields };
      case "user.deactivated":
        return { outcome: "applied", create: "deactivated", ...fields };
      case "user.deleted":
        return { outcome: "applied", create: "deleted", ...fields };
      case "session.terminated":
        return { outcome: "unknown_user", ...none };
    }
  }
  if (user.status === "deleted") return { outcome: "user_deleted", ...none };
  switch (type) {
    case "session.terminated":
      return { outcome: "applied", ...none };
    case "user.deleted":
      return { outcome: "applied", status: "deleted", ...none };
    case "user.created":
    case "user.updated": {
      const email = carried.email && notOlder(at, user.emailEventAt);
      const displayName = carried.displayName && notOlder(at, user.displayNameEventAt);
      const stale = (carried.email || carried.displayName) && !email && !displayName;
      return stale ? { outcome: "stale", ...none } : { outcome: "applied", email, displayName };
    }
    case "user.deactivated":
      return notOlder(at, user.lastEventAt) ? { outcome: "applied", status: "deactivated", ...none } : { outcome: "stale", ...none };
    case "user.reactivated":
      return notOlder(at, user.lastEventAt) ? { outcome: "applied", status: "active", ...none } : { outcome: "stale", ...none };
  }
}
