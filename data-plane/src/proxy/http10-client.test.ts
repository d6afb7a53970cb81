// An HTTP/1.0 client (nginx talks HTTP/1.0 to its upstreams by default) gets streams and answers like any
// other: no chunked framing, so a stream comes close-delimited and its final cost is in the trace only
// (an HTTP/1.1 client also gets it in the X-Service-Cost trailer).
import test from "ava";
import { connect } from "node:net";
import { governanceState, openAiUpstream, OPENAI_COMPLETION as completion, OPENAI_SSE as sse, startInProcessProxy } from "./testing/in-process-proxy.js";

const KEY = "sk_http10_test_key";
const AGENT = "agt_01HTTP10000000000000000000";
const state = governanceState({ tenant: "ten_http10", agent: AGENT, key: KEY });

/** One raw HTTP/1.0 exchange: the whole bytes the server sent until it closed the connection. */
function http10(url: string, body: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      // write, not end: a half-closed connection reads as a client that went away
      socket.write(
        "POST /v1/proxy/openai/v1/chat/completions HTTP/1.0\r\n" +
          `Host: ${hostname}:${port}\r\ncontent-type: application/json\r\nauthorization: Bearer sk-x\r\n` +
          `x-service-key: ${KEY}\r\nx-service-agent: ${AGENT}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    });
    const parts: Buffer[] = [];
    socket.on("data", (c: Buffer) => parts.push(c));
    socket.on("close", () => resolve(Buffer.concat(parts).toString("utf8")));
    socket.on("error", reject);
  });
}

test("an HTTP/1.0 client gets a streamed answer whole, close-delimited, and its trace carries the cost", async (t) => {
  const s = await startInProcessProxy(state, openAiUpstream);
  try {
    const raw = await http10(s.url, JSON.stringify({ model: "gpt-4o-mini", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "hello" }] }));
    const [head, ...rest] = raw.split("\r\n\r\n");
    t.regex(head!, /^HTTP\/1\.1 200 OK\r\n/);
    t.notRegex(head!, /transfer-encoding|trailer/i);
    t.regex(head!, /x-service-trace-id: trc_/i);
    t.is(rest.join("\r\n\r\n"), sse, "the stream, byte for byte");
    t.deepEqual(s.errors, []);
    t.is(s.traces.length, 1);
    t.is(s.traces[0]!.status, "success");
    t.is(s.traces[0]!.outputTokens, 5);
    t.true(s.traces[0]!.costUsd > 0);

    const json = await http10(s.url, JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hello" }] }));
    t.regex(json, /^HTTP\/1\.1 200 OK\r\n/);
    t.true(json.endsWith(completion));
  } finally {
    await s.close();
  }
});
