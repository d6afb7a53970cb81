// A lean HTTP/1.1 keep-alive client and upstream server for the proxy benchmark, on plain sockets.
//
// Why by hand: the benchmark's load generator and upstream share the machine's two cores with the
// sidecar they measure, so every microsecond they spend is one the sidecar may wait for. A request
// through undici's Pool costs the load generator ~175 µs of CPU here (promises, header objects, a
// body stream, llhttp), and node:http costs the upstream ~75 µs; both are more than a benchmark tool
// should take (wrk and vegeta exist for this reason, but neither sends at a constant rate in this
// image). These only do what the benchmark needs: one request at a time per connection,
// `content-length` request bodies, and responses framed by `content-length` or chunked encoding.

import { connect, createServer, type Server, type Socket } from "node:net";

const CRLF2 = Buffer.from("\r\n\r\n");
const CRLF = Buffer.from("\r\n");
const EMPTY = Buffer.alloc(0);
/**
 * The one buffer every client connection reads into (net's `onread`): a socket otherwise allocates a
 * fresh Buffer for each read, garbage whose GC pauses delay every request in flight, whichever target
 * is being measured (this took the load generator from 35 to 32 pauses a run: most of its garbage is
 * elsewhere). A read is only looked at inside its callback; the part of an answer that has to wait for
 * more bytes is copied out.
 */
const READ_BUFFER = Buffer.allocUnsafe(256 * 1024);

/** What the benchmark reads of an answer. */
export interface LeanResponse {
  status: number;
  /** The sidecar's X-Service-Overhead-Ms (NaN when absent). */
  overheadMs: number;
  /** ms from the send to the end of the response headers. */
  headersMs: number;
}

/** The index just past a complete response body in `buf` (headers end at `bodyStart`), or -1 if more is needed. */
function chunkedEnd(buf: Buffer, bodyStart: number): number {
  let pos = bodyStart;
  for (;;) {
    const lineEnd = buf.indexOf(CRLF, pos);
    if (lineEnd < 0) return -1;
    const size = parseInt(buf.toString("latin1", pos, lineEnd), 16);
    if (!Number.isFinite(size)) throw new Error("bad chunk size");
    if (size === 0) {
      const end = buf.indexOf(CRLF2, lineEnd - 2 < pos ? pos : lineEnd - 2); // "0\r\n" [trailers] "\r\n"
      return end < 0 ? -1 : end + 4;
    }
    pos = lineEnd + 2 + size + 2;
    if (pos > buf.length) return -1;
  }
}

class LeanConnection {
  private readonly socket: Socket;
  private buf: Buffer = EMPTY;
  private sentAt = 0;
  private headerEnd = -1;
  private headersMs = 0;
  private status = 0;
  private overheadMs = NaN;
  private contentLength = -1;
  private chunked = false;
  private pending: { resolve(r: LeanResponse): void; reject(e: Error): void } | undefined;

  constructor(host: string, port: number, private readonly release: (c: LeanConnection) => void, private readonly discard: (c: LeanConnection) => void) {
    const callback = (n: number): boolean => {
      this.onData(READ_BUFFER.subarray(0, n));
      return true;
    };
    this.socket = connect({ host, port, noDelay: true, onread: { buffer: READ_BUFFER, callback } });
    const fail = (e?: Error) => {
      this.discard(this);
      const p = this.pending;
      this.pending = undefined;
      p?.reject(e ?? new Error("connection closed"));
    };
    this.socket.on("error", fail);
    this.socket.on("close", () => fail());
  }

  send(request: Buffer): Promise<LeanResponse> {
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.sentAt = performance.now();
      this.socket.write(request);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    if (!this.pending) {
      this.socket.destroy(new Error("response without a request"));
      return;
    }
    // `chunk` is a view of READ_BUFFER, valid during this call only
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    if (this.headerEnd < 0) {
      const end = this.buf.indexOf(CRLF2);
      if (end < 0) return;
      this.headerEnd = end + 4;
      this.headersMs = performance.now() - this.sentAt;
      const head = this.buf.toString("latin1", 0, end).toLowerCase();
      this.status = Number(head.slice(9, 12));
      const length = /\r\ncontent-length:\s*(\d+)/.exec(head);
      this.contentLength = length ? Number(length[1]) : -1;
      this.chunked = /\r\ntransfer-encoding:\s*chunked/.test(head);
      const overhead = /\r\nx-service-overhead-ms:\s*([\d.]+)/.exec(head);
      this.overheadMs = overhead ? Number(overhead[1]) : NaN;
    }
    let end: number;
    try {
      end = this.chunked ? chunkedEnd(this.buf, this.headerEnd) : this.contentLength >= 0 ? (this.buf.length >= this.headerEnd + this.contentLength ? this.headerEnd + this.contentLength : -1) : -1;
    } catch (e) {
      this.socket.destroy(e as Error);
      return;
    }
    if (end < 0) {
      if (this.buf === chunk) this.buf = Buffer.from(chunk); // keep the bytes past this read
      return;
    }
    const response: LeanResponse = { status: this.status, overheadMs: this.overheadMs, headersMs: this.headersMs };
    const p = this.pending;
    this.pending = undefined;
    this.buf = EMPTY;
    this.headerEnd = -1;
    this.release(this);
    p?.resolve(response);
  }
}

