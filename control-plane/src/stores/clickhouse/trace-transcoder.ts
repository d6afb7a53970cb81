// Turns one encoded Trace (protobuf binary, exactly as the sidecar spooled and shipped it) into a
// TabSeparated row of `traces`, plus the few fields ingest itself needs (TraceFacts), without
// building a Trace object. TabSeparated because both engines read it (Debian's 18.16 and chDB,
// whose insert API takes text formats only) and it is the cheapest text format to write and parse.
//
// Written by hand because this is the ingest hot path: decoding each trace into objects with
// @bufbuild/protobuf and rendering them as JSON cost ~35 µs per trace plus the garbage they left,
// which capped ingest well below its target. Here string bytes go from the protobuf buffer to the
// row buffer with only TSV escaping (which is ASCII-only, so it is safe on UTF-8 bytes).
//
// The rows equal what row-codec.ts's traceToRow stores for the decoded Trace (trace-transcoder.test.ts
// checks this on both engines): strings decode like @bufbuild/protobuf (invalid UTF-8 → U+FFFD),
// absent fields are proto3 defaults, non-finite numbers are stored as 0, nested repeated messages
// become parallel arrays.

import { budgetCharge } from "@agentgov/data-plane/budget-charge";
import { maskSpans } from "@agentgov/data-plane/pii-mask";
import { isAscii, isUtf8 } from "node:buffer";
import { TraceStoreError } from "./errors.js";
import { INPUT_EXTRAS_SOURCES } from "./row-codec.js";
import { MAX_MS, MIN_MS } from "./time.js";

/** What ingest checks and counts about a trace, read while transcoding. */
export interface TraceFacts {
  id: string;
  tenantId: string;
  agentId: string;
  status: string;
  timestampMs: number;
  keyId: string;
  costUsd: number;
  /** What the call takes from its agent's daily budget (data-plane budgetCharge: the cost, or an unpriced model's tokens at the provider's ceiling). */
  budgetCharge: number;
  toolNames: string[];
}

export interface TranscodedTrace {
  facts: TraceFacts;
  /** One TabSeparated row of TRANSCODED_COLUMNS, newline-terminated. */
  row: Buffer;
  /** Names of numeric fields that were NaN/±Infinity and are stored as 0 (usually empty). */
  nonFinite: string[];
}

/** The columns of a transcoded row, in order (every column of `traces`; see schema.ts). */
export const TRANSCODED_COLUMNS: readonly string[] = [
  "tenant_id", "id", "ts", "timestamp_ms", "agent_id", "agent_name", "environment", "session_id", "provider", "model",
  "status", "request_id", "http_status", "error_code", "input_tokens", "output_tokens", "cached_input_tokens",
  "cache_write_tokens", "tokens_estimated", "cost_usd", "input_cost", "output_cost", "price_per_million_input",
  "price_per_million_output", "price_version", "price_missing", "latency_ms", "provider_ms", "overhead_ms", "span_stages",
  "span_durations_ms", "injection_score", "pii_scan_enabled", "has_pii", "pii_entity_types", "pii_starts", "pii_ends",
  "pii_sources", "pii_scores", "policy_ids", "policy_names", "policy_results", "policy_actions", "policies_fired",
  "policies_evaluated", "policies_blocked", "quality_scorers", "quality_scores", "tool_names", "tool_ids", "prompt",
  "completion", "input_extras", "streamed", "version",
];

// Trace field numbers (proto/governance/v1/trace.proto).
const F = {
  id: 1, tenantId: 2, agentId: 3, agentName: 4, environment: 5, sessionId: 6, provider: 7, model: 8, status: 9,
  timestampMs: 10, requestId: 11, httpStatus: 12, errorCode: 13, keyId: 14,
  inputTokens: 20, outputTokens: 21, cachedInputTokens: 22, cacheWriteTokens: 23, tokensEstimated: 24,
  costUsd: 30, inputCost: 31, outputCost: 32, pricePerMillionInput: 33, pricePerMillionOutput: 34, priceVersion: 35,
  priceMissing: 36, latencyMs: 40, providerMs: 41, overheadMs: 42, spans: 43, injectionScore: 50, piiScanEnabled: 51,
  piiDetections: 52, policyEvaluations: 53, policiesFired: 54, policiesEvaluated: 55, policiesBlocked: 56,
  qualityScores: 57, toolCalls: 58, prompt: 60, completion: 61, streamed: 62, inputExtras: 63,
} as const;
const MAX_FIELD = 63;

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LEN = 2;
const WIRE_FIXED32 = 5;

