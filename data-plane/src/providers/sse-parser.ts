// Incremental Server-Sent Events parser (WHATWG rules): split-chunk safe, CR/LF/CRLF line ends, comments reported.

export interface SseEvent {
  /** The `event:` field; "message" when the event named none. */
  event: string;
  /** The `data:` lines joined with "\n". */
  data: string;
  /** The last `id:` seen on the stream, if any. */
  id?: string;
  /** The `retry:` field of this event, if any. */
  retry?: number;
}

export interface SseHandlers {
  onEvent(event: SseEvent): void;
  /** Called with the text after ":" of each comment line (keep-alives such as ": ping"). */
  onComment?(text: string): void;
}

/**
 * Feed bytes with push(); events are dispatched at each blank line. end() flushes: a last event that
 * was not followed by a blank line (truncated stream) is still dispatched when it carries data.
 */
export class SseParser {
  private readonly decoder = new TextDecoder("utf-8");
  private readonly handlers: SseHandlers;
  private line = "";
  private afterCR = false;
  private eventName = "";
  private dataLines: string[] = [];
  private hasData = false;
  private retry: number | undefined;
  private lastId: string | undefined;
  private bom = true;

  constructor(handlers: SseHandlers) {
    this.handlers = handlers;
  }

  push(chunk: Uint8Array | string): void {
    const text = typeof chunk === "string" ? chunk : this.decoder.decode(chunk, { stream: true });
    this.consume(text);
  }

  end(): void {
    this.consume(this.decoder.decode());
    if (this.line.length > 0) {
      this.processLine(this.line);
      this.line = "";
    }
    this.dispatch();
  }

  private consume(text: string): void {
    let start = 0;
    let text2 = text;
    if (this.bom && text2.length > 0) {
      if (text2.charCodeAt(0) === 0xfeff) text2 = text2.slice(1);
      this.bom = false;
    }
    for (let i = 0; i < text2.length; i++) {
      const c = text2.charCodeAt(i);
      if (c === 10 /* \n */) {
        if (this.afterCR) {
          // second half of a CRLF split or not: the CR already ended the line
          this.afterCR = false;
          start = i + 1;
          continue;
        }
        this.line += text2.slice(start, i);
        this.processLine(this.line);
        this.line = "";
        start = i + 1;
      } else if (c === 13 /* \r */) {
        this.line += text2.slice(start, i);
        this.processLine(this.line);
        this.line = "";
        this.afterCR = true;
        start = i + 1;
      } else if (this.afterCR) {
        this.afterCR = false;
      }
    }
    if (start < text2.length) {
      this.line += text2.slice(start);
      this.afterCR = false;
    }
  }

  private processLine(line: string): void {
    if (line === "") {
      this.dispatch();
      return;
    }
    if (line.charCodeAt(0) === 58 /* : */) {
      this.handlers.onComment?.(line.slice(1).replace(/^ /, ""));
      return;
    }
    const colon = line.indexOf(":");
    let field = line;
    let value = "";
    if (colon >= 0) {
      field = line.slice(0, colon);
      value = line.slice(colon + 1);
      if (value.charCodeAt(0) === 32) value = value.slice(1);
    }
    switch (field) {
      case "event":
        this.eventName = value;
        break;
      case "data":
        this.dataLines.push(value);
        this.hasData = true;
        break;
      case "id":
        if (!value.includes("\u0000")) this.lastId = value;
        break;
      case "retry":
        if (/^\d+$/.test(value)) this.retry = Number(value);
        break;
      default:
        break; // unknown fields are ignored (spec)
    }
  }

  private dispatch(): void {
    if (this.hasData) {
      const event: SseEvent = { event: this.eventName || "message", data: this.dataLines.join("\n") };
      if (this.lastId !== undefined) event.id = this.lastId;
      if (this.retry !== undefined) event.retry = this.retry;
      this.handlers.onEvent(event);
    }
    this.eventName = "";
    this.dataLines = [];
    this.hasData = false;
    this.retry = undefined;
  }
}

/** Parses a complete SSE body at once (convenience for tests and buffered bodies). */
export function parseSse(body: Uint8Array | string): { events: SseEvent[]; comments: string[] } {
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const parser = new SseParser({ onEvent: (e) => events.push(e), onComment: (c) => comments.push(c) });
  parser.push(body);
  parser.end();
  return { events, comments };
}
