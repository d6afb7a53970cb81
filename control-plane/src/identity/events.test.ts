// planEvent: what one identity event does to a user, given the user's state. Profile fields are ordered
// field by field, so an older event still fills what no newer event set; status events are ordered
// against the last status event; deleted is terminal. (The e2e tests run the same rules through the
// webhook against Postgres: test/e2e/identity-webhook*.test.ts.)
import test from "ava";
import { planEvent, type UserEventState } from "./events.js";

const at = (s: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, s));
const BOTH = { email: true, displayName: true };
const NONE = { email: false, displayName: false };

const state = (p: Partial<UserEventState> = {}): UserEventState => ({ status: "active", lastEventAt: null, emailEventAt: null, displayNameEventAt: null, ...p });

test("an unseen user is provisioned in the state the event implies, with the fields it carries", (t) => {
  t.deepEqual(planEvent("user.created", at(1), undefined, BOTH), { outcome: "applied", create: "active", email: true, displayName: true });
  t.deepEqual(planEvent("user.deactivated", at(1), undefined, NONE), { outcome: "applied", create: "deactivated", email: false, displayName: false });
  t.deepEqual(planEvent("user.deleted", at(1), undefined, { email: true, displayName: false }), { outcome: "applied", create: "deleted", email: true, displayName: false });
  t.deepEqual(planEvent("user.updated", at(1), undefined, { email: false, displayName: true }), { outcome: "applied", create: "active", email: false, displayName: true });
  t.deepEqual(planEvent("session.terminated", at(1), undefined, BOTH), { outcome: "unknown_user", email: false, displayName: false });
});

test("a late user.created fills the fields a newer status event left unset, and keeps the newer status", (t) => {
  // Provisioned by a user.deactivated at 10 s without profile fields: no field has a time.
  const user = state({ status: "deactivated", lastEventAt: at(10) });
  t.deepEqual(planEvent("user.created", at(5), user, BOTH), { outcome: "applied", email: true, displayName: true });
});

test("profile fields are ordered one by one: only the fields no newer event set are written", (t) => {
  const user = state({ lastEventAt: at(10), emailEventAt: null, displayNameEventAt: at(10) });
  t.deepEqual(planEvent("user.created", at(5), user, BOTH), { outcome: "applied", email: true, displayName: false });
  t.deepEqual(planEvent("user.updated", at(5), user, { email: false, displayName: true }), { outcome: "stale", email: false, displayName: false });
  t.deepEqual(planEvent("user.updated", at(10), user, { email: false, displayName: true }), { outcome: "applied", email: false, displayName: true }, "equal times apply in arrival order");
  const set = state({ emailEventAt: at(20), displayNameEventAt: at(20) });
  t.deepEqual(planEvent("user.updated", at(15), set, BOTH), { outcome: "stale", email: false, displayName: false });
  t.deepEqual(planEvent("user.updated", at(25), set, BOTH), { outcome: "applied", email: true, displayName: true });
  // An update carrying no profile field changes nothing and is not stale.
  t.deepEqual(planEvent("user.updated", at(15), set, NONE), { outcome: "applied", email: false, displayName: false });
});

test("status events: ordered against the last status event; deleted is terminal; status events write no profile field of a known user", (t) => {
  const user = state({ lastEventAt: at(10), emailEventAt: null });
  t.deepEqual(planEvent("user.deactivated", at(11), user, BOTH), { outcome: "applied", status: "deactivated", email: false, displayName: false });
  t.deepEqual(planEvent("user.deactivated", at(9), user, BOTH), { outcome: "stale", email: false, displayName: false });
  t.deepEqual(planEvent("user.reactivated", at(9), state({ status: "deactivated", lastEventAt: at(10) }), NONE), { outcome: "stale", email: false, displayName: false });
  t.deepEqual(planEvent("user.deleted", at(1), user, NONE), { outcome: "applied", status: "deleted", email: false, displayName: false });
  const deleted = state({ status: "deleted", lastEventAt: at(10) });
  for (const type of ["user.created", "user.updated", "user.reactivated", "user.deactivated", "user.deleted", "session.terminated"] as const) {
    t.deepEqual(planEvent(type, at(99), deleted, BOTH), { outcome: "user_deleted", email: false, displayName: false }, type);
  }
});

test("a user made before any identity event (no event times) takes any event: a first deactivation or deletion applies", (t) => {
  const admin = state();
  t.deepEqual(planEvent("user.deactivated", at(1), admin, BOTH), { outcome: "applied", status: "deactivated", email: false, displayName: false });
  t.deepEqual(planEvent("user.deleted", at(1), admin, BOTH), { outcome: "applied", status: "deleted", email: false, displayName: false });
  t.deepEqual(planEvent("user.updated", at(1), admin, BOTH), { outcome: "applied", email: true, displayName: true });
});
