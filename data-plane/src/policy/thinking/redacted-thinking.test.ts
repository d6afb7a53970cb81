// The store of redacted thinking blocks' originals: restored only for the same agent, the same signature
// and the text the client was given; bounded by entries and characters (oldest first) and by age.
import test from "ava";
import { RedactedThinkingStore } from "./redacted-thinking.js";

test("restores the original for the signature and the redacted text only", (t) => {
  const store = new RedactedThinkingStore();
  store.remember("agt_a", "sig-1", "mail [REDACTED:email]", "mail jo@example.com");
  t.is(store.restore("agt_a", "sig-1", "mail [REDACTED:email]"), "mail jo@example.com");
  t.is(store.restore("agt_a", "sig-1", "mail someone"), undefined, "other text: not the block that was redacted");
  t.is(store.restore("agt_a", "sig-2", "mail [REDACTED:email]"), undefined);
  store.remember("agt_a", "sig-3", "same", "same");
  t.is(store.size, 1, "a block no redaction changed is not kept");
});

test("the oldest blocks go first past the entry and character limits; a block bigger than the limit is not kept", (t) => {
  const store = new RedactedThinkingStore({ maxEntries: 2, maxChars: 40, ttlMs: 60_000 });
  store.remember("agt_a", "a", "r-a", "o-a");
  store.remember("agt_a", "b", "r-b", "o-b");
  store.remember("agt_a", "c", "r-c", "o-c");
  t.is(store.size, 2);
  t.is(store.restore("agt_a", "a", "r-a"), undefined);
  t.is(store.restore("agt_a", "c", "r-c"), "o-c");
  store.remember("agt_a", "d", "x".repeat(15), "y".repeat(15)); // 30 chars: b (6) and c (6) no longer fit beside it with 40
  t.is(store.restore("agt_a", "b", "r-b"), undefined);
  t.is(store.restore("agt_a", "d", "x".repeat(15)), "y".repeat(15));
  store.remember("agt_a", "huge", "x".repeat(30), "y".repeat(30));
  t.is(store.restore("agt_a", "huge", "x".repeat(30)), undefined);
  t.is(store.restore("agt_a", "d", "x".repeat(15)), "y".repeat(15), "a refused block evicts nothing");
});

test("a block expires after the TTL", (t) => {
  let now = 1_000;
  const store = new RedactedThinkingStore({ maxEntries: 10, maxChars: 1000, ttlMs: 100 }, () => now);
  store.remember("agt_a", "s", "r", "o");
  now += 99;
  t.is(store.restore("agt_a", "s", "r"), "o");
  now += 1;
  t.is(store.restore("agt_a", "s", "r"), undefined);
  t.is(store.size, 0);
});

test("only the agent that was given the redacted block gets its original back", (t) => {
  const store = new RedactedThinkingStore();
  const a = store.scoped("agt_a");
  a.remember("sig", "mail [REDACTED:email]", "mail jo@example.com");
  t.is(store.scoped("agt_b").restore("sig", "mail [REDACTED:email]"), undefined);
  t.is(a.restore("sig", "mail [REDACTED:email]"), "mail jo@example.com");
});
