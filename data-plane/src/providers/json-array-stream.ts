// Incremental splitter for a streamed top-level JSON array ("[{…},{…}]"), as Gemini's
// streamGenerateContent sends without alt=sse: yields each complete element as soon as it closes.

export class JsonArrayStream {
  private readonly decoder = new TextDecoder("utf-8");
  private readonly onElement: (text: string) => void;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private current = "";
  private ended = false;

  constructor(onElement: (text: string) => void) {
    this.onElement = onElement;
  }

  push(chunk: Uint8Array | string): void {
    const text = typeof chunk === "string" ? chunk : this.decoder.decode(chunk, { stream: true });
    for (const ch of text) this.step(ch);
  }

  /** The array's closing "]" came: the provider finished it (an array without it was cut short). */
  get closed(): boolean {
    return this.ended;
  }

  end(): void {
    const rest = this.decoder.decode();
    for (const ch of rest) this.step(ch);
  }

  private step(ch: string): void {
    if (this.depth >= 2 || (this.depth === 1 && ch !== "," && ch !== "]" && ch.trim() !== "")) {
      // inside an element (depth counts the outer array as 1)
      this.current += ch;
    }
    if (this.inString) {
      if (this.escaped) this.escaped = false;
      else if (ch === "\\") this.escaped = true;
      else if (ch === '"') this.inString = false;
      return;
    }
    if (ch === '"') {
      this.inString = true;
    } else if (ch === "{" || ch === "[") {
      this.depth++;
    } else if (ch === "}" || ch === "]") {
      this.depth--;
      if (this.depth === 0 && ch === "]") this.ended = true;
      if (this.depth === 1 && this.current.length > 0) {
        this.onElement(this.current);
        this.current = "";
      }
    }
  }
}
