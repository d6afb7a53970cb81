// relayStream, the proxy's streaming loop, against a recording client response: keep-alive comments
// only where the bytes sent end on an event boundary (never between the CR and the LF of a CRLF event
// end), and nothing a governor held is written before a non-SSE answer whose provider broke is cut.
import test from "ava";
import type { ServerResponse } from "node:http";
import { EventEmitter } from "node:events";
import { GoogleGenAI } from "@google/genai";
import { getProvider } from "../providers/index.js";
import { relayStream } from "./stream-relay.js";
import type { StreamGovernor } from "./stream-governor.js";

/** A client response that records what is written (never needs draining). */
function client(): { res: ServerResponse; written: () => Buffer } {
  const parts: Buffer[] = [];
  const res = Object.assign(new EventEmitter(), {
    writableNeedDrain: false,
    write: (b: Buffer) => {
      parts.push(Buffer.from(b));
      return true;
    },
  });
  return { res: res as unknown as ServerResponse, written: () => Buffer.concat(parts) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const KEEPALIVE_CRLF = Buffer.from(": keep-alive\r\n\r\n");

test("a keep-alive is never written between the CR and the LF of a CRLF event end (the provider paused there)", async (t) => {
  const event = (text: string, finish?: string) => `data: ${JSON.stringify({ candidates: [{ index: 0, content: { role: "model", parts: [{ text }] }, ...(finish ? { finishReason: finish } : {}) }] })}\r\n\r\n`;
  const first = event("Hello ");
  async function* body(): AsyncGenerator<Buffer> {
    yield Buffer.from(first.slice(0, -1)); // ends in the blank line's CR
    await sleep(120); // several keep-alive intervals
    yield Buffer.from("\n" + event("there.", "STOP"));
    await sleep(120); // after a whole event: keep-alives are welcome
  }
  const { res, written } = client();
  const r = await relayStream({
    res,
    body: body(),
    observer: getProvider("google")!.streamObserver(),
    governor: undefined,
    sse: true,
    keepAlive: { intervalMs: 20, comment: KEEPALIVE_CRLF },
    clientGone: () => false,
    abortUpstream: () => undefined,
  });
  const out = written().toString("utf8");
  t.false(out.includes("\r: keep-alive"), "no comment after a lone CR");
  t.true(out.startsWith(first), "the first event's end is whole");
  t.true(r.keepAlivesSent > 0, "keep-alives still flow between whole events");
  // The official SDK reads every event of what the client got.
  const fetch = () => Promise.resolve(new Response(out, { status: 200, headers: { "content-type": "text/event-stream" } }));
  const ai = new GoogleGenAI({ apiKey: "k", httpOptions: { baseUrl: "http://sdk.invalid", fetch } });
  let text = "";
  for await (const c of await ai.models.generateContentStream({ model: "gemini-2.5-flash", contents: "hi" })) text += c.text ?? "";
  t.is(text, "Hello there.");
});

test("a non-SSE answer whose provider connection broke: nothing the governor still holds is written before the cut", async (t) => {
  const held = Buffer.from('[{"candidates":[{"content":{"parts":[{"text":"write to jo.smith@example.com"}]}}]},{"candi');
  const governor: StreamGovernor = {
    transform: () => Buffer.alloc(0), // holds everything
    end: () => held, // a governor that would hand its bytes back
    stopped: false,
  };
  async function* body(): AsyncGenerator<Buffer> {
    yield held;
    throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
  }
  const { res, written } = client();
  const r = await relayStream({ res, body: body(), observer: getProvider("google")!.streamObserver(), governor, sse: false, keepAlive: undefined, clientGone: () => false, abortUpstream: () => undefined });
  t.truthy(r.upstreamError);
  t.false(r.atBoundary, "the proxy cuts the connection");
  t.is(written().length, 0);
  // A stream that ended normally gets what the governor returns.
  async function* whole(): AsyncGenerator<Buffer> {
    yield held;
  }
  const ok = client();
  await relayStream({ res: ok.res, body: whole(), observer: getProvider("google")!.streamObserver(), governor, sse: false, keepAlive: undefined, clientGone: () => false, abortUpstream: () => undefined });
  t.true(ok.written().equals(held));
});
