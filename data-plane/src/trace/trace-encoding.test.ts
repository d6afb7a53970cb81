// The hand-written Trace encoder against @bufbuild/protobuf's toBinary: same bytes (and so the same
// decoded message) for a fully populated trace, an empty one, edge values and many random traces.
import test from "ava";
import { create, fromBinary, isFieldSet, toBinary } from "@bufbuild/protobuf";
import {
  PiiDetectionSchema, PolicyEvaluationSchema, QualityScoreSchema, SpanSchema, ToolCallSchema, TraceSchema, type Trace,
} from "@agentgov/proto";
import { encodeTrace, TraceEncodingError } from "./trace-encoding.js";
import { createRng } from "../policy/pii/fixtures/prng.js";

function same(t: { is: (a: unknown, b: unknown, m?: string) => void; deepEqual: (a: unknown, b: unknown, m?: string) => void }, tr: Trace, label: string): void {
  const want = toBinary(TraceSchema, tr);
  const got = encodeTrace(tr);
  // Decoded from a plain Uint8Array copy: fromBinary of a Buffer keeps Buffer views in $unknown.
  t.deepEqual(fromBinary(TraceSchema, new Uint8Array(got)), fromBinary(TraceSchema, want), `${label}: decoded`);
  t.is(Buffer.compare(got, Buffer.from(want)), 0, `${label}: bytes`);
}

function full(): Trace {
  return create(TraceSchema, {
    id: "trc_01JZ00000000000000000000AB",
    tenantId: "ten_1",
    agentId: "agt_1",
    agentName: "support-bot",
    environment: "production",
    sessionId: "ses_é",
    provider: "openai",
    model: "gpt-4o-mini",
    status: "blocked",
    timestampMs: 1_760_000_000_123n,
    requestId: "req_1",
    httpStatus: 403,
    errorCode: "policy_blocked",
    keyId: "key_1",
    inputTokens: 1234,
    outputTokens: 56,
    cachedInputTokens: 7,
    cacheWriteTokens: 8,
    tokensEstimated: true,
    costUsd: 0.000123,
    inputCost: 0.0001,
    outputCost: 0.000023,
    pricePerMillionInput: 0.15,
    pricePerMillionOutput: 0.6,
    priceVersion: "2025-01",
    priceMissing: true,
    latencyMs: 123.456,
    providerMs: 120.001,
    overheadMs: 3.455,
    spans: [create(SpanSchema, { stage: "policy_eval", durationMs: 0.123 }), create(SpanSchema, { stage: "overhead", durationMs: 3.455 })],
    injectionScore: 0.25,
    piiScanEnabled: true,
    piiDetections: [
      create(PiiDetectionSchema, { entityType: "EMAIL", start: 3, end: 20, source: "prompt", score: 0.99 }),
      create(PiiDetectionSchema, { entityType: "ssn", start: 29, end: 40, source: "tool_definition", score: 0.85 }),
    ],
    policyEvaluations: [create(PolicyEvaluationSchema, { policyId: "pol_1", policyName: "no pii", result: "fail", actionTaken: "block" })],
    policiesFired: ["pol_1", "pol_2"],
    policiesEvaluated: 2,
    policiesBlocked: 1,
    qualityScores: [create(QualityScoreSchema, { scorer: "relevance", score: 0.8 })],
    toolCalls: [create(ToolCallSchema, { name: "get_weather", id: "call_1" })],
    prompt: "my email is ****************, héllo 👋",
    completion: "I can't help with that.",
    streamed: true,
    inputExtras: "Look up a customer, e.g. SSN ***********.\n\nété 👋",
  });
}

test("a fully populated trace (every field of the schema set) encodes to toBinary's bytes", (t) => {
  const tr = full();
  for (const f of TraceSchema.fields) t.true(isFieldSet(tr, f), `fixture sets ${f.name}`);
  same(t, tr, "full");
  // With headroom the message follows the reserved bytes.
  const withRoom = encodeTrace(tr, 12);
  t.deepEqual(fromBinary(TraceSchema, withRoom.subarray(12)), fromBinary(TraceSchema, toBinary(TraceSchema, tr)));
});

test("an empty trace encodes to zero bytes; an empty optional session_id is still written", (t) => {
  const empty = create(TraceSchema);
  t.is(encodeTrace(empty).length, 0);
  same(t, empty, "empty");
  const withSession = create(TraceSchema, { sessionId: "" });
  same(t, withSession, "empty session");
  t.is(encodeTrace(withSession).length, 2);
  t.is(fromBinary(TraceSchema, encodeTrace(withSession)).sessionId, "");
});

