// Sidecars a replica remembers streaming that are not connected now (sync/remembered.ts, through
// SyncHub): a write also waits for them, within its limit, until they are back on a new stream and have
// applied its change. A goodbye, a revoked key, a reconnection without Acks or the staleness window make
// the hub forget them; once back, they hold no later write. No database and no real clock: the hub is
// not started (its table is not used) and each test has a clock of its own; "pending" means not settled
// once the event loop has run what the calls queued.
import test from "ava";
import { REMEMBER_MS, SyncHub, type StreamIdentity } from "./hub.js";

const PENDING = "pending" as const;
/** What `p` settled to once everything queued so far has run, or PENDING. */
const state = <T>(p: Promise<T>) => Promise.race([p, new Promise<typeof PENDING>((r) => setImmediate(() => r(PENDING)))]);
/** A limit no test reaches: a write that settles does so because of what the test did. */
const LONG = 60_000;

/** A clock of the test's own (tests of a file run concurrently). */
const clock = () => {
  const c = { ms: 1_000_000 };
  return { c, now: () => c.ms };
};
const hub = (now = clock().now) => new SyncHub("postgres://unused", undefined, { now });
const id = (sidecarId: string, acksApplied = true, keyId = "key_a"): StreamIdentity => ({ sidecarId, keyId, keyHash: `hash_${keyId}`, acksApplied });
const sc1 = { tenantId: "ten_1", keyId: "key_a", sidecarId: "sc_1" };

/** A hub where sidecar sc_1 of ten_1 streamed, acked `acked` after being handed `sent`, and its stream ended without a goodbye. */
function away(acked = 5, sent = acked, now = clock().now) {
  const h = hub(now);
  const s = h.track("ten_1", id("sc_1"));
  s.sent(sent, true);
  h.ack("ten_1", "key_a", "sc_1", acked);
  s.close();
  return h;
}

test("a sidecar whose stream ended without a goodbye holds a write until it is back on a new stream and has acked the write's version; being handed it is not enough", async (t) => {
  const h = away();
  t.deepEqual(h.awaitedSidecars("ten_1"), [sc1]);
  const p = h.delivered("ten_1", 9, LONG);
  t.is(await state(p), PENDING, "away");
  const back = h.track("ten_1", id("sc_1"));
  back.sent(9, true);
  t.is(await state(p), PENDING, "reconnected and handed the version, not applied yet");
  h.ack("ten_1", "key_a", "sc_1", 7);
  t.is(await state(p), PENDING, "back, with an older state");
  h.ack("ten_1", "key_a", "sc_1", 9);
  t.true(await p);
  t.deepEqual(h.awaitedSidecars("ten_1"), []);
});

test("a sidecar that had applied the version before its stream ended does not hold that write; a later version it has not seen does", async (t) => {
  const h = away(9);
  t.true(await state(h.delivered("ten_1", 9, LONG)));
  t.false(await h.delivered("ten_1", 10, 30), "the limit");
});

test("a sidecar that says goodbye is forgotten, also while away: a write waiting for it answers", async (t) => {
  const h = away();
  const p = h.delivered("ten_1", 9, LONG);
  t.is(await state(p), PENDING);
  h.leave("ten_1", "key_a", "sc_1");
  t.true(await p);
  t.deepEqual(h.awaitedSidecars("ten_1"), []);
  t.true(await state(h.delivered("ten_1", 10, LONG)));
});

test("a sidecar gone for good holds one write until the time limit, then is overdue: later writes do not wait for it; REMEMBER_MS after it was last seen it is forgotten", async (t) => {
  const { c, now } = clock();
  const h = away(5, 5, now);
  t.false(await h.delivered("ten_1", 9, 30), "held until the limit");
  t.true(await state(h.delivered("ten_1", 10, LONG)), "overdue: the next write answers at once");
  t.deepEqual(h.awaitedSidecars("ten_1"), [sc1], "still remembered");
  c.ms += REMEMBER_MS;
  t.deepEqual(h.awaitedSidecars("ten_1"), [], "forgotten");
});

