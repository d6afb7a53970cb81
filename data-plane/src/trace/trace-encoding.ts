// Hand-written protobuf encoder for governance.v1.Trace (proto/governance/v1/trace.proto).
//
// Why hand-written: the spool encodes every proxied request's trace on the hot path, and
// @bufbuild/protobuf's reflective toBinary() costs ~75 µs per trace (field-by-field reflection, a
// byte-at-a-time number[] writer, one Uint8Array chunk per string/double, then a concatenation). This
// encoder computes the exact size first, allocates once and writes in place (~10x cheaper).
//
// It must produce the same bytes as toBinary(TraceSchema, t) (trace-encoding.test.ts checks this on
// fixed and random traces): proto3 rules — fields in field-number order, scalars equal to their zero
// value are not written (`-0 == 0`, so -0 is not written; NaN is), `optional string session_id` is
// written whenever it is defined (even ""), repeated strings and messages one tagged element each,
// doubles as little-endian fixed64, int32 negatives as 10-byte varints, int64 from a bigint, unknown
// fields ($unknown) appended after the known ones. Strings are UTF-8 with lone surrogates replaced by
// U+FFFD, as TextEncoder (which protobuf-es uses) does; Buffer's utf8 write does the same.
//
// When the proto changes, change this file with it (the test's fully populated trace fails first
// when a field is missing: it sets every field of the generated schema).
import type { PiiDetection, PolicyEvaluation, QualityScore, Span, ToolCall, Trace } from "@agentgov/proto";

/** A field holds a value that cannot be encoded (e.g. a non-integer or out-of-range uint32). */
export class TraceEncodingError extends Error {
  readonly code = "trace_encoding_invalid_field";
  constructor(readonly field: string, readonly value: unknown) {
    super(`cannot encode governance.v1.Trace field ${field}: invalid value ${String(value)}`);
    this.name = "TraceEncodingError";
  }
}

/** The size pass and the write pass disagree: a bug in this file (never ship uninitialised bytes). */
export class TraceEncoderBugError extends Error {
  readonly code = "trace_encoder_size_mismatch";
  constructor(readonly expected: number, readonly written: number) {
    super(`trace encoder size mismatch: wrote ${written} of ${expected} bytes`);
    this.name = "TraceEncoderBugError";
  }
}

// Wire types.
const VARINT = 0;
const I64 = 1;
const LEN = 2;

const tag = (no: number, wt: number) => ((no << 3) | wt) >>> 0;

/** Strings up to this many UTF-16 units are measured and written in JS; longer ones by Buffer (native). */
const SHORT_STRING = 48;

/** Byte lengths of strings and nested messages computed by the size pass, consumed in the same order by the write pass. */
let lens: number[] = [];
let li = 0;

interface Unknown { no: number; wireType: number; data: Uint8Array }
type WithUnknown = { $unknown?: Unknown[] };

function varintSize(v: number): number {
  // v is a non-negative integer < 2^53, or a negative int32 (10 bytes).
  if (v < 0) return 10;
  if (v < 0x80) return 1;
  if (v < 0x4000) return 2;
  if (v < 0x200000) return 3;
  if (v < 0x10000000) return 4;
  let n = 5;
  for (v = Math.floor(v / 0x800000000); v > 0; v = Math.floor(v / 0x80)) n++;
  return n;
}

function utf8Length(s: string): number {
  const n = s.length;
  if (n > SHORT_STRING) return Buffer.byteLength(s, "utf8");
  let len = n;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) len += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        len += 2; // 4 bytes for 2 units
        i++;
      } else len += 2; // lone high surrogate: U+FFFD, 3 bytes
    } else len += 2; // BMP char or lone surrogate: 3 bytes
  }
  return len;
}

function checkUint32(field: string, v: number): void {
  if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new TraceEncodingError(field, v);
}

function checkInt32(field: string, v: number): void {
  if (!Number.isInteger(v) || v < -0x80000000 || v > 0x7fffffff) throw new TraceEncodingError(field, v);
}

// ---- size pass (records string and message lengths in `lens`) ----

/** Size of a tagged string field (tag of 1 or 2 bytes), recording its byte length. */
function strField(tagBytes: number, s: string): number {
  const n = utf8Length(s);
  lens[li++] = n;
  return tagBytes + varintSize(n) + n;
}

