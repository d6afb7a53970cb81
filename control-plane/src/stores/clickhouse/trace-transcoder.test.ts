// The ingest transcoder (encoded Trace → TabSeparated row): on every engine the stored row equals
// what the reference codec (row-codec.ts traceToRow) makes of the decoded trace — full traces,
// random ones, hostile strings, invalid UTF-8, non-finite numbers, unknown fields; the facts it reads
// are the trace's; bytes that are not a Trace, or a trace the store cannot hold, are refused.

import test from "ava";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { PiiDetectionSchema, SpanSchema, ToolCallSchema, TraceSchema, type Trace } from "@agentgov/proto";
import { budgetCharge } from "@agentgov/data-plane/budget-charge";
import { TraceStoreError } from "./errors.js";
import { fuzzStrings, HOSTILE_STRINGS } from "./hostile-strings.js";
import type { EngineRow } from "./engine.js";
import { num, str } from "./json-values.js";
import { traceToRow } from "./row-codec.js";
import { columnList, TRACE_COLUMNS } from "./schema.js";
import { sql, sqlIdent, sqlInList } from "./sql-literal.js";
import { enginesUnderTest, fullTrace, makeTrace, openTestStore, randomTraces, removeChdbDataDir, traceId } from "./test-engines.js";
import { TRANSCODED_COLUMNS, transcodeTrace } from "./trace-transcoder.js";
import { writtenDouble } from "./written-double.js";

test.after.always(() => removeChdbDataDir());

const NOW = Date.UTC(2026, 10, 20, 12, 0, 0);

/** Appends raw protobuf bytes (an unknown field, or a string field with given bytes) to a message. */
function withExtra(bytes: Uint8Array, extra: number[]): Uint8Array {
  return Uint8Array.from([...bytes, ...extra]);
}

function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
}

const tag = (no: number, wire: number): number[] => varint((no << 3) | wire);

/** Field `no` (wire type 2) holding `payload`. */
function lenField(no: number, payload: number[]): number[] {
  return [...tag(no, 2), ...varint(payload.length), ...payload];
}

/** Compares what the engine printed with the reference row (64-bit integers may come quoted). */
/** A row's values as the store reads them (Float64s as written: ClickHouse 18.16 reads some one ulp off, written-double.ts). */
function normalise(row: EngineRow): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of TRACE_COLUMNS) {
    const v = row[c.name];
    if (c.type.includes("Float64")) out[c.name] = Array.isArray(v) ? v.map((x) => writtenDouble(num(x))) : writtenDouble(num(v));
    else if (c.type.startsWith("Array(") && !c.type.includes("String")) out[c.name] = (v as unknown[]).map(num);
    else if (c.type.startsWith("Array(")) out[c.name] = v;
    else if (c.type === "String" || c.type.startsWith("DateTime") || c.type === "Nullable(String)") out[c.name] = v === null ? null : str(v);
    else out[c.name] = num(v);
  }
  return out;
}

test("the transcoded columns are the table's columns, in order", (t) => {
  t.deepEqual([...TRANSCODED_COLUMNS], TRACE_COLUMNS.map((c) => c.name));
});

test("facts are the trace's own fields", (t) => {
  const full = fullTrace("ten_f", NOW);
  const { facts, nonFinite } = transcodeTrace(toBinary(TraceSchema, full), 7);
  t.deepEqual(facts, {
    id: full.id,
    tenantId: "ten_f",
    agentId: full.agentId,
    status: full.status,
    timestampMs: NOW,
    keyId: full.keyId,
    costUsd: full.costUsd,
    budgetCharge: budgetCharge(full),
    toolNames: full.toolCalls.map((c) => c.name),
  });
  t.deepEqual(nonFinite, []);
  // A priced trace is charged its cost; an unpriced one its tokens at the provider's ceiling.
  t.is(transcodeTrace(toBinary(TraceSchema, create(TraceSchema, { ...full, priceMissing: false })), 7).facts.budgetCharge, full.costUsd);
  const unpriced = create(TraceSchema, { ...full, priceMissing: true, provider: "openai", costUsd: 0, inputTokens: 1000, outputTokens: 10 });
  t.is(transcodeTrace(toBinary(TraceSchema, unpriced), 7).facts.budgetCharge, budgetCharge(unpriced));
  t.true(budgetCharge(unpriced) > 0);
});

