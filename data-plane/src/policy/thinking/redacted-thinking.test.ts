// The store of redacted thinking blocks' originals: restored only for the same agent, the same signature
// and the text the client was given; bounded by entries and characters (oldest first) and by age; kept
// sealed in a file across restarts.
import test, { type ExecutionContext } from "ava";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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

// --- kept across restarts, sealed ---

const tempDir = () => mkdtempSync(join(tmpdir(), "agentgov-thinking-"));
const noError = (t: ExecutionContext) => ({ onError: (e: unknown) => t.fail(String(e)) });
const LIMITS = { maxEntries: 100, maxChars: 10_000, ttlMs: 60_000 };
const fileOf = (dir: string) => readFileSync(join(dir, "blocks.log"), "utf8");

test("a block remembered before a restart is restored after it; the file holds no text, value or signature in clear", (t) => {
  const dir = tempDir();
  try {
    const before = new RedactedThinkingStore(LIMITS, Date.now, { dir, ...noError(t) });
    before.remember("agt_a", "sig-secret-1", "mail [REDACTED:email] now", "mail jo@example.com now");
    before.close();
    const file = fileOf(dir);
    for (const clear of ["jo@example.com", "mail", "REDACTED", "sig-secret-1", "agt_a"]) t.false(file.includes(clear), clear);
    t.is(statSync(join(dir, "blocks.log")).mode & 0o777, 0o600);

    const after = new RedactedThinkingStore(LIMITS, Date.now, { dir, ...noError(t) });
    t.is(after.size, 1);
    t.is(after.restore("agt_a", "sig-secret-1", "mail [REDACTED:email] now"), "mail jo@example.com now");
    t.is(after.restore("agt_a", "sig-secret-1", "mail [REDACTED:email] later"), undefined, "another text does not open it");
    t.is(after.restore("agt_b", "sig-secret-1", "mail [REDACTED:email] now"), undefined, "nor another agent");
    after.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("after a restart, expired blocks and blocks past the limits do not come back, and the file keeps only the live ones", (t) => {
  const dir = tempDir();
  let now = 1_000_000;
  try {
    const s1 = new RedactedThinkingStore({ maxEntries: 3, maxChars: 10_000, ttlMs: 1_000 }, () => now, { dir, ...noError(t) });
    s1.remember("agt_a", "old", "r-old", "o-old");
    now += 600;
    for (const sig of ["a", "b", "c"]) s1.remember("agt_a", sig, `r-${sig}`, `o-${sig}`);
    s1.remember("agt_a", "b", "r-b2", "o-b2"); // the same block again: the later record wins
    s1.close();
    const lines = fileOf(dir).trim().split("\n").length;
    t.is(lines, 5, "nothing is deleted in place: one line per block remembered");

    now += 500; // "old" expired at 1,001,000
    const s2 = new RedactedThinkingStore({ maxEntries: 2, maxChars: 10_000, ttlMs: 1_000 }, () => now, { dir, ...noError(t) });
    t.is(s2.size, 2, "the oldest live block goes past the entry limit");
    t.is(s2.restore("agt_a", "old", "r-old"), undefined);
    t.is(s2.restore("agt_a", "a", "r-a"), undefined);
    t.is(s2.restore("agt_a", "c", "r-c"), "o-c");
    t.is(s2.restore("agt_a", "b", "r-b2"), "o-b2");
    t.is(s2.restore("agt_a", "b", "r-b"), undefined);
    t.is(fileOf(dir).trim().split("\n").length, 2, "rewritten at start-up with the live blocks only");
    s2.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a torn or damaged line is skipped; the file is rewritten when it holds much more than is live", (t) => {
  const dir = tempDir();
  try {
    const s1 = new RedactedThinkingStore(LIMITS, Date.now, { dir, ...noError(t) });
    s1.remember("agt_a", "s1", "r1", "o1");
    s1.remember("agt_a", "s2", "r2", "o2");
    s1.close();
    const file = join(dir, "blocks.log");
    const [l1, l2] = fileOf(dir).trim().split("\n");
    writeFileSync(file, `${l1}\n{"k":"broken\n${l2!.slice(0, 40)}`); // a damaged line, then a torn one (a crash mid-write)
    const s2 = new RedactedThinkingStore(LIMITS, Date.now, { dir, ...noError(t) });
    t.is(s2.size, 1);
    t.is(s2.restore("agt_a", "s1", "r1"), "o1");

    // One block remembered over and over: the file stays bounded (about twice the live bytes plus 1 MiB).
    const big = "x".repeat(2_000);
    for (let i = 0; i < 2_000; i++) s2.remember("agt_a", "same", `${big}${i}`, `${big}-${i}`);
    t.true(statSync(file).size < 2 * 1024 * 1024, `file size ${statSync(file).size}`);
    t.is(s2.restore("agt_a", "same", `${big}1999`), `${big}-1999`);
    s2.close();
    t.is(new RedactedThinkingStore(LIMITS, Date.now, { dir, ...noError(t) }).restore("agt_a", "same", `${big}1999`), `${big}-1999`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a write that fails is reported and the block is still kept in memory", (t) => {
  const dir = tempDir();
  try {
    const errors: unknown[] = [];
    const store = new RedactedThinkingStore(LIMITS, Date.now, { dir, onError: (e) => errors.push(e) });
    rmSync(dir, { recursive: true, force: true }); // the directory disappears under the sidecar
    store.remember("agt_a", "s", "r", "o");
    t.is(errors.length, 1);
    t.is(store.restore("agt_a", "s", "r"), "o");
    store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