/** Expected wire type of each known Trace field (-1: unknown field, skipped). */
const TRACE_WIRE = new Int8Array(MAX_FIELD + 1).fill(-1);
for (const f of [1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 13, 14, 35, 43, 52, 53, 54, 57, 58, 60, 61, 63]) TRACE_WIRE[f] = WIRE_LEN;
for (const f of [10, 12, 20, 21, 22, 23, 24, 36, 51, 55, 56, 62]) TRACE_WIRE[f] = WIRE_VARINT;
for (const f of [30, 31, 32, 33, 34, 40, 41, 42, 50]) TRACE_WIRE[f] = WIRE_FIXED64;

function malformed(what: string): TraceStoreError {
  return new TraceStoreError("invalid_argument", `malformed trace: ${what}`);
}

const utf8 = new TextDecoder(); // non-fatal: U+FFFD for invalid bytes, as @bufbuild/protobuf decodes

/**
 * A protobuf reader over one buffer. Kept as module state (the transcoder is synchronous and
 * re-entrant only through transcodeTrace, which resets it) so that no reader object is allocated
 * per trace.
 */
let buf: Buffer = Buffer.alloc(0);
let pos = 0;
let end = 0;
/** Low and high 32 bits of the last varint read. */
let vLo = 0;
let vHi = 0;

function readVarint(): void {
  let lo = 0;
  let hi = 0;
  let shift = 0;
  for (;;) {
    if (pos >= end) throw malformed("truncated varint");
    const b = buf[pos++]!;
    if (shift < 28) lo |= (b & 0x7f) << shift;
    else if (shift === 28) {
      lo |= (b & 0x0f) << 28;
      hi = (b & 0x7f) >> 4;
    } else if (shift < 64) hi |= (b & 0x7f) << (shift - 32);
    if ((b & 0x80) === 0) break;
    shift += 7;
    if (shift >= 70) throw malformed("varint longer than 10 bytes");
  }
  vLo = lo >>> 0;
  vHi = hi >>> 0;
}

/** Reads a length prefix and returns the end offset of the delimited bytes (pos is their start). */
function readLength(): number {
  readVarint();
  if (vHi !== 0 || vLo > end - pos) throw malformed("length beyond the end of the message");
  return pos + vLo;
}

function skipField(wire: number): void {
  switch (wire) {
    case WIRE_VARINT:
      readVarint();
      return;
    case WIRE_FIXED64:
      if (pos + 8 > end) throw malformed("truncated fixed64");
      pos += 8;
      return;
    case WIRE_LEN:
      pos = readLength();
      return;
    case WIRE_FIXED32:
      if (pos + 4 > end) throw malformed("truncated fixed32");
      pos += 4;
      return;
    default:
      throw malformed(`unsupported wire type ${wire}`);
  }
}

function readDouble(): number {
  if (pos + 8 > end) throw malformed("truncated double");
  const v = buf.readDoubleLE(pos);
  pos += 8;
  return v;
}

/** Parsed fields of the trace being transcoded (module scratch, reset per trace). */
const strStart = new Int32Array(MAX_FIELD + 1);
const strEnd = new Int32Array(MAX_FIELD + 1);
const nums = new Float64Array(MAX_FIELD + 1);
/** [start, end) pairs of each repeated length-delimited field, by field number. */
const repeated = new Map<number, number[]>([
  [F.spans, []],
  [F.piiDetections, []],
  [F.policyEvaluations, []],
  [F.policiesFired, []],
  [F.qualityScores, []],
  [F.toolCalls, []],
]);
const rep = (field: number): number[] => repeated.get(field)!;

