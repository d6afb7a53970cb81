// Tracks whether the bytes written to a client so far end on an SSE event boundary (an empty line,
// with LF, CR or CRLF line ends), so that the proxy only ever inserts its own comment lines between
// events, never inside one. Bytes that end in CR are never a known boundary (an LF may follow). Only the
// last four bytes are kept.
const LF = 10;
const CR = 13;

export class SseBoundary {
  /** Last bytes written, oldest first (at most 4). */
  private tail: number[] = [];

  /** Records bytes written to the client. */
  push(chunk: Uint8Array): void {
    const n = chunk.length;
    if (n === 0) return;
    if (n >= 4) {
      this.tail = [chunk[n - 4]!, chunk[n - 3]!, chunk[n - 2]!, chunk[n - 1]!];
      return;
    }
    for (let i = 0; i < n; i++) this.tail.push(chunk[i]!);
    if (this.tail.length > 4) this.tail.splice(0, this.tail.length - 4);
  }

  /** True when nothing was written yet or the last line written is an empty one (events are complete). */
  atBoundary(): boolean {
    const t = this.tail;
    let end = t.length;
    if (end === 0) return true;
    // A CR at the end may be the first half of a CRLF: where the line (or the event) ends is only known
    // with the next byte, and a comment written between CR and LF breaks the event for CRLF clients.
    if (t[end - 1] === CR) return false;
    // strip the terminator of the last line
    if (t[end - 1] === LF && t[end - 2] === CR) end -= 2;
    else if (t[end - 1] === LF) end -= 1;
    else return false; // inside a line
    if (end === 0) return t.length < 4; // the stream so far is one terminator (start of stream) or the window is too short to tell
    return t[end - 1] === LF || t[end - 1] === CR;
  }
}
