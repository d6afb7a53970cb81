// What a write waits for (SyncHub.delivered): a stream of a sidecar that acks counts once the sidecar has
// APPLIED the change (its Ack), any other stream once handed the change; a closed or superseded stream
// holds nothing; an Ack counts only for the streams of its own tenant, key and sidecar id; a stream whose
// Acks stop coming holds one write for the time limit, not every write. No database: the hub's
// delivery bookkeeping does not use its Postgres connection.
import test from "ava";
import { SyncHub, type StreamIdentity } from "./hub.js";

const hub = () => new SyncHub("postgres://unused");
const id = (sidecarId: string, acksApplied = true, keyId = "key_a"): StreamIdentity => ({ sidecarId, keyId, keyHash: `hash_${keyId}`, acksApplied });
/** delivered() with a short limit: true = delivered, false = the limit was reached. */
const deliveredSoon = (h: SyncHub, tenantId: string, version: number, ms = 80) => h.delivered(tenantId, version, ms);

test("a stream that does not ack (an older sidecar) is delivered once handed the version", async (t) => {
  const h = hub();
  const s = h.track("ten_1", id("sc_old", false));
  s.sent(5, true);
  const p = deliveredSoon(h, "ten_1", 7, 2000);
  s.sent(7, true);
  t.true(await p);
  t.is(h.ack("ten_1", "key_a", "sc_old", 7), 0, "its Acks, if any, name no acking stream");
});

test("an acking stream is not delivered when handed, only once the sidecar acks the version", async (t) => {
  const h = hub();
  const s = h.track("ten_1", id("sc_1"));
  s.sent(5, true);
  t.is(h.ack("ten_1", "key_a", "sc_1", 5), 1);
  s.sent(7, true);
  t.false(await deliveredSoon(h, "ten_1", 7), "handed but not applied: the write waits (here until the limit)");
  const p = deliveredSoon(h, "ten_1", 9, 2000);
  s.sent(9, true);
  h.ack("ten_1", "key_a", "sc_1", 9);
  t.true(await p);
});

test("an acking stream none of whose Acks reached this replica yet counts once handed (acks routed elsewhere must not make every write wait)", async (t) => {
  const h = hub();
  const s = h.track("ten_1", id("sc_1"));
  s.sent(5, true);
  t.true(await deliveredSoon(h, "ten_1", 5));
});

test("an Ack may arrive before the stream notes it sent the message; an older Ack (a snapshot moved the sidecar back) is the sidecar's state", async (t) => {
  const h = hub();
  const s = h.track("ten_1", id("sc_1"));
  s.sent(5, true);
  h.ack("ten_1", "key_a", "sc_1", 5);
  h.ack("ten_1", "key_a", "sc_1", 8);
  t.true(await deliveredSoon(h, "ten_1", 8), "acked 8 before sent(8)");
  s.sent(8, true);
  h.ack("ten_1", "key_a", "sc_1", 6);
  t.false(await deliveredSoon(h, "ten_1", 8), "the last Ack says 6");
});

test("after the sidecar acked the last message, versions the stream moved past with nothing of its tenant are delivered", async (t) => {
  const h = hub();
  const s = h.track("ten_1", id("sc_1"));
  s.sent(5, true);
  h.ack("ten_1", "key_a", "sc_1", 5);
  s.sent(12, false);
  t.true(await deliveredSoon(h, "ten_1", 12));
  // Not while the last message is unacked.
  s.sent(14, true);
  s.sent(20, false);
  t.false(await deliveredSoon(h, "ten_1", 20));
});

test("Acks from another tenant, another key of the tenant, or naming another sidecar release nothing", async (t) => {
  const h = hub();
  const s = h.track("ten_1", id("sc_1"));
  s.sent(5, true);
  h.ack("ten_1", "key_a", "sc_1", 5);
  s.sent(9, true);
  const p = deliveredSoon(h, "ten_1", 9, 150);
  t.is(h.ack("ten_2", "key_a", "sc_1", 1e12), 0, "another tenant");
  t.is(h.ack("ten_1", "key_b", "sc_1", 1e12), 0, "another key of the tenant");
  t.is(h.ack("ten_1", "key_a", "sc_2", 1e12), 0, "another sidecar");
  t.false(await p);
  t.deepEqual(h.ackingStream("sc_1", "hash_key_a"), { tenantId: "ten_1", keyId: "key_a" });
  t.is(h.ackingStream("sc_1", "hash_key_b"), undefined, "another key is not recognised by the stream");
  t.is(h.ackingStream("sc_2", "hash_key_a"), undefined);
});