/** Decodes string bytes [s, e) like @bufbuild/protobuf. */
function text(s: number, e: number): string {
  return s >= e ? "" : utf8.decode(buf.subarray(s, e));
}

// ---- output: one growing scratch buffer; each row is copied out at the end ----

let out = Buffer.allocUnsafe(64 * 1024);
let o = 0;

function room(n: number): void {
  if (o + n <= out.length) return;
  const bigger = Buffer.allocUnsafe(Math.max(out.length * 2, o + n));
  out.copy(bigger, 0, 0, o);
  out = bigger;
}

const TAB = 0x09;
const NL = 0x0a;
const BACKSLASH = 0x5c;
const QUOTE = 0x27;
const STAR = 0x2a;

function byte(b: number): void {
  room(1);
  out[o++] = b;
}

function ascii(s: string): void {
  room(s.length);
  for (let i = 0; i < s.length; i++) out[o++] = s.charCodeAt(i);
}

/**
 * Writes bytes [s, e) of `src` escaped for a TabSeparated field (`quoted`: inside '…' of an array
 * element). Only ASCII bytes are escaped; UTF-8 multi-byte sequences never contain ASCII bytes.
 * Returns whether a byte ≥ 0x80 was seen (the caller then checks the UTF-8).
 */
function escapedBytes(src: Uint8Array, s: number, e: number, quoted: boolean): boolean {
  room(2 * (e - s));
  let high = false;
  for (let i = s; i < e; i++) {
    const b = src[i]!;
    if (b >= 0x20 && b !== BACKSLASH && b !== QUOTE) {
      if (b >= 0x80) high = true;
      out[o++] = b;
      continue;
    }
    switch (b) {
      case BACKSLASH:
        out[o++] = BACKSLASH;
        out[o++] = BACKSLASH;
        break;
      case QUOTE:
        if (quoted) out[o++] = BACKSLASH;
        out[o++] = QUOTE;
        break;
      case TAB:
        out[o++] = BACKSLASH;
        out[o++] = 0x74; // t
        break;
      case NL:
        out[o++] = BACKSLASH;
        out[o++] = 0x6e; // n
        break;
      case 0x0d:
        out[o++] = BACKSLASH;
        out[o++] = 0x72; // r
        break;
      case 0x00:
        out[o++] = BACKSLASH;
        out[o++] = 0x30; // 0
        break;
      default:
        out[o++] = b; // other control bytes are literal in both TSV and quoted strings
    }
  }
  return high;
}

/** A string field's bytes [s, e) of the trace buffer, escaped; invalid UTF-8 is stored as protobuf decodes it. */
function str(s: number, e: number, quoted: boolean): void {
  if (s >= e) return;
  const mark = o;
  if (escapedBytes(buf, s, e, quoted) && !isUtf8(buf.subarray(s, e))) {
    o = mark;
    const fixed = Buffer.from(utf8.decode(buf.subarray(s, e)), "utf8");
    escapedBytes(fixed, 0, fixed.length, quoted);
  }
}

function field(s: number, e: number): void {
  str(s, e, false);
  byte(TAB);
}

function int(v: number): void {
  ascii(String(v));
  byte(TAB);
}

let nonFinite: string[] = [];

function finite(v: number, name: string): number {
  if (Number.isFinite(v)) return v;
  nonFinite.push(name);
  return 0;
}

function dbl(v: number, name: string): void {
  ascii(String(finite(v, name)));
  byte(TAB);
}

/** 'YYYY-MM-DD hh:mm:ss' of the last second formatted (traces of one batch share seconds). */
let lastSecond = -1;
let lastSecondText = "";

