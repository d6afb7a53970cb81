// The spool's on-disk record framing: MAGIC (4 bytes) | payload length (u32 LE) | CRC-32 of the payload
// (u32 LE) | payload. The magic says what the payload is: a trace (RECORD_MAGIC: an encoded
// governance.v1.Trace), or an amendment of a trace written before it (AMENDMENT_MAGIC: an encoded Trace
// holding the id and the fields to add, see amendmentParts). A scan returns the good records and the
// byte ranges that are not good records (torn tail, flipped bits, garbage); after a bad range it
// resynchronises on the next magic whose record checks out, so one damaged record does not hide the
// good records after it.
import { crc32 } from "node:zlib";

export const RECORD_MAGIC = 0x5a_47_53_31; // "1SGZ" little-endian on disk; any fixed non-zero value works
export const AMENDMENT_MAGIC = 0x5a_47_53_41; // "ASGZ"
export type RecordKind = "trace" | "amendment";
export const HEADER_BYTES = 12;
/** Larger than any trace the proxy can build (10 MiB body limit, prompt + completion + metadata). */
export const MAX_PAYLOAD_BYTES = 64 * 1024 * 1024;

/**
 * The parts joined into a buffer of its own: Buffer.concat and Buffer.from slice small results out of
 * Node's shared pool, and bytes the spool keeps until an acknowledgement must not hold a pool slab
 * (encodeTrace says why).
 */
export function concatOwn(parts: readonly Uint8Array[]): Buffer {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = Buffer.allocUnsafeSlow(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function encodeRecord(payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  out.writeUInt32LE(RECORD_MAGIC, 0);
  out.writeUInt32LE(payload.length, 4);
  out.writeUInt32LE(crc32(payload), 8);
  out.set(payload, HEADER_BYTES);
  return out;
}

/**
 * Frames a payload that was encoded in place after HEADER_BYTES of headroom (encodeTrace(t, HEADER_BYTES)):
 * writes the header into the headroom, so the payload is not copied. Same bytes as encodeRecord(payload).
 */
export function sealRecord(out: Buffer, kind: RecordKind = "trace"): Buffer {
  const payload = out.subarray(HEADER_BYTES);
  out.writeUInt32LE(kind === "trace" ? RECORD_MAGIC : AMENDMENT_MAGIC, 0);
  out.writeUInt32LE(payload.length, 4);
  out.writeUInt32LE(crc32(payload), 8);
  return out;
}

export interface GoodRecord {
  /** Offset of the record header in the buffer. */
  offset: number;
  /** Whole record length (header + payload). */
  length: number;
  kind: RecordKind;
  payload: Buffer;
}

export interface BadRange {
  start: number;
  end: number;
}

function recordAt(buf: Buffer, at: number): GoodRecord | undefined {
  if (at + HEADER_BYTES > buf.length) return undefined;
  const magic = buf.readUInt32LE(at);
  if (magic !== RECORD_MAGIC && magic !== AMENDMENT_MAGIC) return undefined;
  const len = buf.readUInt32LE(at + 4);
  if (len > MAX_PAYLOAD_BYTES || at + HEADER_BYTES + len > buf.length) return undefined;
  const payload = buf.subarray(at + HEADER_BYTES, at + HEADER_BYTES + len);
  if (crc32(payload) !== buf.readUInt32LE(at + 8)) return undefined;
  return { offset: at, length: HEADER_BYTES + len, kind: magic === RECORD_MAGIC ? "trace" : "amendment", payload };
}

/** The three bytes after a magic's first byte, the same in both magics ("SGZ"): where a record may start. */
const MAGIC_TAIL = Buffer.from([0x53, 0x47, 0x5a]);

/** Splits a segment's bytes into good records and bad ranges (in file order). */
export function scanRecords(buf: Buffer): { records: GoodRecord[]; bad: BadRange[] } {
  const records: GoodRecord[] = [];
  const bad: BadRange[] = [];
  let at = 0;
  while (at < buf.length) {
    const r = recordAt(buf, at);
    if (r) {
      records.push(r);
      at += r.length;
      continue;
    }
    // Resynchronise: the next magic after `at` that starts a record which checks out.
    let next = -1;
    for (let tail = buf.indexOf(MAGIC_TAIL, at + 2); tail >= 0; tail = buf.indexOf(MAGIC_TAIL, tail + 1)) {
      if (recordAt(buf, tail - 1)) {
        next = tail - 1;
        break;
      }
    }
    const end = next < 0 ? buf.length : next;
    bad.push({ start: at, end });
    at = end;
  }
  return { records, bad };
}

/** Decodes a trace record read back on its own (a positional read of `length` bytes); undefined when it does not check out. */
export function decodeRecord(buf: Buffer): Buffer | undefined {
  const r = recordAt(buf, 0);
  return r && r.kind === "trace" && r.length === buf.length ? r.payload : undefined;
}

/**
 * Walks the top-level fields of an encoded protobuf message without decoding it: `visit` gets each
 * field's number, wire type and value (a varint's number, or the offset of a LEN field's bytes / a
 * fixed64's or fixed32's bytes, with the LEN length) and returns true to stop. False when the bytes
 * do not parse (truncated, unknown wire type).
 */
export function walkFields(bytes: Uint8Array, visit: (field: number, wire: number, value: number, length: number) => boolean): boolean {
  let at = 0;
  const varint = (): number => {
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (at >= bytes.length) throw new RangeError("truncated varint");
      const b = bytes[at++]!;
      result += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) return result;
      mul *= 128;
    }
    throw new RangeError("varint too long");
  };
  try {
    while (at < bytes.length) {
      const tag = varint();
      const field = Math.floor(tag / 8);
      const wire = tag & 7;
      let stop: boolean;
      if (wire === 0) stop = visit(field, wire, varint(), 0);
      else if (wire === 2) {
        const len = varint();
        if (at + len > bytes.length) return false;
        stop = visit(field, wire, at, len);
        at += len;
      } else if (wire === 1 || wire === 5) {
        const len = wire === 1 ? 8 : 4;
        if (at + len > bytes.length) return false;
        stop = visit(field, wire, at, len);
        at += len;
      } else return false;
      if (stop) return true;
    }
  } catch {
    return false;
  }
  return true;
}