function unknownSize(u: Unknown[] | undefined): number {
  if (u === undefined) return 0;
  let n = 0;
  for (const f of u) n += varintSize(tag(f.no, f.wireType)) + f.data.byteLength;
  return n;
}

/** Size of a nested message field (1-byte or 2-byte tag); `body` computes the content size. */
function msgField(tagBytes: number, body: number): number {
  return tagBytes + varintSize(body) + body;
}

function spanSize(m: Span): number {
  const at = li++;
  let n = 0;
  if (m.stage !== "") n += strField(1, m.stage);
  if (m.durationMs != 0) n += 9;
  n += unknownSize((m as WithUnknown).$unknown);
  lens[at] = n;
  return n;
}

function piiSize(m: PiiDetection): number {
  const at = li++;
  let n = 0;
  if (m.entityType !== "") n += strField(1, m.entityType);
  if (m.start != 0) {
    checkUint32("pii_detections.start", m.start);
    n += 1 + varintSize(m.start);
  }
  if (m.end != 0) {
    checkUint32("pii_detections.end", m.end);
    n += 1 + varintSize(m.end);
  }
  if (m.source !== "") n += strField(1, m.source);
  if (m.score != 0) n += 9;
  n += unknownSize((m as WithUnknown).$unknown);
  lens[at] = n;
  return n;
}

function evalSize(m: PolicyEvaluation): number {
  const at = li++;
  let n = 0;
  if (m.policyId !== "") n += strField(1, m.policyId);
  if (m.policyName !== "") n += strField(1, m.policyName);
  if (m.result !== "") n += strField(1, m.result);
  if (m.actionTaken !== "") n += strField(1, m.actionTaken);
  n += unknownSize((m as WithUnknown).$unknown);
  lens[at] = n;
  return n;
}

function qualitySize(m: QualityScore): number {
  const at = li++;
  let n = 0;
  if (m.scorer !== "") n += strField(1, m.scorer);
  if (m.score != 0) n += 9;
  n += unknownSize((m as WithUnknown).$unknown);
  lens[at] = n;
  return n;
}

function toolCallSize(m: ToolCall): number {
  const at = li++;
  let n = 0;
  if (m.name !== "") n += strField(1, m.name);
  if (m.id !== "") n += strField(1, m.id);
  n += unknownSize((m as WithUnknown).$unknown);
  lens[at] = n;
  return n;
}

/** int64 as the two's-complement 64-bit value, as an unsigned bigint (varint source). */
function int64Bits(field: string, v: bigint): bigint {
  if (v < -0x8000000000000000n || v > 0x7fffffffffffffffn) throw new TraceEncodingError(field, v);
  return BigInt.asUintN(64, v);
}

function bigVarintSize(u: bigint): number {
  let n = 1;
  while (u > 0x7fn) {
    u >>= 7n;
    n++;
  }
  return n;
}

