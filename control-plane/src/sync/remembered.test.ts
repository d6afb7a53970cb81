// How a replica's remembered sidecars follow the sync_sidecars table (RememberedSidecars.reload): what
// the table lists as away is remembered (unless seen too long ago, or connected here); what it no longer
// lists is forgotten, except a sidecar remembered after the query began or just before it (its row may not
// be written yet), one that is back (its Acks still count for writes that began before) and one that has
// just reconnected to another replica (its Acks are being announced). Each test runs on a clock of its own.
import test from "ava";
import { RememberedSidecars, type AbsentRow, type SidecarRef } from "./remembered.js";

const WINDOW = 45_000;
const GRACE = 1000;
/** A remembered set on a clock of the test's own (tests of a file run concurrently). */
const remembered = () => {
  const clock = { ms: 5_000_000 };
  return { r: new RememberedSidecars({ now: () => clock.ms, rememberMs: WINDOW, backKeepMs: 2000, reloadGraceMs: GRACE }), clock };
};
const ref = (sidecarId: string, tenantId = "ten_1"): SidecarRef => ({ tenantId, keyId: "key_a", sidecarId });
const row = (sidecarId: string, ageMs: number, tenantId = "ten_1", away = true): AbsentRow => ({ ...ref(sidecarId, tenantId), ageMs, away });
const ids = (r: RememberedSidecars, tenantId = "ten_1") => r.absent(tenantId).map((x) => x.sidecarId).sort();

test("the table's rows are remembered for what is left of the window, except a sidecar connected here", (t) => {
  const { r, clock } = remembered();
  r.reload([row("sc_a", 1000), row("sc_b", WINDOW), row("sc_here", 10), row("sc_c", 0, "ten_2")], r.mark(), (x) => x.sidecarId === "sc_here");
  t.deepEqual(ids(r), ["sc_a"], "sc_b was seen a whole window ago");
  t.deepEqual(ids(r, "ten_2"), ["sc_c"]);
  t.true(r.holds("ten_1", 1, r.mark()));
  clock.ms += WINDOW - 1000 - 1;
  t.deepEqual(ids(r), ["sc_a"]);
  clock.ms += 1;
  t.deepEqual(ids(r), [], "last seen a window ago by now");
  t.false(r.holds("ten_1", 1, r.mark()));
});

test("a reload forgets what the table no longer lists, but keeps sidecars lost after its query began or within the grace before, and sidecars back", (t) => {
  const { r, clock } = remembered();
  r.lost(ref("sc_gone_elsewhere"), 0);
  r.lost(ref("sc_back"), 0);
  clock.ms += GRACE;
  r.lost(ref("sc_just_lost"), 0);
  const since = r.mark();
  r.lost(ref("sc_after_query"), 0);
  r.acked(ref("sc_back"), 7);
  r.reload([], since, () => false);
  t.deepEqual(ids(r), ["sc_after_query", "sc_just_lost"], "sc_gone_elsewhere forgotten; sc_back is not away");
  r.forget(ref("sc_after_query"));
  r.forget(ref("sc_just_lost"));
  // sc_back is kept for the writes that began before it came back: one of version 8 still waits for its Ack.
  t.true(r.holds("ten_1", 8, since));
  t.false(r.holds("ten_1", 8, r.mark()), "a write that began after it came back does not wait for it");
  r.acked(ref("sc_back"), 8);
  t.false(r.holds("ten_1", 8, since));
});

test("a sidecar that has just reconnected to another replica is kept while remembered, and not remembered otherwise", (t) => {
  const { r, clock } = remembered();
  r.lost(ref("sc_moving"), 0);
  clock.ms += GRACE;
  r.reload([row("sc_moving", 10, "ten_1", false), row("sc_new_elsewhere", 10, "ten_1", false)], r.mark(), () => false);
  t.deepEqual(ids(r), ["sc_moving"], "still waited for until its announced Ack, or the next reading without it");
  r.reload([], r.mark(), () => false);
  t.deepEqual(ids(r), []);
});

test("a sidecar back that the table lists away again (the replica it came back to died) is awaited afresh, with the version it had acked", (t) => {
  const { r } = remembered();
  r.lost(ref("sc_1"), 0);
  r.acked(ref("sc_1"), 4);
  t.deepEqual(ids(r), []);
  r.reload([row("sc_1", 100)], r.mark(), () => false);
  t.deepEqual(ids(r), ["sc_1"]);
  t.false(r.holds("ten_1", 4, r.mark()));
  t.true(r.holds("ten_1", 5, r.mark()));
});

test("a sidecar back is dropped backKeepMs after; one lost again is awaited afresh with the version it had", (t) => {
  const { r, clock } = remembered();
  r.lost(ref("sc_1"), 3);
  t.false(r.holds("ten_1", 3, r.mark()), "it had applied 3");
  const w = r.mark();
  t.true(r.holds("ten_1", 4, w));
  r.acked(ref("sc_1"), 4);
  t.false(r.holds("ten_1", 4, w));
  clock.ms += 2000;
  t.false(r.acked(ref("sc_1"), 5), "no longer remembered");
  r.lost(ref("sc_1"), 5);
  t.true(r.holds("ten_1", 6, r.mark()));
});

test("a timed-out write makes the sidecars that held it overdue (no later write waits for them) until their next Ack; others are untouched", (t) => {
  const { r } = remembered();
  r.lost(ref("sc_dead"), 3);
  r.lost(ref("sc_ahead"), 9);
  r.lost(ref("sc_other_tenant", "ten_2"), 3);
  const w = r.mark();
  t.true(r.holds("ten_1", 5, w));
  r.timedOut("ten_1", 5, w);
  t.false(r.holds("ten_1", 5, r.mark()), "sc_dead is overdue");
  r.forget(ref("sc_ahead"));
  t.false(r.holds("ten_1", 20, r.mark()), "overdue for later versions too");
  r.lost(ref("sc_ahead"), 9);
  t.true(r.holds("ten_1", 20, r.mark()), "a sidecar lost after the timeout is not overdue");
  t.true(r.holds("ten_2", 5, r.mark()), "another tenant's sidecar is not");
  t.deepEqual(ids(r), ["sc_ahead", "sc_dead"], "overdue is still remembered");
  const before = r.mark();
  r.acked(ref("sc_dead"), 4);
  t.true(r.holds("ten_1", 5, before), "back after the write began and behind: an Ack clears overdue");
  r.acked(ref("sc_dead"), 5);
  t.false(r.holds("ten_1", 5, before));
});
