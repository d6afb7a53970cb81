// Amendments of spooled traces (their quality scores, added once the answer has left): shipped with the
// trace, written after it so that a crash or restart replays them onto it, dropped with it.
import test from "ava";
import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { create, fromBinary } from "@bufbuild/protobuf";
import { QualityScoreSchema, SpanSchema, TraceSchema, type Trace } from "@agentgov/proto";
import type { TraceAmendment } from "./queue.js";
import { AMENDMENT_WRITE_DELAY_MS, DurableSpool } from "./spool.js";
import { encodeRecord, HEADER_BYTES, scanRecords } from "./spool-format.js";
import { logSink, segmentFiles, segmentFilesFailing, tmp, trace } from "./testing/spool-fixtures.js";

const scores = (i: number): TraceAmendment => ({
  qualityScores: [create(QualityScoreSchema, { scorer: "relevance", score: i / 100 }), create(QualityScoreSchema, { scorer: "completion_finished", score: 1 })],
  spans: [create(SpanSchema, { stage: "quality_score", durationMs: 0.012 })],
});
const amended = (tr: Trace, a: TraceAmendment): Trace => ({ ...tr, qualityScores: a.qualityScores, spans: [...tr.spans, ...a.spans] });
const decoded = (got: { payload: Uint8Array }[]) => got.map((x) => fromBinary(TraceSchema, x.payload));