test("bytes that are not a Trace, or a trace the store cannot hold, are refused with invalid_argument", (t) => {
  const good = toBinary(TraceSchema, makeTrace({ tenantId: "ten", timestampMs: BigInt(NOW) }));
  const refuse = (bytes: Uint8Array, message: RegExp) => {
    const e = t.throws(() => transcodeTrace(bytes, 1), { instanceOf: TraceStoreError });
    t.is(e?.code, "invalid_argument");
    t.regex(e?.message ?? "", message);
  };
  refuse(good.subarray(0, good.length - 3), /malformed trace/);
  refuse(Uint8Array.from([0x0a, 0x7f, 0x41]), /malformed trace/); // length beyond the end
  refuse(withExtra(good, [...tag(10, 2), 1, 0x41]), /wire type/); // timestamp_ms as bytes
  refuse(withExtra(good, [0x80, 0x80, 0x80]), /malformed trace/); // truncated tag
  refuse(withExtra(good, tag(99, 3)), /wire type/); // groups are not proto3
  refuse(toBinary(TraceSchema, makeTrace({ tenantId: "ten", timestampMs: -1n })), /timestamp_ms out of range/);
  refuse(toBinary(TraceSchema, makeTrace({ tenantId: "ten", timestampMs: 4_294_967_296_000n })), /timestamp_ms out of range/);
  refuse(toBinary(TraceSchema, makeTrace({ tenantId: "", timestampMs: BigInt(NOW) })), /without tenant_id/);
  refuse(toBinary(TraceSchema, { ...makeTrace({ tenantId: "ten", timestampMs: BigInt(NOW) }), id: "" }), /without id/);
});

for (const kind of enginesUnderTest()) {
  test.serial(`[${kind}] stored rows equal the reference codec's, for every kind of trace`, async (t) => {
    const ts = await openTestStore(kind);
    try {
      const tenantId = "ten_transcode";
      const cases: { bytes: Uint8Array; decoded: Trace }[] = [];
      const add = (bytes: Uint8Array) => cases.push({ bytes, decoded: fromBinary(TraceSchema, bytes) });
      add(toBinary(TraceSchema, fullTrace(tenantId, NOW)));
      add(toBinary(TraceSchema, makeTrace({ tenantId, timestampMs: BigInt(NOW + 1) })));
      for (const r of randomTraces(200, { tenantId, fromMs: NOW - 86_400_000, toMs: NOW, seed: 11 })) add(toBinary(TraceSchema, r));
      // Hostile strings in every string field kind: plain, nullable, array element, tool name.
      const hostile = [...HOSTILE_STRINGS, ...fuzzStrings(60, 5)];
      hostile.forEach((s, i) => {
        const ms = NOW + 10 + i;
        add(
          toBinary(
            TraceSchema,
            makeTrace({
              tenantId,
              timestampMs: BigInt(ms),
              agentName: s,
              sessionId: s,
              prompt: s + s,
              completion: s,
              inputExtras: s,
              errorCode: s,
              spans: [create(SpanSchema, { stage: s, durationMs: i })],
              piiDetections: [create(PiiDetectionSchema, { entityType: s, start: i, end: i + 1, source: s, score: 0.5 })],
              policiesFired: [s, "x"],
              toolCalls: [create(ToolCallSchema, { name: s, id: s })],
            }),
          ),
        );
      });
      // Detected PII stored masked (TRACE_STORE_RAW_PII off): hostile texts with detections of each
      // source, overlapping spans, spans splitting a surrogate pair, spans past the end, and an ASCII text
      // whose spans are already stars.
      const pii = (source: string, start: number, end: number) => create(PiiDetectionSchema, { entityType: "email", start, end, source, score: 0.9 });
      hostile.forEach((s, i) => {
        const text = `mail ${s} 😀 jo@example.com ${s}`;
        add(toBinary(TraceSchema, makeTrace({ tenantId, timestampMs: BigInt(NOW + 300 + i), prompt: text, completion: s + text, piiDetections: [pii("prompt", 2, 9 + (i % 7)), pii("prompt", 5, 12), pii("completion", i % 5, 4_294_967_295 - i), pii("prompt", text.indexOf("😀") + 1, text.indexOf("😀") + 3)] })));
      });
      add(toBinary(TraceSchema, makeTrace({ tenantId, timestampMs: BigInt(NOW + 299), prompt: "SSN ***********, ok", piiDetections: [pii("prompt", 4, 15)] })));
      // Input outside the prompt: each of its sources masks input_extras only, as a prompt finding masks the prompt only.
      const EXTRAS_SOURCES = ["tool_definition", "response_schema", "prediction", "name"];
      hostile.forEach((s, i) => {
        const text = `tool ${s} 😀 jo@example.com\n\n${s}`;
        add(toBinary(TraceSchema, makeTrace({ tenantId, timestampMs: BigInt(NOW + 700 + i), prompt: text, completion: text, inputExtras: s + text, piiDetections: [pii(EXTRAS_SOURCES[i % 4]!, 3, 11 + (i % 5)), pii(EXTRAS_SOURCES[(i + 1) % 4]!, text.indexOf("😀") + 1, 4_294_967_295), pii("prompt", 0, 2)] })));
      });
      add(toBinary(TraceSchema, makeTrace({ tenantId, timestampMs: BigInt(NOW + 298), inputExtras: "SSN ***********, ok", piiDetections: [pii("tool_definition", 4, 15)] })));
      // Non-finite numbers, an empty optional session id, NaN inside nested messages.
      add(
        toBinary(
          TraceSchema,
          makeTrace({
            tenantId,
            timestampMs: BigInt(NOW + 500),
            sessionId: "",
            costUsd: Number.NaN,
            latencyMs: Number.POSITIVE_INFINITY,
            spans: [create(SpanSchema, { stage: "x", durationMs: Number.NEGATIVE_INFINITY })],
          }),
        ),
      );
      // Invalid UTF-8 in a top-level string and in an array element; an unknown field of each wire type.
      const base = toBinary(TraceSchema, makeTrace({ tenantId, timestampMs: BigInt(NOW + 600) }));
      add(
        withExtra(base, [
          ...lenField(4, [0x61, 0xff, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0x09]),
          ...lenField(54, [0xf0, 0x9f, 0x98, 0x27, 0x5c]),
          ...lenField(90, [1, 2, 3]),
          ...tag(91, 0), 0xff, 0x01,
          ...tag(92, 1), 1, 2, 3, 4, 5, 6, 7, 8,
          ...tag(93, 5), 1, 2, 3, 4,
        ]),
      );

      const rows = cases.map((c) => ts.store.transcode(c.bytes));
      await ts.store.insertTranscoded(rows);
      const ids = rows.map((r) => r.facts.id);
      const stored = await ts.engine.query(
        sql`SELECT ${columnList(TRACE_COLUMNS.map((c) => c.name))} FROM ${sqlIdent(ts.database)}.traces WHERE id IN ${sqlInList(ids)}`,
      );
      const byId = new Map(stored.map((r) => [str(r["id"]), normalise(r)]));
      t.is(byId.size, cases.length);
      cases.forEach((c, i) => {
        const version = Number(byId.get(rows[i]!.facts.id)?.["version"]);
        const expected = normalise(traceToRow(c.decoded, version) as EngineRow);
        t.deepEqual(byId.get(c.decoded.id), expected, `case ${i}`);
      });
      t.true(
        rows.some((r) => r.nonFinite.includes("cost_usd") && r.nonFinite.includes("spans.duration_ms")),
        "non-finite numbers are reported",
      );
    } finally {
      await ts.dispose();
    }
  });
}

