// Splits an SSE byte stream into whole events ("blocks": every line up to and including the blank line
// that ends the event), keeping each block's exact text so that an event the governor does not change
// is forwarded byte for byte. Line ends may be LF, CRLF or CR (WHATWG); a CR at the end of a chunk waits
// for the next chunk to know whether an LF follows.

export interface SseBlock {
  /** The block exactly as received, its terminating blank line included (absent for a cut last block). */
  raw: string;
  /** The block's lines without their terminators (the blank line excluded). */
  lines: string[];
  /** The `event:` field ("" when none). */
  event: string;
  /** The `data:` lines joined by "\n"; null when the block has no data line (comments, keep-alives). */
  data: string | null;
  /** Line terminator to use when the block is rebuilt. */
  eol: string;
}

function fieldOf(line: string): [string, string] {
  const colon = line.indexOf(":");
  if (colon < 0) return [line, ""];
  let value = line.slice(colon + 1);
  if (value.charCodeAt(0) === 32) value = value.slice(1);
  return [line.slice(0, colon), value];
}

function makeBlock(raw: string, lines: string[], eol: string): SseBlock {
  let event = "";
  let data: string[] | null = null;
  for (const line of lines) {
    if (line.charCodeAt(0) === 58 /* : */) continue;
    const [field, value] = fieldOf(line);
    if (field === "event") event = value;
    else if (field === "data") (data ??= []).push(value);
  }
  return { raw, lines, event, data: data === null ? null : data.join("\n"), eol };
}

/** The block with its data replaced by `data` (one `data:` line where the first one was; JSON has no raw newline). */
export function rebuildBlock(block: SseBlock, data: string): string {
  const out: string[] = [];
  let placed = false;
  for (const line of block.lines) {
    if (line.charCodeAt(0) !== 58 && fieldOf(line)[0] === "data") {
      if (!placed) out.push(`data: ${data}`);
      placed = true;
      continue;
    }
    out.push(line);
  }
  if (!placed) out.push(`data: ${data}`);
  return out.join(block.eol) + block.eol + block.eol;
}

/** A block made from scratch (a synthesized event), framed like `like`. */
export function newBlock(event: string, data: string, like: { eol: string }): string {
  const eol = like.eol;
  return (event ? `event: ${event}${eol}` : "") + `data: ${data}${eol}${eol}`;
}

export class SseBlockSplitter {
  private buf = "";
  /** Start of the current block in buf. */
  private blockStart = 0;
  /** Start of the current line in buf. */
  private lineStart = 0;
  /** Where scanning resumes in buf. */
  private scan = 0;
  private lines: string[] = [];
  private eol = "";

  /** Adds text; returns the blocks completed by it. */
  push(text: string): SseBlock[] {
    this.buf += text;
    const out: SseBlock[] = [];
    const b = this.buf;
    let i = this.scan;
    while (i < b.length) {
      const c = b.charCodeAt(i);
      if (c !== 10 && c !== 13) {
        i++;
        continue;
      }
      let next = i + 1;
      if (c === 13) {
        if (i + 1 >= b.length) break; // CR at the end: wait to see whether LF follows
        if (b.charCodeAt(i + 1) === 10) next = i + 2;
      }
      const line = b.slice(this.lineStart, i);
      if (this.eol === "") this.eol = b.slice(i, next);
      if (line === "") {
        if (this.lines.length > 0) out.push(makeBlock(b.slice(this.blockStart, next), this.lines, this.eol));
        else out.push(makeBlock(b.slice(this.blockStart, next), [], this.eol)); // a stray blank line passes as is
        this.lines = [];
        this.blockStart = next;
      } else {
        this.lines.push(line);
      }
      this.lineStart = next;
      i = next;
    }
    this.scan = i;
    if (this.blockStart > 0) {
      this.buf = b.slice(this.blockStart);
      this.scan -= this.blockStart;
      this.lineStart -= this.blockStart;
      this.blockStart = 0;
    }
    return out;
  }

  /** The unterminated rest of the stream as a last block (null when nothing is left). */
  end(): SseBlock | null {
    if (this.buf.length === 0) return null;
    const raw = this.buf;
    const lines = [...this.lines];
    const tail = raw.slice(this.lineStart).replace(/[\r\n]+$/, "");
    if (tail !== "") lines.push(tail);
    this.buf = "";
    this.lines = [];
    this.scan = this.lineStart = this.blockStart = 0;
    return makeBlock(raw, lines, this.eol || "\n");
  }

  /** Characters received but not yet part of a complete block. */
  pending(): number {
    return this.buf.length;
  }
}
