// The durable spool on a real filesystem: replay of what was not acknowledged, compaction, damaged and
// truncated segments (good part replayed, bad part quarantined), the size cap and the directory lock.
import test from "ava";
import { readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { TraceSchema } from "@agentgov/proto";
import { DurableSpool, SpoolLockedError, WRITE_RETRY_MS } from "./spool.js";
import { HEADER_BYTES } from "./spool-format.js";
import { logSink, segmentFiles, segmentFilesFailing, tmp, trace } from "./testing/spool-fixtures.js";

test("unacknowledged traces are replayed after a restart, acknowledged ones are not, and acked segments are compacted", async (t) => {
  const dir = tmp();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { log } = logSink();
  const a = await DurableSpool.open({ dir, log, segmentBytes: 4096 });
  const traces = Array.from({ length: 100 }, (_, i) => trace(i));
  await Promise.all(traces.map((x) => a.append(x)));
  t.is(a.size(), 100);
  t.true(segmentFiles(dir).length > 2, "small segments rotate");
  const first = await a.peek(40, new Set());
  t.deepEqual(first.map((x) => x.id), traces.slice(0, 40).map((x) => x.id));
  await a.remove(first.map((x) => x.id));
  t.is(a.stats().ackedTotal, 40);
  await a.close();

  const b = await DurableSpool.open({ dir, log, cacheBytes: 0 });
  t.is(b.size(), 60);
  t.is(b.stats().replayedTotal, 60);
  const replayed = await b.peek(1000, new Set());
  t.deepEqual(replayed.map((x) => x.id), traces.slice(40).map((x) => x.id));
  t.deepEqual(fromBinary(TraceSchema, replayed[5]!.payload), traces[45]!, "traces read back from disk are intact");
  t.deepEqual(
    replayed.map((x) => Buffer.from(x.payload).toString("base64")),
    traces.slice(40).map((x) => Buffer.from(toBinary(TraceSchema, x)).toString("base64")),
    "the payloads are the encoded traces exactly as spooled",
  );
  await b.remove(replayed.map((x) => x.id));
  t.is(b.size(), 0);
  await b.close();
  t.deepEqual(segmentFiles(dir), [], "fully acknowledged segments are deleted");

  const c = await DurableSpool.open({ dir, log });
  t.is(c.size(), 0);
  await c.close();
});

test("peek skips excluded ids and respects the byte budget; traces are shipped only once on disk", async (t) => {
  const dir = tmp();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const s = await DurableSpool.open({ dir, log: logSink().log });
  const xs = Array.from({ length: 10 }, (_, i) => trace(i));
  const pending = xs.map((x) => s.append(x));
  t.deepEqual(await s.peek(10, new Set()), [], "nothing is shippable before its group commit");
  await Promise.all(pending);
  const got = await s.peek(3, new Set([xs[0]!.id, xs[2]!.id]));
  t.deepEqual(got.map((x) => x.id), [xs[1]!.id, xs[3]!.id, xs[4]!.id]);
  const one = await s.peek(10, new Set(), 1);
  t.is(one.length, 1, "at least one trace even when it alone exceeds the byte budget");
  t.true(s.stats().commits >= 1);
  await s.close();
});

test("peek returns the encoded traces exactly as spooled, from the in-memory cache and from disk alike", async (t) => {
  const dir = tmp();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const xs = Array.from({ length: 50 }, (_, i) => trace(i, "cached or not"));
  const encoded = xs.map((x) => Buffer.from(toBinary(TraceSchema, x)).toString("base64"));
  const recordBytes = xs.map((x) => HEADER_BYTES + toBinary(TraceSchema, x).length);
  // A cache budget of about 10 records: the rest are read back from disk at peek.
  const cacheBytes = recordBytes.slice(0, 10).reduce((a, b) => a + b, 0);
  for (const opts of [{ cacheBytes }, { cacheBytes: 0 }, {}]) {
    const s = await DurableSpool.open({ dir, log: logSink().log, ...opts });
    await Promise.all(xs.map((x) => s.append(x)));
    const got = await s.peek(100, new Set());
    t.deepEqual(got.map((x) => x.id), xs.map((x) => x.id));
    t.deepEqual(got.map((x) => Buffer.from(x.payload).toString("base64")), encoded, `payloads exact with ${JSON.stringify(opts)}`);
    t.deepEqual(got.map((x) => fromBinary(TraceSchema, x.payload)), xs);
    // A second peek gives the same bytes (a cached payload is not consumed or modified by the first).
    const again = await s.peek(100, new Set());
    t.deepEqual(again.map((x) => Buffer.from(x.payload).toString("base64")), encoded);
    await s.remove(xs.map((x) => x.id));
    await s.close();
  }
});

test("a record damaged on disk after it was written is quarantined at peek and dropped; the others still ship", async (t) => {
  const dir = tmp();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { log, lines } = logSink();
  const s = await DurableSpool.open({ dir, log, cacheBytes: 0 });
  const xs = Array.from({ length: 5 }, (_, i) => trace(i, "rot on disk"));
  await Promise.all(xs.map((x) => s.append(x)));
  const path = join(dir, segmentFiles(dir)[0]!);
  const bytes = readFileSync(path);
  const offsets: number[] = [];
  for (let at = 0; at < bytes.length; at += HEADER_BYTES + bytes.readUInt32LE(at + 4)) offsets.push(at);
  bytes[offsets[2]! + HEADER_BYTES + 5]! ^= 0xff;
  writeFileSync(path, bytes);
  const got = await s.peek(10, new Set());
  t.deepEqual(got.map((x) => x.id), xs.filter((_, i) => i !== 2).map((x) => x.id));
  t.deepEqual(got.map((x) => fromBinary(TraceSchema, x.payload)), xs.filter((_, i) => i !== 2));
  t.is(s.size(), 4);
  t.is(s.stats().droppedTotal, 1);
  t.is(s.stats().quarantinedRanges, 1);
  t.true(lines.some((l) => l.level === "error" && /damaged on disk/.test(l.obj && "reason" in l.obj ? String(l.obj.reason) : "")));
  await s.close();
});

test("a truncated tail and a damaged record are quarantined; the good records around them are replayed", async (t) => {
  const dir = tmp();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const a = await DurableSpool.open({ dir, log: logSink().log });
  const xs = Array.from({ length: 20 }, (_, i) => trace(i, "quarantine me"));
  await Promise.all(xs.map((x) => a.append(x)));
  await a.close();
  // Simulate a crash: the lock stays behind with a dead pid.
  writeFileSync(join(dir, "LOCK"), "999999999\n");
  const [seg] = segmentFiles(dir);
  const path = join(dir, seg!);
  const bytes = readFileSync(path);
  const size = statSync(path).size;
  // Flip a payload byte of record #5 (records have equal-ish sizes: find its offset by walking headers).
  const offsets: number[] = [];
  for (let at = 0; at < bytes.length; at += HEADER_BYTES + bytes.readUInt32LE(at + 4)) offsets.push(at);
  t.is(offsets.length, 20);
  const damaged = Buffer.from(bytes);
  damaged[offsets[5]! + HEADER_BYTES + 3]! ^= 0xff;
  writeFileSync(path, damaged);
  // Tear the last record in half.
  truncateSync(path, size - 7);

  const { log, lines } = logSink();
  const b = await DurableSpool.open({ dir, log });
  const ids = (await b.peek(100, new Set())).map((x) => x.id);
  const expected = xs.map((x) => x.id).filter((_, i) => i !== 5 && i !== 19);
  t.deepEqual(ids, expected);
  const st = b.stats();
  t.is(st.quarantinedRanges, 2);
  t.is(st.replayedTotal, 18);
  const q = readdirSync(join(dir, "quarantine"));
  t.is(q.length, 2);
  const quarantined = q.reduce((sum, f) => sum + statSync(join(dir, "quarantine", f)).size, 0);
  t.is(quarantined, st.quarantinedBytes);
  t.is(quarantined, offsets[6]! - offsets[5]! + (size - 7 - offsets[19]!));
  t.true(lines.some((l) => l.level === "error" && /quarantined/.test(l.msg)));
  // The damaged segment is compacted once its good records are acknowledged; quarantine stays.
  await b.remove(ids);
  t.deepEqual(segmentFiles(dir).filter((f) => f === seg), []);
  await b.close();
});

test("garbage appended to a segment (a torn multi-record write) is quarantined without losing earlier records", async (t) => {
  const dir = tmp();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const a = await DurableSpool.open({ dir, log: logSink().log });
  await Promise.all([trace(1), trace(2)].map((x) => a.append(x)));
  await a.close();
  const path = join(dir, segmentFiles(dir)[0]!);
  writeFileSync(path, Buffer.concat([readFileSync(path), Buffer.alloc(300, 0)]));
  const b = await DurableSpool.open({ dir, log: logSink().log });
  t.is(b.size(), 2);
  t.is(b.stats().quarantinedBytes, 300);
  await b.close();
});

test("when full, whole oldest segments are dropped (counted and logged loudly) and appends never wait", async (t) => {
  const dir = tmp();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { log, lines } = logSink();
  const s = await DurableSpool.open({ dir, log, maxBytes: 64 * 1024, segmentBytes: 8 * 1024 });
  const xs = Array.from({ length: 2000 }, (_, i) => trace(i, "fill the spool"));
  for (const x of xs) {
    void s.append(x);
    await new Promise((r) => setImmediate(r));
  }
  await s.flush();
  const st = s.stats();
  t.true(st.droppedTotal > 0);
  t.is(st.depth + st.droppedTotal, 2000);
  t.true(st.bytes <= 64 * 1024 + 8 * 1024, `spool bytes ${st.bytes} stay within the cap plus one segment`);
  t.true(s.diskBytes() <= 64 * 1024 + 8 * 1024);
  const kept = await s.peek(5000, new Set());
  t.is(kept.at(-1)!.id, xs.at(-1)!.id, "the newest traces are kept");
  t.false(kept.some((x) => x.id === xs[0]!.id), "the oldest are dropped");
  t.true(lines.some((l) => l.level === "error" && /TRACE SPOOL FULL/.test(l.msg)));
  await s.close();
});

test("a directory owned by a live process is refused; a stale lock is taken over", async (t) => {
  const dir = tmp();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 30000)"], { stdio: "ignore" });
  t.teardown(() => child.kill("SIGKILL"));
  writeFileSync(join(dir, "LOCK"), `${child.pid}\n`);
  await t.throwsAsync(DurableSpool.open({ dir, log: logSink().log }), { instanceOf: SpoolLockedError });
  child.kill("SIGKILL");
  await new Promise((r) => child.once("exit", r));
  const s = await DurableSpool.open({ dir, log: logSink().log });
  t.is((JSON.parse(readFileSync(join(dir, "LOCK"), "utf8")) as { pid: number }).pid, process.pid);
  await s.close();
});

