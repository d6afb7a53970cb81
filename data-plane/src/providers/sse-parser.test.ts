// SseParser: WHATWG line/field rules, split-chunk safety, comments, CR/LF/CRLF, flush at end.
import test from "ava";
import { parseSse, SseParser } from "./sse-parser.js";
import type { SseEvent } from "./sse-parser.js";

const enc = new TextEncoder();

function feedBytes(bytes: Uint8Array, pieceSize: number): { events: SseEvent[]; comments: string[] } {
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const parser = new SseParser({ onEvent: (e) => events.push(e), onComment: (c) => comments.push(c) });
  for (let i = 0; i < bytes.length; i += pieceSize) parser.push(bytes.subarray(i, i + pieceSize));
  parser.end();
  return { events, comments };
}

const SAMPLE =
  ": hello\n\nevent: message_start\ndata: {\"a\":1}\n\n" +
  "data: line one\ndata: line two\nid: 7\nretry: 1500\n\n" +
  "data:no-space\n\n" +
  "event: ping\ndata: {\"type\": \"ping\"}\n\n" +
  "data: héllo ✓ 😀\n\n";

const EXPECTED: SseEvent[] = [
  { event: "message_start", data: '{"a":1}' },
  { event: "message", data: "line one\nline two", id: "7", retry: 1500 },
  { event: "message", data: "no-space", id: "7" },
  { event: "ping", data: '{"type": "ping"}', id: "7" },
  { event: "message", data: "héllo ✓ 😀", id: "7" },
];

test("parses fields, multi-line data, ids, retry, default event name and comments", (t) => {
  const { events, comments } = parseSse(SAMPLE);
  t.deepEqual(events, EXPECTED);
  t.deepEqual(comments, ["hello"]);
});

test("the same events whatever the chunking, down to single bytes (multi-byte UTF-8 split too)", (t) => {
  const bytes = enc.encode(SAMPLE);
  for (const size of [1, 2, 3, 5, 7, 64, bytes.length]) {
    t.deepEqual(feedBytes(bytes, size).events, EXPECTED, `piece size ${size}`);
  }
});

test("CRLF and lone CR line endings, including a CRLF split between two chunks", (t) => {
  const crlf = SAMPLE.replace(/\n/g, "\r\n");
  const cr = SAMPLE.replace(/\n/g, "\r");
  for (const text of [crlf, cr]) {
    const bytes = enc.encode(text);
    for (const size of [1, 2, 3, bytes.length]) t.deepEqual(feedBytes(bytes, size).events, EXPECTED);
  }
});

test("a data line with an empty value still dispatches; an event without data does not", (t) => {
  const { events } = parseSse("data:\n\nevent: lonely\n\nid: 3\n\n");
  t.deepEqual(events, [{ event: "message", data: "" }]);
});

test("end() flushes a last event that lacks its blank line (truncated stream)", (t) => {
  t.deepEqual(parseSse('data: {"x":1}\n').events, [{ event: "message", data: '{"x":1}' }]);
  t.deepEqual(parseSse('data: {"x":1}').events, [{ event: "message", data: '{"x":1}' }]);
});

test("a leading BOM is ignored and unknown fields are skipped", (t) => {
  const { events } = parseSse("\uFEFFfoo: bar\ndata: ok\n\n");
  t.deepEqual(events, [{ event: "message", data: "ok" }]);
});