function traceSize(t: Trace, ts: bigint): number {
  let n = 0;
  if (t.id !== "") n += strField(1, t.id);
  if (t.tenantId !== "") n += strField(1, t.tenantId);
  if (t.agentId !== "") n += strField(1, t.agentId);
  if (t.agentName !== "") n += strField(1, t.agentName);
  if (t.environment !== "") n += strField(1, t.environment);
  if (t.sessionId !== undefined) n += strField(1, t.sessionId);
  if (t.provider !== "") n += strField(1, t.provider);
  if (t.model !== "") n += strField(1, t.model);
  if (t.status !== "") n += strField(1, t.status);
  if (ts !== 0n) n += 1 + (ts < 0x20000000000000n ? varintSize(Number(ts)) : bigVarintSize(ts));
  if (t.requestId !== "") n += strField(1, t.requestId);
  if (t.httpStatus != 0) {
    checkInt32("http_status", t.httpStatus);
    n += 1 + varintSize(t.httpStatus);
  }
  if (t.errorCode !== "") n += strField(1, t.errorCode);
  if (t.keyId !== "") n += strField(1, t.keyId);
  // Fields 16 and up have 2-byte tags.
  if (t.inputTokens != 0) {
    checkUint32("input_tokens", t.inputTokens);
    n += 2 + varintSize(t.inputTokens);
  }
  if (t.outputTokens != 0) {
    checkUint32("output_tokens", t.outputTokens);
    n += 2 + varintSize(t.outputTokens);
  }
  if (t.cachedInputTokens != 0) {
    checkUint32("cached_input_tokens", t.cachedInputTokens);
    n += 2 + varintSize(t.cachedInputTokens);
  }
  if (t.cacheWriteTokens != 0) {
    checkUint32("cache_write_tokens", t.cacheWriteTokens);
    n += 2 + varintSize(t.cacheWriteTokens);
  }
  if (t.tokensEstimated) n += 3;
  if (t.costUsd != 0) n += 10;
  if (t.inputCost != 0) n += 10;
  if (t.outputCost != 0) n += 10;
  if (t.pricePerMillionInput != 0) n += 10;
  if (t.pricePerMillionOutput != 0) n += 10;
  if (t.priceVersion !== "") n += strField(2, t.priceVersion);
  if (t.priceMissing) n += 3;
  if (t.latencyMs != 0) n += 10;
  if (t.providerMs != 0) n += 10;
  if (t.overheadMs != 0) n += 10;
  for (const m of t.spans) n += msgField(2, spanSize(m));
  if (t.injectionScore != 0) n += 10;
  if (t.piiScanEnabled) n += 3;
  for (const m of t.piiDetections) n += msgField(2, piiSize(m));
  for (const m of t.policyEvaluations) n += msgField(2, evalSize(m));
  for (const s of t.policiesFired) n += strField(2, s);
  if (t.policiesEvaluated != 0) {
    checkUint32("policies_evaluated", t.policiesEvaluated);
    n += 2 + varintSize(t.policiesEvaluated);
  }
  if (t.policiesBlocked != 0) {
    checkUint32("policies_blocked", t.policiesBlocked);
    n += 2 + varintSize(t.policiesBlocked);
  }
  for (const m of t.qualityScores) n += msgField(2, qualitySize(m));
  for (const m of t.toolCalls) n += msgField(2, toolCallSize(m));
  if (t.prompt !== "") n += strField(2, t.prompt);
  if (t.completion !== "") n += strField(2, t.completion);
  if (t.streamed) n += 3;
  if (t.inputExtras !== "") n += strField(2, t.inputExtras);
  n += unknownSize((t as WithUnknown).$unknown);
  return n;
}

// ---- write pass ----

const EMPTY = Buffer.alloc(0);
let buf: Buffer = EMPTY;
let pos = 0;

function varint(v: number): void {
  if (v < 0) {
    // Negative int32: sign-extended to 64 bits, 10 bytes.
    for (let i = 0; i < 9; i++) {
      buf[pos++] = (v & 0x7f) | 0x80;
      v >>= 7;
    }
    buf[pos++] = 1;
    return;
  }
  if (v < 0x80000000) {
    while (v > 0x7f) {
      buf[pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    buf[pos++] = v;
    return;
  }
  while (v > 0x7f) {
    buf[pos++] = (v % 0x80) | 0x80;
    v = Math.floor(v / 0x80);
  }
  buf[pos++] = v;
}

function bigVarint(u: bigint): void {
  while (u > 0x7fn) {
    buf[pos++] = Number(u & 0x7fn) | 0x80;
    u >>= 7n;
  }
  buf[pos++] = Number(u);
}

/** Writes a precomputed tag (1 or 2 bytes). */
function writeTag(t: number): void {
  if (t < 0x80) buf[pos++] = t;
  else {
    buf[pos++] = (t & 0x7f) | 0x80;
    buf[pos++] = t >>> 7;
  }
}

function str(t: number, s: string): void {
  writeTag(t);
  const n = lens[li++]!;
  varint(n);
  if (s.length > SHORT_STRING) {
    pos += buf.write(s, pos, n, "utf8");
    return;
  }
  const len = s.length;
  for (let i = 0; i < len; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      buf[pos++] = c;
      continue;
    }
    if (c < 0x800) {
      buf[pos++] = 0xc0 | (c >> 6);
      buf[pos++] = 0x80 | (c & 0x3f);
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const d = c <= 0xdbff && i + 1 < len ? s.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) {
        i++;
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        buf[pos++] = 0xf0 | (c >> 18);
        buf[pos++] = 0x80 | ((c >> 12) & 0x3f);
        buf[pos++] = 0x80 | ((c >> 6) & 0x3f);
        buf[pos++] = 0x80 | (c & 0x3f);
        continue;
      }
      c = 0xfffd; // lone surrogate
    }
    buf[pos++] = 0xe0 | (c >> 12);
    buf[pos++] = 0x80 | ((c >> 6) & 0x3f);
    buf[pos++] = 0x80 | (c & 0x3f);
  }
}