/**
 * Reads the trace id (field 1) and timestamp_ms (field 10) from an encoded governance.v1.Trace without
 * decoding the whole message (replay of a large spool only needs these two).
 */
export function traceKeyFields(bytes: Uint8Array): { id: string; timestampMs: number } | undefined {
  let id: string | undefined;
  let ts = 0;
  const ok = walkFields(bytes, (field, wire, value, length) => {
    if (field === 10 && wire === 0) ts = value;
    else if (field === 1 && wire === 2) id = Buffer.from(bytes.buffer, bytes.byteOffset + value, length).toString("utf8");
    return id !== undefined && ts !== 0;
  });
  return ok && id !== undefined ? { id, timestampMs: ts } : undefined;
}

/**
 * Splits an amendment's payload — an encoded Trace whose first field is the id (field 1) of the trace it
 * amends, then the fields to add — into that id and the fields' bytes, which appended to the trace's
 * encoding give the amended trace (protobuf concatenates repeated fields). Undefined when it does not
 * start with an id.
 */
export function amendmentParts(payload: Uint8Array): { id: string; fields: Uint8Array } | undefined {
  let parts: { id: string; fields: Uint8Array } | undefined;
  walkFields(payload, (field, wire, value, length) => {
    if (field === 1 && wire === 2) {
      parts = { id: Buffer.from(payload.buffer, payload.byteOffset + value, length).toString("utf8"), fields: payload.subarray(value + length) };
    }
    return true; // only the first field is read
  });
  return parts;
}
