// Reading fields of an encoded trace from the wire (spool replay, the benchmark's stub) agrees with a full decode.
import test from "ava";
import { create } from "@bufbuild/protobuf";
import { TraceSchema } from "@agentgov/proto";
import { encodeTrace } from "./trace-encoding.js";
import { traceKeyFields, walkFields } from "./spool-format.js";

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