test("stats report depth, bytes, the oldest trace's age and high-water marks", async (t) => {
  const dir = tmp();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const s = await DurableSpool.open({ dir, log: logSink().log });
  const xs = Array.from({ length: 5 }, (_, i) => trace(i));
  await Promise.all(xs.map((x) => s.append(x)));
  let st = s.stats();
  t.is(st.depth, 5);
  t.true(st.bytes > 0);
  t.true(st.oldestAgeMs >= 1000);
  await s.remove(xs.map((x) => x.id));
  st = s.stats();
  t.is(st.depth, 0);
  t.is(st.oldestAgeMs, 0);
  t.is(st.highWaterDepth, 5);
  t.true(st.highWaterBytes > 0);
  await s.close();
});

test("resolveOn write: a trace is in the segment file when append returns, so a kill -9 before any fsync loses none", async (t) => {
  const dir = tmp();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // A child process appends 200 traces with fdatasync held off for 60 s, says so, and is killed -9.
  const spoolModule = new URL("./spool.ts", import.meta.url).href;
  const protoModule = import.meta.resolve("@agentgov/proto");
  const code = `
    import { create } from "@bufbuild/protobuf";
    import { TraceSchema } from ${JSON.stringify(protoModule)};
    import { DurableSpool } from ${JSON.stringify(spoolModule)};
    const quiet = { info() {}, warn() {}, error() {} };
    const s = await DurableSpool.open({ dir: ${JSON.stringify(dir)}, log: quiet, resolveOn: "write", syncIntervalMs: 60000 });
    for (let i = 0; i < 200; i++) {
      const r = s.append(create(TraceSchema, { id: "trc_" + String(i).padStart(26, "0"), tenantId: "ten_1", agentId: "agt_1", timestampMs: BigInt(Date.now()), prompt: "p" + i }));
      if (r !== null) throw new Error("append should not wait in write mode");
      await new Promise((r) => setImmediate(r));
    }
    process.stdout.write("appended " + s.stats().commits + "\\n");
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { stdio: ["ignore", "pipe", "inherit"] });
  t.teardown(() => child.kill("SIGKILL"));
  const said = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("\n")) resolve(out.trim());
    });
    child.once("exit", (c) => reject(new Error(`child exited with ${c} before appending`)));
  });
  t.regex(said, /^appended [01]$/, "at most the first group commit (at the first append) ran before the kill");
  child.kill("SIGKILL");
  await new Promise((r) => child.once("exit", r));
  const s = await DurableSpool.open({ dir, log: logSink().log });
  t.is(s.size(), 200, "every appended trace is replayed");
  const got = await s.peek(500, new Set());
  t.deepEqual(got.map((x) => x.id), Array.from({ length: 200 }, (_, i) => `trc_${String(i).padStart(26, "0")}`));
  await s.close();
});

test("group commits respect the commit window, traces ship only once synced, and flush() commits at once", async (t) => {
  const dir = tmp();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // A window (2 s) much longer than the appends take (~0.3 s), so that a loaded machine cannot stretch
  // them across a window boundary right before the "not shippable yet" check (with 200 ms it could).
  const windowMs = 2000;
  const s = await DurableSpool.open({ dir, log: logSink().log, resolveOn: "write", syncIntervalMs: windowMs });
  let ready = 0;
  s.onAppend(() => ready++);
  const xs = Array.from({ length: 30 }, (_, i) => trace(i, "windowed"));
  const t0 = performance.now();
  for (const x of xs) {
    t.is(s.append(x), null);
    await new Promise((r) => setTimeout(r, 10));
  }
  const elapsed = performance.now() - t0;
  // 30 appends over `elapsed` ms: at most one commit per window (plus the first, at once), not one each.
  t.true(s.stats().commits <= Math.ceil(elapsed / windowMs) + 1, `${s.stats().commits} commits in ${Math.round(elapsed)} ms`);
  if (elapsed < windowMs - 200) t.true((await s.peek(100, new Set())).length < 30, "the traces of the open window are not shippable yet");
  const before = performance.now();
  await s.flush();
  t.true(performance.now() - before < windowMs / 2, "flush does not wait for the window");
  t.is((await s.peek(100, new Set())).length, 30);
  t.true(ready > 0);
  await s.close();
});

/**
 * Segment files for the failure tests: the file is created as usual, but the spool writes through the
 * descriptor `fail(seq)` picks — /dev/full (every write fails with ENOSPC, nothing written: a full
 * disk), /dev/null (writes succeed, fdatasync fails with EINVAL) or the file opened read-only (writes
 * fail with EBADF) — so the spool's real write(2) and fdatasync calls fail.
 */
/** Tracks whether each promise (or null) has settled. */
function settled(ps: (Promise<void> | null)[]) {
  const done = ps.map((p) => p === null);
  ps.forEach((p, i) => void p?.then(() => (done[i] = true)));
  return done;
}
const turn = (ms = 30) => new Promise((r) => setTimeout(r, ms));

// /dev/full (ENOSPC on every write) is part of every Linux system this project supports: the disk-full
// tests run always, and fail loudly where the device is missing rather than being skipped.

test("a trace that cannot be written (disk full) is kept in memory and shipped, and its append resolves only at its acknowledgement; writes pause rather than start a segment per trace", async (t) => {
  const dir = tmp();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { log, lines } = logSink();
  const s = await DurableSpool.open({ dir, log, resolveOn: "write", openSegmentFile: segmentFilesFailing(() => "full") });
  const xs = Array.from({ length: 20 }, (_, i) => trace(i, "disk full"));
  const first = s.append(xs[0]!);
  t.not(first, null, "not safe: the answer must wait");
  let st = s.stats();
  t.like(st, { unwritable: true, writeErrors: 1, memoryOnly: 1, depth: 1 });
  t.regex(st.lastError, /ENOSPC/);
  const rest = xs.slice(1).map((x) => s.append(x));
  t.true(rest.every((p) => p !== null));
  const done = settled([first, ...rest]);
  st = s.stats();
  t.like(st, { memoryOnly: 20, depth: 20, writeErrors: 1 }, "no write is tried again within the retry interval");
  t.true(st.segments <= 1 && segmentFiles(dir).length <= 2, `no new segment per failed trace (${segmentFiles(dir).join(" ")})`);
  t.is(lines.filter((l) => l.level === "error").length, 1, "one error logged, not one per trace");
  // Shippable from memory, exactly as encoded.
  const got = await s.peek(100, new Set());
  t.deepEqual(got.map((x) => x.id), xs.map((x) => x.id));
  t.deepEqual(got.map((x) => Buffer.from(x.payload).toString("base64")), xs.map((x) => Buffer.from(toBinary(TraceSchema, x)).toString("base64")));
  await turn(100);
  t.deepEqual(done, xs.map(() => false), "nothing is released before its acknowledgement");
  await s.remove(xs.slice(0, 10).map((x) => x.id));
  await turn();
  t.deepEqual(done, xs.map((_, i) => i < 10), "acknowledged traces release their answers, the others still wait");
  await s.remove(xs.slice(10).map((x) => x.id));
  await turn();
  t.true(done.every(Boolean));
  t.like(s.stats(), { memoryOnly: 0, memoryOnlyBytes: 0, depth: 0, ackedTotal: 20 });
  // After the retry interval the same segment is tried again (out of space, nothing was written to it).
  await turn(WRITE_RETRY_MS + 50);
  t.not(s.append(trace(100, "still full")), null);
  t.like(s.stats(), { writeErrors: 2, unwritable: true });
  t.true(segmentFiles(dir).length <= 2);
  await s.close();
});

test("writing resumes on a new segment once the retry interval has passed, and the spool is writable again", async (t) => {
  const dir = tmp();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { log, lines } = logSink();
  // Segment 1's descriptor refuses writes (EBADF): it is abandoned, segment 2 takes the records.
  const s = await DurableSpool.open({ dir, log, resolveOn: "write", openSegmentFile: segmentFilesFailing((seq) => (seq === 1 ? "readonly" : undefined)) });
  const a = trace(1, "unwritable");
  const b = trace(2, "unwritable");
  t.not(s.append(a), null);
  t.not(s.append(b), null);
  t.like(s.stats(), { unwritable: true, writeErrors: 1, memoryOnly: 2 });
  t.regex(s.stats().lastError, /EBADF/);
  await turn(WRITE_RETRY_MS + 50);
  const c = trace(3, "written");
  t.is(s.append(c), null, "written again: safe at once");
  t.like(s.stats(), { unwritable: false, lastError: "", writeErrors: 1, memoryOnly: 2 });
  t.true(lines.some((l) => l.level === "info" && /writing again/.test(l.msg)));
  await s.flush();
  await s.close();
  // Only the written trace survives a restart; the two kept in memory were never acknowledged.
  const again = await DurableSpool.open({ dir, log: logSink().log });
  t.deepEqual((await again.peek(10, new Set())).map((x) => x.id), [c.id]);
  await again.close();
});

test("SPOOL_GATE=fsync: a trace whose fdatasync failed resolves at its acknowledgement, not at the failed commit", async (t) => {
  const dir = tmp();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { log } = logSink();
  // Segment 1's writes succeed but its fdatasync fails (EINVAL on /dev/null); segment 2 is a real file.
  const s = await DurableSpool.open({ dir, log, resolveOn: "fsync", openSegmentFile: segmentFilesFailing((seq) => (seq === 1 ? "nosync" : undefined)) });
  const x = trace(1, "not synced");
  const p = s.append(x);
  t.not(p, null);
  const done = settled([p]);
  await s.flush();
  await turn(50);
  t.false(done[0], "a failed fdatasync does not release the answer");
  t.like(s.stats(), { unwritable: true, writeErrors: 1, memoryOnly: 1 });
  t.regex(s.stats().lastError, /EINVAL/);
  const got = await s.peek(10, new Set());
  t.deepEqual(got.map((y) => fromBinary(TraceSchema, y.payload)), [x], "shipped from memory");
  await s.remove([x.id]);
  await turn();
  t.true(done[0], "released by the acknowledgement");
  // The first failure moves to a new segment at once; its commit succeeds and clears the state.
  const y = trace(2, "synced");
  const q = s.append(y);
  t.not(q, null);
  await q;
  t.like(s.stats(), { unwritable: false, memoryOnly: 0, writeErrors: 1 });
  await s.close();
});

test("traces kept in memory only are bounded by the cache size: the oldest are dropped, counted and logged", async (t) => {
  const dir = tmp();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { log, lines } = logSink();
  const cacheBytes = 4096;
  const s = await DurableSpool.open({ dir, log, resolveOn: "write", cacheBytes, openSegmentFile: segmentFilesFailing(() => "full") });
  const xs = Array.from({ length: 200 }, (_, i) => trace(i, "bounded memory"));
  for (const x of xs) void s.append(x);
  const st = s.stats();
  t.true(st.memoryOnlyBytes <= cacheBytes && st.memoryOnlyBytes > cacheBytes / 2, `${st.memoryOnlyBytes} bytes kept in memory`);
  t.true(st.droppedTotal > 0);
  t.is(st.depth + st.droppedTotal, 200);
  t.is(st.memoryOnly, st.depth);
  const kept = await s.peek(500, new Set());
  t.deepEqual(kept.map((k) => k.id), xs.slice(200 - st.depth).map((x) => x.id), "the newest are kept");
  t.is(lines.filter((l) => l.level === "error" && /TRACE SPOOL FULL IN MEMORY/.test(l.msg)).length, 1, "drops are logged at most once a second");
  await s.close();
});