/**
 * Keep-alive connections to one origin, one request at a time on each, opened as concurrency needs
 * them up to `maxConnections` (as undici's Pool `connections`); beyond that requests wait in order.
 */
export class LeanPool {
  private readonly idle: LeanConnection[] = [];
  private readonly all = new Set<LeanConnection>();
  private readonly queue: { request: Buffer; resolve(r: LeanResponse): void; reject(e: Error): void }[] = [];
  private readonly host: string;
  private readonly port: number;

  constructor(
    origin: string,
    private readonly maxConnections = 512,
  ) {
    const url = new URL(origin);
    this.host = url.hostname;
    this.port = Number(url.port);
  }

  /** `request` is the whole HTTP request (head and body), e.g. from requestBytes(). */
  request(request: Buffer): Promise<LeanResponse> {
    let conn = this.idle.pop();
    if (!conn) {
      if (this.all.size >= this.maxConnections) return new Promise((resolve, reject) => this.queue.push({ request, resolve, reject }));
      conn = new LeanConnection(
        this.host,
        this.port,
        (c) => this.released(c),
        (c) => {
          this.all.delete(c);
          const i = this.idle.indexOf(c);
          if (i >= 0) this.idle.splice(i, 1);
          const next = this.queue.shift(); // a slot is free: the next waiting request opens a connection
          if (next) this.request(next.request).then(next.resolve, next.reject);
        },
      );
      this.all.add(conn);
    }
    return conn.send(request);
  }

  private released(c: LeanConnection): void {
    const next = this.queue.shift();
    if (next) c.send(next.request).then(next.resolve, next.reject);
    else this.idle.push(c);
  }

  close(): void {
    for (const c of this.all) c.close();
  }
}

/** A POST request's bytes: head (given headers, content-length) and body. */
export function requestBytes(origin: string, path: string, headers: Record<string, string>, body: Buffer): Buffer {
  const host = new URL(origin).host;
  let head = `POST ${path} HTTP/1.1\r\nhost: ${host}\r\n`;
  for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
  head += `content-length: ${body.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, "latin1"), body]);
}

/**
 * An upstream that answers every POST at once with `json` (application/json), or, when the body asks for
 * a stream (`"stream":true`), with a chunked text/event-stream: its first event (`sse.first`) with the
 * headers at once, the rest of the events in one chunk `sse.restAfterMs` later, as a provider sends its
 * first event when the first token is ready and the others after it. (Sent all in one write, the first
 * body byte a proxy forwards would wait for its work on every event of the answer, which no provider's
 * stream asks of it.)
 */
export function leanUpstream(json: Buffer, sse: { first: Buffer; rest: Buffer; restAfterMs: number }): Server {
  const jsonResponse = Buffer.concat([
    Buffer.from(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${json.length}\r\nx-request-id: req_upstream\r\nconnection: keep-alive\r\n\r\n`, "latin1"),
    json,
  ]);
  const sseFirst = Buffer.concat([
    Buffer.from(
      `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\ncache-control: no-cache\r\nx-request-id: req_upstream\r\nconnection: keep-alive\r\ntransfer-encoding: chunked\r\n\r\n${sse.first.length.toString(16)}\r\n`,
      "latin1",
    ),
    sse.first,
    Buffer.from("\r\n", "latin1"),
  ]);
  const sseRest = Buffer.concat([Buffer.from(`${sse.rest.length.toString(16)}\r\n`, "latin1"), sse.rest, Buffer.from("\r\n0\r\n\r\n", "latin1")]);
  return createServer({ noDelay: true }, (socket) => {
    let buf: Buffer = Buffer.alloc(0);
    socket.on("error", () => socket.destroy());
    socket.on("data", (chunk: Buffer) => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      for (;;) {
        const end = buf.indexOf(CRLF2);
        if (end < 0) return;
        const head = buf.toString("latin1", 0, end).toLowerCase();
        const length = /\r\ncontent-length:\s*(\d+)/.exec(head);
        if (!length) {
          socket.end("HTTP/1.1 411 Length Required\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
          return;
        }
        const total = end + 4 + Number(length[1]);
        if (buf.length < total) return;
        const body = buf.subarray(end + 4, total);
        if (body.includes('"stream":true')) {
          // The clients wait for each answer before the next request on a connection (no pipelining).
          socket.write(sseFirst);
          setTimeout(() => socket.writable && socket.write(sseRest), sse.restAfterMs);
        } else socket.write(jsonResponse);
        buf = buf.length === total ? Buffer.alloc(0) : buf.subarray(total);
      }
    });
  });
}