test("transcoding many traces in a row reuses nothing between them", (t) => {
  const a = makeTrace({ tenantId: "ten", timestampMs: BigInt(NOW), toolCalls: [create(ToolCallSchema, { name: "t1", id: "1" })] });
  const b = makeTrace({ tenantId: "ten", timestampMs: BigInt(NOW), id: traceId(NOW) });
  const ra = transcodeTrace(toBinary(TraceSchema, a), 1);
  const rb = transcodeTrace(toBinary(TraceSchema, b), 2);
  t.deepEqual(ra.facts.toolNames, ["t1"]);
  t.deepEqual(rb.facts.toolNames, []);
  t.not(ra.row.toString(), rb.row.toString());
  t.true(ra.row.toString().includes("\t['t1']\t['1']\t"));
  t.true(rb.row.toString().includes("\t[]\t[]\t"));
});

test("input_extras (field 63) goes to its column masked by the findings of the four sources that point into it, raw only with storeRawPii", (t) => {
  const extras = "Look up a customer, e.g. SSN 536-22-8741.\n\nlike jo@example.com\n\ncard: 4111 1111 1111 1111\n\n234-56-7891";
  const prompt = "hello jo@example.com";
  const at = (text: string, part: string, source: string) => create(PiiDetectionSchema, { entityType: "x", start: text.indexOf(part), end: text.indexOf(part) + part.length, source, score: 0.9 });
  const trace = makeTrace({
    tenantId: "ten",
    timestampMs: BigInt(NOW),
    prompt,
    inputExtras: extras,
    piiDetections: [
      at(prompt, "jo@example.com", "prompt"),
      at(extras, "536-22-8741", "tool_definition"),
      at(extras, "jo@example.com", "response_schema"),
      at(extras, "4111 1111 1111 1111", "prediction"),
      at(extras, "234-56-7891", "name"),
    ],
  });
  const bytes = toBinary(TraceSchema, trace);
  const columns = (row: Buffer) => row.toString("utf8").replace(/\n$/, "").split("\t");
  const col = (name: string) => TRANSCODED_COLUMNS.indexOf(name);
  const masked = columns(transcodeTrace(bytes, 1).row);
  t.is(masked[col("input_extras")], "Look up a customer, e.g. SSN ***********.\\n\\nlike **************\\n\\ncard: *******************\\n\\n***********");
  t.is(masked[col("prompt")], "hello **************");
  t.is(masked[col("has_pii")], "1");
  t.is(masked[col("pii_sources")], "['prompt','tool_definition','response_schema','prediction','name']");
  t.is(columns(transcodeTrace(bytes, 1, true).row)[col("input_extras")], extras.replaceAll("\n", "\\n"));
  // Without input_extras the column is empty.
  t.is(columns(transcodeTrace(toBinary(TraceSchema, makeTrace({ tenantId: "ten", timestampMs: BigInt(NOW) })), 1).row)[col("input_extras")], "");
});