test("edge values: NaN/Infinity/-0 doubles, negative int32, large uint32, int64 extremes", (t) => {
  const doubles = [NaN, Infinity, -Infinity, -0, 0, Number.MIN_VALUE, -Number.MAX_VALUE, 1e-300, 0.1 + 0.2];
  for (const d of doubles) {
    same(t, create(TraceSchema, { costUsd: d, latencyMs: d, spans: [create(SpanSchema, { stage: "", durationMs: d })], qualityScores: [create(QualityScoreSchema, { score: d })] }), `double ${d}`);
  }
  for (const h of [-1, -2147483648, 2147483647, 1, 127, 128, 16384, 599]) same(t, create(TraceSchema, { httpStatus: h }), `int32 ${h}`);
  for (const u of [1, 127, 128, 16383, 16384, 2097151, 2097152, 268435455, 268435456, 2147483647, 2147483648, 4294967295]) {
    same(t, create(TraceSchema, { inputTokens: u, policiesBlocked: u, piiDetections: [create(PiiDetectionSchema, { start: u, end: u })] }), `uint32 ${u}`);
  }
  for (const ts of [1n, -1n, 127n, 128n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 63n - 1n, -(2n ** 63n), 1_760_000_000_123n]) {
    same(t, create(TraceSchema, { timestampMs: ts }), `int64 ${ts}`);
  }
});

test("strings: unicode, emoji, lone surrogates (as U+FFFD, like TextEncoder) and huge strings", (t) => {
  const strings = [
    "a", "é", "€", "👋", "👩‍👩‍👧", "\u0000", "\u007f", "\u0080", "\u07ff", "\u0800", "\uffff",
    "\ud800", "\udfff", "x\ud800y", "\udc00\ud800", "\ud83d", "end\ud83d", "\ud83d\ud83d\ude4b",
    "日本語のテキスト".repeat(10), "👋".repeat(30), "a".repeat(48), "a".repeat(49), "é".repeat(24), "é".repeat(25),
    `${"x".repeat(100)}\ud800${"y".repeat(100)}`, "z".repeat(200_000), `${"😀".repeat(70_000)}\udc00`,
  ];
  for (const s of strings) {
    same(t, create(TraceSchema, { prompt: s, id: s, policiesFired: [s, s], toolCalls: [create(ToolCallSchema, { name: s })], inputExtras: s }), `string ${JSON.stringify(s.slice(0, 20))} (${s.length})`);
  }
  const lone = fromBinary(TraceSchema, encodeTrace(create(TraceSchema, { prompt: "a\ud800b" })));
  t.is(lone.prompt, "a\ufffdb");
});

/** The project's seeded PRNG (mulberry32), so that a failure reproduces. */
function rng(seed: number): () => number {
  return createRng(seed).next;
}

test("random traces encode to toBinary's bytes", (t) => {
  const r = rng(20250101);
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const units = ["a", "Z", "0", " ", "\n", "é", "ß", "€", "中", "👋", "😀", "\ud800", "\udc00", "\u0000", "\u07ff", "\u0800", "\uffff"];
  const str = (max: number): string => {
    if (r() < 0.3) return "";
    const n = Math.floor(r() * max);
    let s = "";
    for (let i = 0; i < n; i++) s += pick(units);
    return s;
  };
  const dbl = (): number => (r() < 0.3 ? 0 : pick([NaN, Infinity, -Infinity, -0, r(), r() * 1e6, -r(), 1e308]));
  const u32 = (): number => (r() < 0.3 ? 0 : pick([Math.floor(r() * 128), Math.floor(r() * 70_000), Math.floor(r() * 4294967296)]));
  const list = <T,>(f: () => T): T[] => Array.from({ length: r() < 0.4 ? 0 : Math.floor(r() * 5) }, f);
  for (let i = 0; i < 500; i++) {
    const tr = create(TraceSchema, {
      id: str(30), tenantId: str(10), agentId: str(10), agentName: str(20), environment: str(10),
      ...(r() < 0.5 ? { sessionId: str(10) } : {}),
      provider: str(10), model: str(20), status: str(8),
      timestampMs: r() < 0.2 ? 0n : pick([BigInt(Math.floor(r() * 2 ** 53)), -BigInt(Math.floor(r() * 2 ** 40)), 2n ** 62n]),
      requestId: str(20), httpStatus: r() < 0.3 ? 0 : Math.floor(r() * 2 ** 32) - 2 ** 31, errorCode: str(10), keyId: str(10),
      inputTokens: u32(), outputTokens: u32(), cachedInputTokens: u32(), cacheWriteTokens: u32(), tokensEstimated: r() < 0.5,
      costUsd: dbl(), inputCost: dbl(), outputCost: dbl(), pricePerMillionInput: dbl(), pricePerMillionOutput: dbl(),
      priceVersion: str(10), priceMissing: r() < 0.5, latencyMs: dbl(), providerMs: dbl(), overheadMs: dbl(),
      spans: list(() => create(SpanSchema, { stage: str(10), durationMs: dbl() })),
      injectionScore: dbl(), piiScanEnabled: r() < 0.5,
      piiDetections: list(() => create(PiiDetectionSchema, { entityType: str(8), start: u32(), end: u32(), source: str(8), score: dbl() })),
      policyEvaluations: list(() => create(PolicyEvaluationSchema, { policyId: str(8), policyName: str(20), result: str(4), actionTaken: str(6) })),
      policiesFired: list(() => str(8)), policiesEvaluated: u32(), policiesBlocked: u32(),
      qualityScores: list(() => create(QualityScoreSchema, { scorer: str(10), score: dbl() })),
      toolCalls: list(() => create(ToolCallSchema, { name: str(10), id: str(10) })),
      prompt: str(r() < 0.1 ? 5000 : 200), completion: str(r() < 0.1 ? 5000 : 200), streamed: r() < 0.5,
      inputExtras: str(r() < 0.1 ? 5000 : 200),
    });
    same(t, tr, `random #${i}`);
  }
});

