// Trace ids on the hot path: `trc_` + a monotonic ULID (48-bit ms time, 80 random bits, Crockford
// base32), as the ulid package makes them, but drawing randomness from a pooled crypto buffer: the
// package calls crypto.randomBytes once per character (~34 µs per id in a new millisecond).
import { randomFillSync } from "node:crypto";

const ENCODING = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let poolAt = POOL_BYTES;

/** The 16 random base32 digits of the last id, and its time. */
const digits = new Uint8Array(16);
let lastMs = -1;

function refillDigits(): void {
  if (poolAt + 16 > POOL_BYTES) {
    randomFillSync(pool);
    poolAt = 0;
  }
  for (let i = 0; i < 16; i++) digits[i] = pool[poolAt++]! & 31; // 256 is a multiple of 32: uniform
}

/** +1 on the random part (ids made in the same millisecond stay ordered). */
function increment(): void {
  for (let i = 15; i >= 0; i--) {
    if (digits[i]! < 31) {
      digits[i]!++;
      return;
    }
    digits[i] = 0;
  }
}

/** A new trace id for a request received at `nowMs`; ids increase strictly within the process. */
export function newTraceId(nowMs: number): string {
  let ms = Math.floor(nowMs);
  if (ms > lastMs) {
    lastMs = ms;
    refillDigits();
  } else {
    ms = lastMs; // same millisecond or a clock step back: keep ordering
    increment();
  }
  let time = "";
  for (let i = 0, t = ms; i < 10; i++, t = Math.floor(t / 32)) time = ENCODING[t % 32]! + time;
  let rand = "";
  for (let i = 0; i < 16; i++) rand += ENCODING[digits[i]!]!;
  return `trc_${time}${rand}`;
}