function dateTime(ms: number): void {
  const second = Math.floor(ms / 1000);
  if (second !== lastSecond) {
    const iso = new Date(second * 1000).toISOString();
    lastSecondText = `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
    lastSecond = second;
  }
  ascii(lastSecondText);
  byte(TAB);
}

// ---- nested messages: each repeated element is parsed into these per-element slots ----

/** Field values of one nested message: string [start, end) and numbers, by field number (≤ 5). */
const subStart = new Int32Array(6);
const subEnd = new Int32Array(6);
const subNum = new Float64Array(6);

function parseNested(s: number, e: number, strings: number, doubles: number, uints: number): void {
  subStart.fill(0);
  subEnd.fill(0);
  subNum.fill(0);
  const saveEnd = end;
  pos = s;
  end = e;
  while (pos < end) {
    readVarint();
    const tag = vLo;
    const no = tag >>> 3;
    const wire = tag & 7;
    const bit = no < 6 ? 1 << no : 0;
    if (bit & strings && wire === WIRE_LEN) {
      const stop = readLength();
      subStart[no] = pos;
      subEnd[no] = stop;
      pos = stop;
    } else if (bit & doubles && wire === WIRE_FIXED64) subNum[no] = readDouble();
    else if (bit & uints && wire === WIRE_VARINT) {
      readVarint();
      subNum[no] = vLo;
    } else if (bit & (strings | doubles | uints)) throw malformed(`wrong wire type for a nested field ${no}`);
    else skipField(wire);
  }
  pos = e;
  end = saveEnd;
}

const bits = (...fields: number[]): number => fields.reduce((m, f) => m | (1 << f), 0);

/** Writes `[e1,e2,…]` of one part of each element of a repeated message field. */
function array(
  field: number,
  spec: { strings: number; doubles: number; uints: number },
  write: (first: boolean) => void,
): void {
  const ranges = rep(field);
  byte(0x5b); // [
  for (let i = 0; i < ranges.length; i += 2) {
    parseNested(ranges[i]!, ranges[i + 1]!, spec.strings, spec.doubles, spec.uints);
    write(i === 0);
  }
  byte(0x5d); // ]
  byte(TAB);
}

function quotedElement(first: boolean, no: number): void {
  if (!first) byte(0x2c);
  byte(QUOTE);
  str(subStart[no]!, subEnd[no]!, true);
  byte(QUOTE);
}

function numberElement(first: boolean, v: number): void {
  if (!first) byte(0x2c);
  ascii(String(v));
}

/**
 * Writes the prompt, completion or input_extras field with the trace's PII detections that point into
 * it (`sources`: the detections' sources for that text) replaced by `*` of the same length (offsets
 * stay valid), whatever the sidecar sent: traces never keep detected PII in clear unless the control
 * plane's TRACE_STORE_RAW_PII allows it. An ASCII text whose spans are already stars (the sidecar's
 * default) is written as it came, without decoding: in ASCII, UTF-16 offsets are byte offsets.
 */
function maskedField(no: number, sources: ReadonlySet<string>): void {
  const ranges = rep(F.piiDetections);
  let spans: { entityType: string; start: number; end: number }[] | undefined;
  for (let i = 0; i < ranges.length; i += 2) {
    parseNested(ranges[i]!, ranges[i + 1]!, PII.strings, PII.doubles, PII.uints);
    if (sources.has(text(subStart[4]!, subEnd[4]!))) (spans ??= []).push({ entityType: "", start: subNum[2]!, end: subNum[3]! }); // stars need no type
  }
  if (!spans) return field(strStart[no]!, strEnd[no]!);
  if (starredAscii(strStart[no]!, strEnd[no]!, spans)) return field(strStart[no]!, strEnd[no]!);
  const original = text(strStart[no]!, strEnd[no]!);
  const masked = maskSpans(original, spans, "star");
  if (masked === original) return field(strStart[no]!, strEnd[no]!);
  const bytes = Buffer.from(masked, "utf8");
  escapedBytes(bytes, 0, bytes.length, false);
  byte(TAB);
}

/** Whether bytes [s, e) are ASCII and every span's characters within them are already `*`. */
function starredAscii(s: number, e: number, spans: readonly { start: number; end: number }[]): boolean {
  if (!isAscii(buf.subarray(s, e))) return false;
  for (const span of spans) {
    const from = s + Math.max(0, span.start);
    const to = Math.min(e, s + span.end);
    for (let i = from; i < to; i++) if (buf[i] !== STAR) return false;
  }
  return true;
}

const PROMPT_SOURCES: ReadonlySet<string> = new Set(["prompt"]);
const COMPLETION_SOURCES: ReadonlySet<string> = new Set(["completion"]);

const SPAN = { strings: bits(1), doubles: bits(2), uints: 0 };
const PII = { strings: bits(1, 4), doubles: bits(5), uints: bits(2, 3) };
const POLICY = { strings: bits(1, 2, 3, 4), doubles: 0, uints: 0 };
const QUALITY = { strings: bits(1), doubles: bits(2), uints: 0 };
const TOOL = { strings: bits(1, 2), doubles: 0, uints: 0 };

/**
 * Transcodes one encoded Trace. `version` is the row version (ReplacingMergeTree: the highest
 * wins). Throws TraceStoreError invalid_argument for bytes that are not a Trace, or a trace the
 * store cannot hold (no id or tenant, timestamp out of range).
 */
export function transcodeTrace(bytes: Uint8Array, version: number, storeRawPii = false): TranscodedTrace {
  buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  pos = 0;
  end = buf.length;
  o = 0;
  nonFinite = [];
  strStart.fill(0);
  strEnd.fill(0);
  nums.fill(0);
  for (const r of repeated.values()) r.length = 0;
  let hasSession = false;
  let tsLo = 0;
  let tsHi = 0;

  while (pos < end) {
    readVarint();
    const no = vLo >>> 3;
    const wire = vLo & 7;
    if (vHi !== 0 || no === 0) throw malformed("invalid field tag");
    const expected = no <= MAX_FIELD ? TRACE_WIRE[no]! : -1;
    if (expected === -1) {
      skipField(wire);
      continue;
    }
    if (wire !== expected) throw malformed(`field ${no} has wire type ${wire}, expected ${expected}`);
    if (wire === WIRE_LEN) {
      const stop = readLength();
      const list = repeated.get(no);
      if (list) list.push(pos, stop);
      else {
        strStart[no] = pos;
        strEnd[no] = stop;
        if (no === F.sessionId) hasSession = true;
      }
      pos = stop;
    } else if (wire === WIRE_FIXED64) nums[no] = readDouble();
    else {
      readVarint();
      if (no === F.timestampMs) {
        tsLo = vLo;
        tsHi = vHi;
      } else if (no === F.httpStatus) nums[no] = vLo | 0;
      else if (no === F.tokensEstimated || no === F.priceMissing || no === F.piiScanEnabled || no === F.streamed) {
        nums[no] = vLo !== 0 || vHi !== 0 ? 1 : 0;
      } else nums[no] = vLo; // uint32 fields: the low 32 bits, as protobuf reads them
    }
  }

  const id = text(strStart[F.id]!, strEnd[F.id]!);
  const tenantId = text(strStart[F.tenantId]!, strEnd[F.tenantId]!);
  if (!tenantId) throw new TraceStoreError("invalid_argument", "trace without tenant_id");
  if (!id) throw new TraceStoreError("invalid_argument", "trace without id");
  // int64: negative values have the top bit set; anything ≥ 2^53 is out of range anyway.
  const ms = tsHi >= 0x200000 ? Number.NaN : tsHi * 0x1_0000_0000 + tsLo;
  if (!Number.isSafeInteger(ms) || ms < MIN_MS || ms > MAX_MS) {
    throw new TraceStoreError("invalid_argument", "timestamp_ms out of range");
  }

  const toolNames: string[] = [];
  const tools = rep(F.toolCalls);
  for (let i = 0; i < tools.length; i += 2) {
    parseNested(tools[i]!, tools[i + 1]!, TOOL.strings, 0, 0);
    toolNames.push(text(subStart[1]!, subEnd[1]!));
  }
  const costUsd = finite(nums[F.costUsd]!, "cost_usd");
  const facts: TraceFacts = {
    id,
    tenantId,
    agentId: text(strStart[F.agentId]!, strEnd[F.agentId]!),
    status: text(strStart[F.status]!, strEnd[F.status]!),
    timestampMs: ms,
    keyId: text(strStart[F.keyId]!, strEnd[F.keyId]!),
    costUsd,
    budgetCharge: budgetCharge({
      provider: text(strStart[F.provider]!, strEnd[F.provider]!),
      costUsd,
      priceMissing: nums[F.priceMissing] === 1,
      inputTokens: nums[F.inputTokens]!,
      outputTokens: nums[F.outputTokens]!,
    }),
    toolNames,
  };

  const s = (no: number): void => field(strStart[no]!, strEnd[no]!);
  s(F.tenantId);
  s(F.id);
  dateTime(ms);
  int(ms);
  s(F.agentId);
  s(F.agentName);
  s(F.environment);
  if (hasSession) s(F.sessionId);
  else ascii("\\N\t");
  s(F.provider);
  s(F.model);
  s(F.status);
  s(F.requestId);
  int(nums[F.httpStatus]!);
  s(F.errorCode);
  int(nums[F.inputTokens]!);
  int(nums[F.outputTokens]!);
  int(nums[F.cachedInputTokens]!);
  int(nums[F.cacheWriteTokens]!);
  int(nums[F.tokensEstimated]!);
  ascii(String(costUsd));
  byte(TAB);
  dbl(nums[F.inputCost]!, "input_cost");
  dbl(nums[F.outputCost]!, "output_cost");
  dbl(nums[F.pricePerMillionInput]!, "price_per_million_input");
  dbl(nums[F.pricePerMillionOutput]!, "price_per_million_output");
  s(F.priceVersion);
  int(nums[F.priceMissing]!);
  dbl(nums[F.latencyMs]!, "latency_ms");
  dbl(nums[F.providerMs]!, "provider_ms");
  dbl(nums[F.overheadMs]!, "overhead_ms");
  array(F.spans, SPAN, (first) => quotedElement(first, 1));
  array(F.spans, SPAN, (first) => numberElement(first, finite(subNum[2]!, "spans.duration_ms")));
  dbl(nums[F.injectionScore]!, "injection_score");
  int(nums[F.piiScanEnabled]!);
  int(rep(F.piiDetections).length > 0 ? 1 : 0);
  array(F.piiDetections, PII, (first) => quotedElement(first, 1));
  array(F.piiDetections, PII, (first) => numberElement(first, subNum[2]!));
  array(F.piiDetections, PII, (first) => numberElement(first, subNum[3]!));
  array(F.piiDetections, PII, (first) => quotedElement(first, 4));
  array(F.piiDetections, PII, (first) => numberElement(first, finite(subNum[5]!, "pii_detections.score")));
  array(F.policyEvaluations, POLICY, (first) => quotedElement(first, 1));
  array(F.policyEvaluations, POLICY, (first) => quotedElement(first, 2));
  array(F.policyEvaluations, POLICY, (first) => quotedElement(first, 3));
  array(F.policyEvaluations, POLICY, (first) => quotedElement(first, 4));
  // policies_fired holds plain strings: each range is the string itself.
  const fired = rep(F.policiesFired);
  byte(0x5b);
  for (let i = 0; i < fired.length; i += 2) {
    if (i > 0) byte(0x2c);
    byte(QUOTE);
    str(fired[i]!, fired[i + 1]!, true);
    byte(QUOTE);
  }
  byte(0x5d);
  byte(TAB);
  int(nums[F.policiesEvaluated]!);
  int(nums[F.policiesBlocked]!);
  array(F.qualityScores, QUALITY, (first) => quotedElement(first, 1));
  array(F.qualityScores, QUALITY, (first) => numberElement(first, finite(subNum[2]!, "quality_scores.score")));
  array(F.toolCalls, TOOL, (first) => quotedElement(first, 1));
  array(F.toolCalls, TOOL, (first) => quotedElement(first, 2));
  if (storeRawPii) {
    s(F.prompt);
    s(F.completion);
    s(F.inputExtras);
  } else {
    maskedField(F.prompt, PROMPT_SOURCES);
    maskedField(F.completion, COMPLETION_SOURCES);
    maskedField(F.inputExtras, INPUT_EXTRAS_SOURCES);
  }
  int(nums[F.streamed]!);
  ascii(String(version));
  byte(NL);

  const row = Buffer.allocUnsafe(o);
  out.copy(row, 0, 0, o);
  return { facts, row, nonFinite };
}
