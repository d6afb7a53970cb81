// A text that only grows at its end (a streamed answer's channel), kept in blocks so that reading part
// of it costs what that part is long, however long the text. A string grown with `+=` is a rope that V8
// copies whole (flattens) the first time it is read after each append: a stream governor reading a few
// hundred characters at the end of a 1 MB answer after every delta would copy the answer once per
// delta. Here only the last block (at most BLOCK characters plus the latest append) is copied again.
// Offsets into it convert through text-offsets.ts, whose index of it grows with it.
import type { OffsetIndex } from "./text-offsets.js";

/** Characters after which a block is sealed (never appended to again). */
const BLOCK = 4096;

export class GrowingText {
  /** The text in order; every block but the last is sealed. */
  private readonly blocks: string[] = [""];
  /** Where each block starts in the text. */
  private readonly starts: number[] = [0];
  private size = 0;
  /** Its offset index, made and extended by text-offsets.ts: kept with the text, which only grows. */
  offsets: OffsetIndex | undefined;

  constructor(text = "") {
    this.append(text);
  }

  get length(): number {
    return this.size;
  }

  append(more: string): void {
    if (more === "") return;
    const last = this.blocks.length - 1;
    const block = this.blocks[last]! + more;
    this.blocks[last] = block;
    this.size += more.length;
    if (block.length >= BLOCK) {
      this.blocks.push("");
      this.starts.push(this.size);
    }
  }

  /** As String.prototype.slice, in time proportional to the slice's length (plus log of the text's). */
  slice(start?: number, end?: number): string {
    const from = position(start, this.size, 0);
    const to = position(end, this.size, this.size);
    let out = "";
    for (let i = this.blockAt(from); from < to && i < this.blocks.length && this.starts[i]! < to; i++) {
      const at = this.starts[i]!;
      out += this.blocks[i]!.slice(Math.max(0, from - at), to - at);
    }
    return out;
  }

  /** As String.prototype.indexOf: a search of the whole text (copied into one string). */
  indexOf(search: string): number {
    return this.toString().indexOf(search);
  }

  toString(): string {
    return this.blocks.join("");
  }

  /** The last block that starts at or before `offset`. */
  private blockAt(offset: number): number {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}

/** A slice() argument as String.prototype.slice reads it: truncated, from the end when negative, clamped. */
function position(x: number | undefined, length: number, fallback: number): number {
  if (x === undefined) return fallback;
  const n = Math.trunc(x) || 0;
  return n < 0 ? Math.max(0, length + n) : Math.min(n, length);
}