function dbl(t: number, v: number): void {
  writeTag(t);
  buf.writeDoubleLE(v, pos);
  pos += 8;
}

function u32(t: number, v: number): void {
  writeTag(t);
  varint(v);
}

function bool(t: number): void {
  writeTag(t);
  buf[pos++] = 1;
}

function unknown(u: Unknown[] | undefined): void {
  if (u === undefined) return;
  for (const f of u) {
    varint(tag(f.no, f.wireType));
    buf.set(f.data, pos);
    pos += f.data.byteLength;
  }
}

function msgHeader(t: number): void {
  writeTag(t);
  varint(lens[li++]!);
}

const T1 = tag(1, LEN), T2 = tag(2, LEN), T3 = tag(3, LEN), T4 = tag(4, LEN);

function writeSpan(m: Span): void {
  if (m.stage !== "") str(T1, m.stage);
  if (m.durationMs != 0) dbl(tag(2, I64), m.durationMs);
  unknown((m as WithUnknown).$unknown);
}

function writePii(m: PiiDetection): void {
  if (m.entityType !== "") str(T1, m.entityType);
  if (m.start != 0) u32(tag(2, VARINT), m.start);
  if (m.end != 0) u32(tag(3, VARINT), m.end);
  if (m.source !== "") str(T4, m.source);
  if (m.score != 0) dbl(tag(5, I64), m.score);
  unknown((m as WithUnknown).$unknown);
}

function writeEval(m: PolicyEvaluation): void {
  if (m.policyId !== "") str(T1, m.policyId);
  if (m.policyName !== "") str(T2, m.policyName);
  if (m.result !== "") str(T3, m.result);
  if (m.actionTaken !== "") str(T4, m.actionTaken);
  unknown((m as WithUnknown).$unknown);
}

function writeQuality(m: QualityScore): void {
  if (m.scorer !== "") str(T1, m.scorer);
  if (m.score != 0) dbl(tag(2, I64), m.score);
  unknown((m as WithUnknown).$unknown);
}

function writeToolCall(m: ToolCall): void {
  if (m.name !== "") str(T1, m.name);
  if (m.id !== "") str(T2, m.id);
  unknown((m as WithUnknown).$unknown);
}