test("a stream whose sidecar said goodbye no longer holds a write, nor once it closes; streams of other tenants are not waited for", async (t) => {
  const h = hub();
  const s = h.track("ten_1", id("sc_1"));
  s.sent(5, true);
  h.ack("ten_1", "key_a", "sc_1", 5);
  const other = h.track("ten_2", id("sc_2"));
  other.sent(1, true);
  h.ack("ten_2", "key_a", "sc_2", 1);
  s.sent(9, true);
  const p = deliveredSoon(h, "ten_1", 9, 2000);
  h.leave("ten_1", "key_a", "sc_1");
  t.true(await p);
  s.close();
  t.is(h.ackingStream("sc_1", "hash_key_a"), undefined, "forgotten once closed");
  t.deepEqual(h.awaitedSidecars("ten_1"), [], "not remembered: it said goodbye");
  t.true(await deliveredSoon(h, "ten_1", 10, 2000));
});

test("a stream that never acked (an older sidecar) holds nothing once it closes: it is not remembered", async (t) => {
  const h = hub();
  const s = h.track("ten_1", id("sc_old", false));
  s.sent(5, true);
  const p = deliveredSoon(h, "ten_1", 9, 2000);
  s.close();
  t.true(await p);
  t.deepEqual(h.awaitedSidecars("ten_1"), []);
});

test("a new stream of the same sidecar (same id and key) supersedes the one before: a dead stream the replica has not noticed holds nothing", async (t) => {
  const h = hub();
  const dead = h.track("ten_1", id("sc_1"));
  dead.sent(5, true);
  h.ack("ten_1", "key_a", "sc_1", 5);
  dead.sent(9, true);
  const fresh = h.track("ten_1", id("sc_1"));
  fresh.sent(9, true);
  h.ack("ten_1", "key_a", "sc_1", 9);
  t.true(await deliveredSoon(h, "ten_1", 9), "only the new stream counts");
  // Another key using the same sidecar id does not supersede it.
  const intruder = h.track("ten_1", id("sc_1", true, "key_b"));
  fresh.sent(11, true);
  intruder.sent(11, true);
  t.false(await deliveredSoon(h, "ten_1", 11), "sc_1 (key_a) has not acked 11");
});

test("a stream whose Ack does not come holds one write until the limit; later writes count it once handed, until its next Ack", async (t) => {
  const h = hub();
  const s = h.track("ten_1", id("sc_1"));
  s.sent(5, true);
  h.ack("ten_1", "key_a", "sc_1", 5);
  s.sent(7, true);
  t.false(await deliveredSoon(h, "ten_1", 7), "the first write waits the whole limit");
  s.sent(8, true);
  t.true(await deliveredSoon(h, "ten_1", 8), "the next one counts it once handed");
  h.ack("ten_1", "key_a", "sc_1", 8);
  s.sent(10, true);
  t.false(await deliveredSoon(h, "ten_1", 10), "an Ack came: applied again");
});

test("a stream not yet handed the version holds the write whatever it acked", async (t) => {
  const h = hub();
  const s = h.track("ten_1", id("sc_1"));
  s.sent(5, true);
  h.ack("ten_1", "key_a", "sc_1", 5);
  t.false(await deliveredSoon(h, "ten_1", 6));
  // The limit marked nothing: the stream was never handed 6.
  s.sent(6, true);
  t.false(await deliveredSoon(h, "ten_1", 6), "still waits for its Ack");
});

test("an Ack passed on by another replica only moves the sidecar's acked state forward (it may arrive after a later direct one)", async (t) => {
  const h = hub();
  const s = h.track("ten_1", id("sc_1"));
  s.sent(9, true);
  h.ack("ten_1", "key_a", "sc_1", 9);
  t.is(h.ack("ten_1", "key_a", "sc_1", 7, true), 0, "late, passed on: ignored");
  t.true(await deliveredSoon(h, "ten_1", 9));
  s.sent(11, true);
  t.is(h.ack("ten_1", "key_a", "sc_1", 11, true), 1);
  t.true(await deliveredSoon(h, "ten_1", 11));
});
