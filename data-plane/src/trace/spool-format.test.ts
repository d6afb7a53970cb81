// Reading fields of an encoded trace from the wire (spool replay, the benchmark's stub) agrees with a full decode;
// the record framing tells traces from amendments.
import test from "ava";
import { create, fromBinary } from "@bufbuild/protobuf";
import { QualityScoreSchema, TraceSchema } from "@agentgov/proto";
import { encodeTrace } from "./trace-encoding.js";
import { amendmentParts, decodeRecord, HEADER_BYTES, scanRecords, sealRecord, traceKeyFields, walkFields } from "./spool-format.js";

const trace = create(TraceSchema, {
  id: "trc_01KAQ00000000000000000000X",
  timestampMs: 1_767_225_600_123n,
  prompt: "p".repeat(9000),
  costUsd: 0.000123,
  latencyMs: 3.25,
  inputTokens: 512,
  spans: [{ stage: "pii_scan", durationMs: 0.01 }] as never,
});

test("traceKeyFields reads id and timestamp_ms; walkFields visits every top-level field with its value", (t) => {
  const bytes = encodeTrace(trace);
  t.deepEqual(traceKeyFields(bytes), { id: trace.id, timestampMs: 1_767_225_600_123 });
  const seen = new Map<number, number>();
  let cost = NaN;
  t.true(walkFields(bytes, (field, wire, value, length) => {
    seen.set(field, wire);
    if (field === 30) cost = new DataView(bytes.buffer, bytes.byteOffset + value, length).getFloat64(0, true);
    if (field === 2) t.is(length, 9000, "prompt bytes");
    return false;
  }));
  t.is(cost, 0.000123);
  t.is(seen.get(1), 2);
  t.is(seen.get(30), 1);
});

test("truncated or malformed bytes are refused, not read past their end", (t) => {
  const bytes = encodeTrace(trace);
  t.false(walkFields(bytes.subarray(0, bytes.length - 3), () => false));
  t.is(traceKeyFields(bytes.subarray(0, 20)), undefined);
  t.false(walkFields(Uint8Array.from([0x0f]), () => false), "wire type 7 does not exist");
  t.false(walkFields(Uint8Array.from([0x80, 0x80]), () => false), "truncated varint");
});

test("amendment records: told from trace records by their magic, found again after damage, split into the trace id and the fields to add", (t) => {
  const record = (kind: "trace" | "amendment", tr: typeof trace) => sealRecord(encodeTrace(tr, HEADER_BYTES), kind);
  const amendment = create(TraceSchema, { id: trace.id, qualityScores: [create(QualityScoreSchema, { scorer: "relevance", score: 0.25 })] });
  const garbage = Buffer.from("torn bytes of a record never finished");
  const bytes = Buffer.concat([record("trace", trace), garbage, record("amendment", amendment), record("trace", { ...trace, id: "trc_2" })]);
  const { records, bad } = scanRecords(bytes);
  t.deepEqual(records.map((r) => r.kind), ["trace", "amendment", "trace"]);
  t.is(bad.length, 1, "the garbage, and only it, is a bad range");
  t.is(bad[0]!.end - bad[0]!.start, garbage.length);
  const parts = amendmentParts(records[1]!.payload)!;
  t.is(parts.id, trace.id);
  t.deepEqual(fromBinary(TraceSchema, Buffer.concat([records[0]!.payload, parts.fields])), { ...trace, qualityScores: amendment.qualityScores });
  t.is(amendmentParts(new Uint8Array(0)), undefined, "no id: not an amendment");
  t.is(decodeRecord(record("amendment", amendment)), undefined, "a trace read back is never an amendment");
});
