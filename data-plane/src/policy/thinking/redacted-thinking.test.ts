// The store of redacted thinking blocks' originals: restored only for the same agent, the same signature
// and the text the client was given; bounded by entries and characters (oldest first) and by age; kept
// sealed in a file across restarts.
import test, { type ExecutionContext } from "ava";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RedactedThinkingStore } from "./redacted-thinking.js";
import { ThinkingLog } from "./thinking-log.js";

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

/** A fresh directory, removed when the test ends. */
function tempDir(t: ExecutionContext): string {
  const dir = mkdtempSync(join(tmpdir(), "agentgov-thinking-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
const noError = (t: ExecutionContext) => ({ onError: (e: unknown) => t.fail(String(e)) });
const LIMITS = { maxEntries: 100, maxChars: 10_000, ttlMs: 60_000 };
const fileOf = (dir: string) => readFileSync(join(dir, "blocks.log"), "utf8");
const turn = () => new Promise<void>((r) => setImmediate(r));
/** Waits until no rewrite is under way (its temporary file is gone; its sync runs in the thread pool), 10 s at most. */
async function settled(dir: string): Promise<void> {
  for (let i = 0; i < 5000 && existsSync(join(dir, "blocks.log.tmp")); i++) await new Promise((r) => setTimeout(r, 2));
}

test("a block remembered before a restart is restored after it; the file holds no text, value or signature in clear", (t) => {
  const dir = tempDir(t);
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
});

test("after a restart, expired blocks and blocks past the limits do not come back, and the file keeps only the live ones", (t) => {
  const dir = tempDir(t);
  let now = 1_000_000;
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
});

test("a torn or damaged line is skipped; the file is rewritten when it holds much more than is live", async (t) => {
  const dir = tempDir(t);
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
  for (let i = 0; i < 2_000; i++) {
    s2.remember("agt_a", "same", `${big}${i}`, `${big}-${i}`);
    if (i % 10 === 0) await turn(); // the proxy's other work: a rewrite goes on a slice per turn
  }
  await settled(dir);
  t.true(statSync(file).size < 2 * 1024 * 1024, `file size ${statSync(file).size}`);
  t.is(s2.restore("agt_a", "same", `${big}1999`), `${big}-1999`);
  s2.close();
  t.is(new RedactedThinkingStore(LIMITS, Date.now, { dir, ...noError(t) }).restore("agt_a", "same", `${big}1999`), `${big}-1999`);
});

test("a write that fails is reported and the block is still kept in memory", (t) => {
  const dir = tempDir(t);
  const errors: unknown[] = [];
  const store = new RedactedThinkingStore(LIMITS, Date.now, { dir, onError: (e) => errors.push(e) });
  rmSync(dir, { recursive: true, force: true }); // the directory disappears under the sidecar
  store.remember("agt_a", "s", "r", "o");
  t.is(errors.length, 1);
  t.is(store.restore("agt_a", "s", "r"), "o");
  store.close();
});

// --- a file that cannot be used: memory only, reported once ---

test("a thinking directory that cannot be created does not stop the store: one error, then memory only", (t) => {
  const base = tempDir(t);
  const notADir = join(base, "file");
  writeFileSync(notADir, "");
  const errors: unknown[] = [];
  const store = new RedactedThinkingStore(LIMITS, Date.now, { dir: join(notADir, "thinking"), onError: (e) => errors.push(e) }); // mkdir: ENOTDIR
  t.is(errors.length, 1);
  t.is((errors[0] as NodeJS.ErrnoException).code, "ENOTDIR");
  store.remember("agt_a", "s1", "r1", "o1");
  store.remember("agt_a", "s2", "r2", "o2");
  t.is(store.restore("agt_a", "s1", "r1"), "o1");
  t.is(store.restore("agt_a", "s2", "r2"), "o2");
  t.is(errors.length, 1, "reported once");
  store.close();
});

test("after a failed append the file is no longer used: later blocks stay in memory, the file is not touched again", (t) => {
  const dir = tempDir(t);
  const errors: unknown[] = [];
  const store = new RedactedThinkingStore(LIMITS, Date.now, { dir, onError: (e) => errors.push(e) });
  const file = join(dir, "blocks.log");
  rmSync(file);
  mkdirSync(file); // the next append cannot open the file (EISDIR)
  store.remember("agt_a", "s1", "r1", "o1");
  t.is(errors.length, 1);
  rmSync(file, { recursive: true });
  writeFileSync(file, ""); // usable again: still not written to
  for (let i = 2; i < 10; i++) store.remember("agt_a", `s${i}`, `r${i}`, `o${i}`);
  t.is(statSync(file).size, 0, "memory only for the rest of the process");
  t.is(errors.length, 1, "reported once");
  for (let i = 1; i < 10; i++) t.is(store.restore("agt_a", `s${i}`, `r${i}`), `o${i}`);
  store.close();
});

test("after a failed rewrite the file is no longer used: no retry on every block, the file does not grow", (t) => {
  const dir = tempDir(t);
  const errors: unknown[] = [];
  const store = new RedactedThinkingStore({ maxEntries: 2, maxChars: 10_000_000, ttlMs: 60_000 }, Date.now, { dir, onError: (e) => errors.push(e) });
  mkdirSync(join(dir, "blocks.log.tmp")); // squats the temporary file: every rewrite fails
  const big = "z".repeat(100_000);
  for (let i = 0; i < 60; i++) store.remember("agt_a", `s${i}`, `r${i}`, `${big}${i}`);
  t.is(errors.length, 1, "one failed rewrite, reported once");
  t.true(statSync(join(dir, "blocks.log")).size < 2 * 1024 * 1024, `file size ${statSync(join(dir, "blocks.log")).size}`);
  t.is(store.restore("agt_a", "s59", "r59"), `${big}59`);
  store.close();
});

test("the bytes a file holds are counted from what is read at start-up, dead records included", (t) => {
  const dir = tempDir(t);
  const s1 = new RedactedThinkingStore(LIMITS, Date.now, { dir, ...noError(t) });
  s1.remember("agt_a", "s", "r", "o");
  s1.close();
  const l = fileOf(dir);
  writeFileSync(join(dir, "blocks.log"), l.repeat(Math.ceil((2 * 1024 * 1024) / l.length))); // 2 MiB of one block
  const log = new ThinkingLog(dir);
  t.is(log.read().length, Math.ceil((2 * 1024 * 1024) / l.length));
  t.true(log.wantsRewrite(l.length), "the file holds far more than the one live record");
});

test("a rewrite that fails after creating its temporary file removes it", (t) => {
  const dir = tempDir(t);
  const log = new ThinkingLog(dir);
  mkdirSync(join(dir, "blocks.log", "squatter"), { recursive: true }); // the rename over it fails (EISDIR)
  t.throws(() => log.rewrite([{ index: "i", expiresAt: Date.now() + 60_000, chars: 2, sealed: Buffer.alloc(40) }]));
  t.false(existsSync(join(dir, "blocks.log.tmp")));
});

test("a stale temporary file is not reused: the rewritten file is created afresh, 0600", (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, "blocks.log.tmp"), "stale\n", { mode: 0o644 });
  const store = new RedactedThinkingStore(LIMITS, Date.now, { dir, ...noError(t) });
  t.is(statSync(join(dir, "blocks.log")).mode & 0o777, 0o600);
  t.false(fileOf(dir).includes("stale"));
  store.close();
});

test("records with counts that are not safe non-negative integers, or too short to be sealed, are skipped", (t) => {
  const dir = tempDir(t);
  const s1 = new RedactedThinkingStore(LIMITS, Date.now, { dir, ...noError(t) });
  s1.remember("agt_a", "s", "r", "o");
  s1.close();
  const good = JSON.parse(fileOf(dir).trim()) as { k: string; x: number; n: number; d: string };
  const bad = [
    { n: -5 },
    { n: 1.5 },
    { x: 1e300 },
    { x: 2 ** 53 },
    { x: -1 },
    { d: Buffer.alloc(27).toString("base64") },
    { d: "" },
  ].map((change, i) => JSON.stringify({ ...good, k: `bad-${i}`, ...change }));
  writeFileSync(join(dir, "blocks.log"), [...bad, JSON.stringify(good)].join("\n") + "\n");
  const s2 = new RedactedThinkingStore(LIMITS, Date.now, { dir, ...noError(t) });
  t.is(s2.size, 1);
  t.is(s2.restore("agt_a", "s", "r"), "o");
  t.is(fileOf(dir).trim().split("\n").length, 1);
  s2.close();
});

test("a block sealed with the sidecar's secret opens only with that secret", (t) => {
  const dir = tempDir(t);
  const a = Buffer.from("svc_ingest_" + "a".repeat(32));
  const b = Buffer.from("svc_ingest_" + "b".repeat(32));
  const s1 = new RedactedThinkingStore(LIMITS, Date.now, { dir, secret: a, ...noError(t) });
  s1.remember("agt_a", "sig", "mail [REDACTED:email]", "mail jo@example.com");
  t.is(s1.restore("agt_a", "sig", "mail [REDACTED:email]"), "mail jo@example.com");
  s1.close();

  const other = new RedactedThinkingStore(LIMITS, Date.now, { dir, secret: b, ...noError(t) });
  t.is(other.size, 1);
  t.is(other.restore("agt_a", "sig", "mail [REDACTED:email]"), undefined, "another secret (a rotated key)");
  other.close();
  const none = new RedactedThinkingStore(LIMITS, Date.now, { dir, ...noError(t) });
  t.is(none.restore("agt_a", "sig", "mail [REDACTED:email]"), undefined, "no secret: the file and the conversation alone");
  none.close();

  const same = new RedactedThinkingStore(LIMITS, Date.now, { dir, secret: a, ...noError(t) });
  t.is(same.restore("agt_a", "sig", "mail [REDACTED:email]"), "mail jo@example.com");
  same.close();
});

test("while the proxy runs a rewrite goes a slice at a time; blocks remembered meanwhile are in the new file", async (t) => {
  const dir = tempDir(t);
  const limits = { maxEntries: 1000, maxChars: 50_000_000, ttlMs: 60_000 };
  const store = new RedactedThinkingStore(limits, Date.now, { dir, ...noError(t) });
  const big = (i: number) => `${"y".repeat(40_000)}${i}`;
  for (let i = 0; i < 40; i++) store.remember("agt_a", `b${i}`, `r${i}`, big(i)); // ~2 MiB live
  const tmp = join(dir, "blocks.log.tmp");
  let n = 0;
  while (!existsSync(tmp) && n < 500) store.remember("agt_a", "b0", `r0-${n}`, big(++n)); // dead records pile up
  t.true(existsSync(tmp), "a rewrite started");
  const before = statSync(join(dir, "blocks.log")).size;
  t.true(before > 4 * 1024 * 1024, "the remember that started it did not write it all at once");
  store.remember("agt_a", "during", "r-during", "o-during");
  await settled(dir);
  t.false(existsSync(tmp));
  const after = statSync(join(dir, "blocks.log")).size;
  t.true(after < before / 2, `rewritten: ${before} -> ${after} bytes`);
  store.close();
  const again = new RedactedThinkingStore(limits, Date.now, { dir, ...noError(t) });
  t.is(again.restore("agt_a", "during", "r-during"), "o-during", "remembered during the rewrite");
  t.is(again.restore("agt_a", "b0", `r0-${n - 1}`), big(n));
  t.is(again.restore("agt_a", "b7", "r7"), big(7));
  again.close();
});

test("a rewrite takes the file's place in one rename once its data is synced; blocks remembered during the sync are in it", async (t) => {
  const dir = tempDir(t);
  const limits = { maxEntries: 1000, maxChars: 50_000_000, ttlMs: 60_000 };
  const store = new RedactedThinkingStore(limits, Date.now, { dir, ...noError(t) });
  const big = (i: number) => `${"z".repeat(40_000)}${i}`;
  for (let i = 0; i < 10; i++) store.remember("agt_a", `b${i}`, `r${i}`, big(i));
  const tmp = join(dir, "blocks.log.tmp");
  let n = 0;
  while (!existsSync(tmp) && n < 500) store.remember("agt_a", "b0", `r0-${n}`, big(++n));
  t.true(existsSync(tmp), "a rewrite started");
  // Every turn until it is in place: the old file is whole under its name, and nothing else is created.
  let during = 0;
  for (let i = 0; i < 5000 && existsSync(tmp); i++) {
    t.true(existsSync(join(dir, "blocks.log")));
    t.deepEqual(readdirSync(dir).sort(), ["blocks.log", "blocks.log.tmp"]);
    store.remember("agt_a", `during-${during}`, `r-during-${during}`, `o-during-${during}`);
    during++;
    await new Promise((r) => setTimeout(r, i < 50 ? 0 : 2));
  }
  t.false(existsSync(tmp));
  t.deepEqual(readdirSync(dir), ["blocks.log"]);
  store.close();
  const again = new RedactedThinkingStore(limits, Date.now, { dir, ...noError(t) });
  for (let i = 0; i < during; i++) t.is(again.restore("agt_a", `during-${i}`, `r-during-${i}`), `o-during-${i}`, `remembered in turn ${i} of the rewrite`);
  t.is(again.restore("agt_a", "b0", `r0-${n - 1}`), big(n));
  t.is(again.restore("agt_a", "b9", "r9"), big(9));
  again.close();
});

test("a rewrite abandoned while its sync is under way leaves the file as it was and no temporary file", async (t) => {
  const dir = tempDir(t);
  const s1 = new RedactedThinkingStore(LIMITS, Date.now, { dir, ...noError(t) });
  s1.remember("agt_a", "kept", "r-kept", "o-kept");
  s1.close();
  const before = fileOf(dir);
  const log = new ThinkingLog(dir);
  const records = log.read();
  log.startRewrite([]);
  t.true(log.rewriteStep(Infinity));
  let called = false;
  log.syncRewrite(() => (called = true)); // the sync is now in the thread pool
  t.true(existsSync(join(dir, "blocks.log.tmp")));
  log.abortRewrite(); // as the store's close() does
  t.false(existsSync(join(dir, "blocks.log.tmp")));
  await new Promise((r) => setTimeout(r, 100));
  t.false(called, "an abandoned rewrite does not report");
  t.deepEqual(readdirSync(dir), ["blocks.log"]);
  t.is(fileOf(dir), before);
  t.is(records.length, 1);
  const again = new RedactedThinkingStore(LIMITS, Date.now, { dir, ...noError(t) });
  t.is(again.restore("agt_a", "kept", "r-kept"), "o-kept");
  again.close();
});

test("after close the file is not written any more", (t) => {
  const dir = tempDir(t);
  const store = new RedactedThinkingStore(LIMITS, Date.now, { dir, ...noError(t) });
  store.remember("agt_a", "s1", "r1", "o1");
  store.close();
  const size = statSync(join(dir, "blocks.log")).size;
  store.remember("agt_a", "s2", "r2", "o2");
  t.is(statSync(join(dir, "blocks.log")).size, size);
  t.is(store.restore("agt_a", "s2", "r2"), "o2", "kept in memory");
});