test("an overdue sidecar that comes back and goes away again holds writes afresh; another sidecar of the tenant lost later is not overdue", async (t) => {
  const h = away(5);
  t.false(await h.delivered("ten_1", 9, 30));
  const back = h.track("ten_1", id("sc_1"));
  back.sent(9, true);
  h.ack("ten_1", "key_a", "sc_1", 9);
  back.close();
  const p = h.delivered("ten_1", 10, LONG);
  t.is(await state(p), PENDING, "away again: a new absence");
  const other = h.track("ten_1", id("sc_2"));
  other.sent(10, true);
  h.ack("ten_1", "key_a", "sc_2", 10);
  other.close();
  h.leave("ten_1", "key_a", "sc_1");
  t.true(await p);
  t.false(await h.delivered("ten_1", 11, 30), "sc_2, lost after the first timeout, holds the next write");
});

test("steady state: a sidecar back before the write began adds no wait (its stream's rules apply); a tenant with nothing remembered waits for nothing", async (t) => {
  const h = away();
  const s = h.track("ten_1", id("sc_1"));
  s.sent(9, true);
  h.ack("ten_1", "key_a", "sc_1", 9);
  t.true(await state(h.delivered("ten_1", 9, LONG)), "answers at once");
  s.sent(12, true);
  const p = h.delivered("ten_1", 12, LONG);
  t.is(await state(p), PENDING, "its stream has not acked 12: the ordinary rule");
  h.ack("ten_1", "key_a", "sc_1", 12);
  t.true(await p);
  t.true(await state(h.delivered("ten_2", 100, LONG)));
});

test("a sidecar back on another replica (its Ack passed on) releases the write waiting for it; a later write does not wait for it", async (t) => {
  const h = away();
  const p = h.delivered("ten_1", 9, LONG);
  t.is(h.ack("ten_1", "key_a", "sc_1", 8, true), 0, "no stream here");
  t.is(await state(p), PENDING, "back elsewhere, behind");
  h.ack("ten_1", "key_a", "sc_1", 9, true);
  t.true(await p);
  t.true(await state(h.delivered("ten_1", 20, LONG)), "held elsewhere now: not waited for, as any stream of another replica");
});

test("an Ack of another tenant or key naming the sidecar does not bring it back", async (t) => {
  const h = away();
  const p = h.delivered("ten_1", 9, LONG);
  h.ack("ten_2", "key_a", "sc_1", 1e12, true);
  h.ack("ten_1", "key_b", "sc_1", 1e12, true);
  h.ack("ten_1", "key_b", "sc_1", 1e12);
  t.is(await state(p), PENDING);
  h.leave("ten_1", "key_a", "sc_1");
  t.true(await p);
});

test("a stream ended because its own key was revoked, or superseded by a newer stream of its sidecar, leaves nothing to wait for", async (t) => {
  const h = hub();
  const revoked = h.track("ten_1", id("sc_1"));
  revoked.sent(5, true);
  h.ack("ten_1", "key_a", "sc_1", 5);
  revoked.revoked();
  revoked.close();
  t.deepEqual(h.awaitedSidecars("ten_1"), [], "revoked: it cannot come back with that key");
  const old = h.track("ten_1", id("sc_2"));
  old.sent(5, true);
  const fresh = h.track("ten_1", id("sc_2"));
  fresh.sent(5, true);
  old.close();
  t.deepEqual(h.awaitedSidecars("ten_1"), [], "superseded: its sidecar is connected");
  h.ack("ten_1", "key_a", "sc_2", 5);
  t.true(await state(h.delivered("ten_1", 5, LONG)));
});

test("a sidecar that comes back without Acks (it will never ack what writes wait for) is forgotten", async (t) => {
  const h = away();
  const p = h.delivered("ten_1", 9, LONG);
  const s = h.track("ten_1", id("sc_1", false));
  t.deepEqual(h.awaitedSidecars("ten_1"), []);
  s.sent(9, true);
  t.true(await p);
});