function writeTrace(t: Trace, ts: bigint): void {
  if (t.id !== "") str(T1, t.id);
  if (t.tenantId !== "") str(T2, t.tenantId);
  if (t.agentId !== "") str(T3, t.agentId);
  if (t.agentName !== "") str(T4, t.agentName);
  if (t.environment !== "") str(tag(5, LEN), t.environment);
  if (t.sessionId !== undefined) str(tag(6, LEN), t.sessionId);
  if (t.provider !== "") str(tag(7, LEN), t.provider);
  if (t.model !== "") str(tag(8, LEN), t.model);
  if (t.status !== "") str(tag(9, LEN), t.status);
  if (ts !== 0n) {
    writeTag(tag(10, VARINT));
    if (ts < 0x20000000000000n) varint(Number(ts));
    else bigVarint(ts);
  }
  if (t.requestId !== "") str(tag(11, LEN), t.requestId);
  if (t.httpStatus != 0) u32(tag(12, VARINT), t.httpStatus);
  if (t.errorCode !== "") str(tag(13, LEN), t.errorCode);
  if (t.keyId !== "") str(tag(14, LEN), t.keyId);
  if (t.inputTokens != 0) u32(tag(20, VARINT), t.inputTokens);
  if (t.outputTokens != 0) u32(tag(21, VARINT), t.outputTokens);
  if (t.cachedInputTokens != 0) u32(tag(22, VARINT), t.cachedInputTokens);
  if (t.cacheWriteTokens != 0) u32(tag(23, VARINT), t.cacheWriteTokens);
  if (t.tokensEstimated) bool(tag(24, VARINT));
  if (t.costUsd != 0) dbl(tag(30, I64), t.costUsd);
  if (t.inputCost != 0) dbl(tag(31, I64), t.inputCost);
  if (t.outputCost != 0) dbl(tag(32, I64), t.outputCost);
  if (t.pricePerMillionInput != 0) dbl(tag(33, I64), t.pricePerMillionInput);
  if (t.pricePerMillionOutput != 0) dbl(tag(34, I64), t.pricePerMillionOutput);
  if (t.priceVersion !== "") str(tag(35, LEN), t.priceVersion);
  if (t.priceMissing) bool(tag(36, VARINT));
  if (t.latencyMs != 0) dbl(tag(40, I64), t.latencyMs);
  if (t.providerMs != 0) dbl(tag(41, I64), t.providerMs);
  if (t.overheadMs != 0) dbl(tag(42, I64), t.overheadMs);
  for (const m of t.spans) {
    msgHeader(tag(43, LEN));
    writeSpan(m);
  }
  if (t.injectionScore != 0) dbl(tag(50, I64), t.injectionScore);
  if (t.piiScanEnabled) bool(tag(51, VARINT));
  for (const m of t.piiDetections) {
    msgHeader(tag(52, LEN));
    writePii(m);
  }
  for (const m of t.policyEvaluations) {
    msgHeader(tag(53, LEN));
    writeEval(m);
  }
  for (const s of t.policiesFired) str(tag(54, LEN), s);
  if (t.policiesEvaluated != 0) u32(tag(55, VARINT), t.policiesEvaluated);
  if (t.policiesBlocked != 0) u32(tag(56, VARINT), t.policiesBlocked);
  for (const m of t.qualityScores) {
    msgHeader(tag(57, LEN));
    writeQuality(m);
  }
  for (const m of t.toolCalls) {
    msgHeader(tag(58, LEN));
    writeToolCall(m);
  }
  if (t.prompt !== "") str(tag(60, LEN), t.prompt);
  if (t.completion !== "") str(tag(61, LEN), t.completion);
  if (t.streamed) bool(tag(62, VARINT));
  if (t.inputExtras !== "") str(tag(63, LEN), t.inputExtras);
  unknown((t as WithUnknown).$unknown);
}

/**
 * Encodes `t` as toBinary(TraceSchema, t) would. The returned Buffer has `headroom` unused bytes
 * before the message (for a record header written by the caller), so the message is
 * `out.subarray(headroom)`. Throws TraceEncodingError when a field holds a value its type cannot
 * encode (as toBinary throws).
 */
export function encodeTrace(t: Trace, headroom = 0): Buffer {
  // timestamp_ms: int64 from a bigint (a number or numeric string is accepted, as protobuf-es does).
  const raw: unknown = t.timestampMs;
  let ts: bigint;
  try {
    ts = int64Bits("timestamp_ms", typeof raw === "bigint" ? raw : BigInt(raw as string | number));
  } catch (e) {
    if (e instanceof TraceEncodingError) throw e;
    throw new TraceEncodingError("timestamp_ms", raw);
  }
  li = 0;
  const size = traceSize(t, ts);
  // A buffer of its own, not a slice of Node's shared 8 KiB pool (Buffer.allocUnsafe): the spool keeps a
  // trace's record until the control plane acknowledges it (~110 ms at 1,000 rps), and a pooled record
  // kept the whole slab — the request's other, short-lived buffers with it — alive across a minor GC,
  // which left ~6 KB of ArrayBuffer per request to the old generation. Those ~6 MB/s started a full GC
  // ("external memory pressure") every ~15 s, each stalling the proxy 25–35 ms. docs/decisions.md.
  const out = Buffer.allocUnsafeSlow(headroom + size);
  buf = out;
  pos = headroom;
  li = 0;
  try {
    writeTrace(t, ts);
  } finally {
    buf = EMPTY;
    if (lens.length > 4096) lens = [];
  }
  if (pos !== headroom + size) throw new TraceEncoderBugError(size, pos - headroom);
  return out;
}