function dirFor(t: { teardown(fn: () => void): void }): string {
  const dir = tmp();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test("an amended trace ships with its fields, from memory and after a restart from disk; an amendment is written after its trace", async (t) => {
  const dir = dirFor(t);
  const s = await DurableSpool.open({ dir, log: logSink().log, resolveOn: "write" });
  const xs = Array.from({ length: 6 }, (_, i) => trace(i));
  for (const [i, x] of xs.entries()) {
    s.append(x);
    if (i % 2 === 0) s.amend(x.id, scores(i));
  }
  await s.flush();
  const want = xs.map((x, i) => (i % 2 === 0 ? amended(x, scores(i)) : x));
  t.deepEqual(decoded(await s.peek(100, new Set())), want, "from the in-memory cache");

  // What a crash leaves: the segment as written, without a close (copied while the spool is open).
  const crashed = dirFor(t);
  cpSync(dir, crashed, { recursive: true });
  rmSync(join(crashed, "LOCK"));
  const records = scanRecords(readFileSync(join(crashed, segmentFiles(crashed)[0]!))).records;
  t.deepEqual(records.map((r) => r.kind), ["trace", "amendment", "trace", "trace", "amendment", "trace", "trace", "amendment", "trace"]);
  const r = await DurableSpool.open({ dir: crashed, log: logSink().log, cacheBytes: 0 });
  t.is(r.size(), 6, "amendments are not traces");
  t.deepEqual(decoded(await r.peek(100, new Set())), want, "replayed from disk onto their traces");
  await r.close();
  await s.close();
});

test("an amendment rides on the next trace's write(2); with no trace to carry it, it is written on its own after a short delay, or before a group commit", async (t) => {
  const dir = dirFor(t);
  const s = await DurableSpool.open({ dir, log: logSink().log, resolveOn: "write", syncIntervalMs: 60_000 });
  const kinds = () => scanRecords(readFileSync(join(dir, segmentFiles(dir)[0]!))).records.map((r) => r.kind);
  const [a, b, c] = [trace(1), trace(2), trace(3)];
  s.append(a);
  s.amend(a.id, scores(1));
  t.deepEqual(kinds(), ["trace"], "not written by amend itself");
  s.append(b);
  t.deepEqual(kinds(), ["trace", "amendment", "trace"], "written ahead of the next trace, in one write");
  s.amend(b.id, scores(2));
  await new Promise((r) => setTimeout(r, AMENDMENT_WRITE_DELAY_MS + 30));
  t.deepEqual(kinds(), ["trace", "amendment", "trace", "amendment"], "written alone once the delay passed");
  s.append(c);
  s.amend(c.id, scores(3));
  await s.flush();
  t.deepEqual(kinds(), ["trace", "amendment", "trace", "amendment", "trace", "amendment"], "flush (a group commit) writes it first");
  await s.close();
  const r = await DurableSpool.open({ dir, log: logSink().log, cacheBytes: 0 });
  t.deepEqual(decoded(await r.peek(10, new Set())), [amended(a, scores(1)), amended(b, scores(2)), amended(c, scores(3))]);
  await r.close();
});

test("amending an unknown or acknowledged trace does nothing; the amendments of acknowledged traces are not replayed, and their segments are compacted", async (t) => {
  const dir = dirFor(t);
  const s = await DurableSpool.open({ dir, log: logSink().log, resolveOn: "write", segmentBytes: 64 * 1024 });
  const size = () => segmentFiles(dir).reduce((n, f) => n + readFileSync(join(dir, f)).length, 0);
  const before = size();
  s.amend("trc_unknown", scores(1));
  t.is(size(), before, "nothing written for a trace the spool does not hold");
  const [a, b] = [trace(1), trace(2)];
  s.append(a);
  s.amend(a.id, scores(1));
  s.append(b);
  s.amend(b.id, scores(2));
  await s.flush();
  await s.remove([a.id]);
  const written = size();
  s.amend(a.id, scores(3));
  t.is(size(), written, "an acknowledged trace is not amended");
  await s.close();

  const r = await DurableSpool.open({ dir, log: logSink().log, cacheBytes: 0 });
  t.deepEqual(decoded(await r.peek(100, new Set())), [amended(b, scores(2))]);
  await r.remove([b.id]);
  await r.close();
  t.deepEqual(segmentFiles(dir), [], "a segment of acknowledged traces and their amendments is deleted");
});

test("a trace kept in memory (disk full) is amended in memory and ships with its fields; no write is tried for the amendment", async (t) => {
  const dir = dirFor(t);
  const { log, lines } = logSink();
  const s = await DurableSpool.open({ dir, log, resolveOn: "write", openSegmentFile: segmentFilesFailing(() => "full") });
  const x = trace(7, "disk full");
  t.not(s.append(x), null);
  s.amend(x.id, scores(7));
  t.like(s.stats(), { writeErrors: 1, memoryOnly: 1 }, "the amendment tried no write of its own");
  t.is(lines.filter((l) => l.level === "error").length, 1);
  t.deepEqual(decoded(await s.peek(10, new Set())), [amended(x, scores(7))]);
  await s.remove([x.id]);
  await s.close();
});

test("a damaged amendment is quarantined and its trace replayed without it; an amendment without a trace id is quarantined", async (t) => {
  const dir = dirFor(t);
  const s = await DurableSpool.open({ dir, log: logSink().log, resolveOn: "write" });
  const [a, b] = [trace(1), trace(2)];
  s.append(a);
  s.amend(a.id, scores(1));
  s.append(b);
  s.amend(b.id, scores(2));
  await s.close();
  const file = join(dir, segmentFiles(dir)[0]!);
  const bytes = readFileSync(file);
  const records = scanRecords(bytes).records;
  bytes[records[1]!.offset + records[1]!.length - 1]! ^= 0xff; // a's amendment: last payload byte flipped
  const noId = encodeRecord(Buffer.alloc(0));
  noId.writeUInt32LE(0x5a_47_53_41, 0); // the amendment magic, with an empty payload
  writeFileSync(file, Buffer.concat([bytes, noId]));

  const { log, lines } = logSink();
  const r = await DurableSpool.open({ dir, log, cacheBytes: 0 });
  t.deepEqual(decoded(await r.peek(10, new Set())), [a, amended(b, scores(2))]);
  t.is(r.stats().quarantinedRanges, 2);
  t.deepEqual(lines.filter((l) => l.level === "error").map((l) => (l.obj as { reason: string }).reason), ["damaged record", "amendment without a trace id"]);
  await r.close();
});

test("the bytes the spool keeps until acknowledged are buffers of their own (a pooled slice kept an 8 KiB slab of other garbage alive), from memory and read back from disk", async (t) => {
  const dir = dirFor(t);
  const s = await DurableSpool.open({ dir, log: logSink().log, resolveOn: "write" });
  const xs = Array.from({ length: 4 }, (_, i) => trace(i));
  for (const x of xs) s.append(x);
  await s.flush();
  const own = (p: Uint8Array) => p.buffer.byteLength <= p.byteLength + HEADER_BYTES;
  const fromMemory = await s.peek(100, new Set());
  t.is(fromMemory.length, 4);
  t.true(fromMemory.every((x) => x.payload.length < Buffer.poolSize / 2 && own(x.payload)), "records written from memory");
  await s.close();
  const r = await DurableSpool.open({ dir, log: logSink().log, cacheBytes: 0 });
  const fromDisk = await r.peek(100, new Set());
  t.is(fromDisk.length, 4);
  t.true(fromDisk.every((x) => own(x.payload)), "records read back from their segment");
  await r.close();
});