test("input_extras (field 63, the last known field, a 2-byte tag) is written after streamed and before unknown fields, like toBinary", (t) => {
  for (const text of ["x", "a".repeat(127), "a".repeat(128), "é".repeat(40_000), "ssn ***********\n\n👋"]) {
    const tr = create(TraceSchema, { streamed: true, inputExtras: text });
    same(t, tr, `input_extras of ${text.length} units`);
    // tag (63 << 3) | 2 = 506 = 0xfa 0x03, after streamed (62: 0xf0 0x03 0x01)
    t.deepEqual([...encodeTrace(tr).subarray(0, 5)], [0xf0, 0x03, 0x01, 0xfa, 0x03]);
  }
  same(t, create(TraceSchema, { inputExtras: "" }), "empty input_extras");
  t.is(encodeTrace(create(TraceSchema, { inputExtras: "" })).length, 0);
  const unknown = fromBinary(TraceSchema, Buffer.concat([Buffer.from(toBinary(TraceSchema, create(TraceSchema, { inputExtras: "z" }))), Buffer.from([0x9a, 0x06, 0x01, 0x68])]));
  same(t, unknown, "input_extras then an unknown field");
});

test("unknown fields kept from a decoded trace are written after the known ones, like toBinary", (t) => {
  // A trace from a newer schema: field 99 (string) and 100 (varint) unknown to this one.
  const extra = Buffer.from([0x9a, 0x06, 0x02, 0x68, 0x69, 0xa0, 0x06, 0x05]);
  const decoded = fromBinary(TraceSchema, Buffer.concat([Buffer.from(toBinary(TraceSchema, full())), extra]));
  same(t, decoded, "unknown fields");
});

test("values the types cannot encode throw a typed error (toBinary throws too)", (t) => {
  for (const bad of [
    create(TraceSchema, { inputTokens: -1 }),
    create(TraceSchema, { inputTokens: 2 ** 32 }),
    create(TraceSchema, { outputTokens: 1.5 }),
    create(TraceSchema, { httpStatus: 2 ** 31 }),
    create(TraceSchema, { piiDetections: [create(PiiDetectionSchema, { start: -3 })] }),
    create(TraceSchema, { timestampMs: 2n ** 63n }),
  ]) {
    t.throws(() => toBinary(TraceSchema, bad));
    const e = t.throws(() => encodeTrace(bad), { instanceOf: TraceEncodingError });
    t.is(e?.code, "trace_encoding_invalid_field");
  }
});

test("a small trace's bytes are a buffer of their own, not a slice of Node's shared 8 KiB pool (the spool keeps them until acknowledged)", (t) => {
  const tr = create(TraceSchema, { id: "trc_small", tenantId: "ten_1", timestampMs: 1n });
  for (const headroom of [0, 12]) {
    const got = encodeTrace(tr, headroom);
    t.true(got.length < Buffer.poolSize / 2, "small enough that Buffer.allocUnsafe would have pooled it");
    t.is(got.buffer.byteLength, got.length, `headroom ${headroom}: its ArrayBuffer holds only the record`);
  }
});
