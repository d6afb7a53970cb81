// Limits on the control plane's gRPC port against unauthenticated clients (review, session 17): a
// malformed authorization is refused from the headers, before any of the body is read; a compressed
// message is inflated only up to the method's readMaxBytes (a 260 KB gzip message used to inflate to
// 1 GiB before the key was looked at); the server advertises a stream limit; a request message that
// never finishes arriving is reset after REQUEST_ARRIVAL_TIMEOUT_MS, while the long-lived Watch response
// and Upload streams of a real sidecar are not cut.
import test from "ava";
import http2 from "node:http2";
import { gzipSync } from "node:zlib";
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { IngestService, SyncService, UploadRequestSchema, WatchRequestSchema, type UploadRequest } from "@agentgov/proto";
import { startStack, type Stack } from "../harness/stack.js";
import { MAX_CONCURRENT_STREAMS, REQUEST_ARRIVAL_TIMEOUT_MS, SMALL_REQUEST_MAX_BYTES } from "../../control-plane/src/grpc/server.js";

let stack: Stack;
test.before(async () => {
  stack = await startStack();
});
test.after.always(async () => {
  await stack?.stop();
});

const WATCH = "/governance.v1.SyncService/Watch";
/** Well-formed, but no such key: passes the header check, refused by the database lookup. */
const UNKNOWN_KEY = `svc_ingest_${"0".repeat(40)}`;

function envelope(flags: number, payload: Buffer): Buffer {
  const h = Buffer.alloc(5);
  h[0] = flags;
  h.writeUInt32BE(payload.length, 1);
  return Buffer.concat([h, payload]);
}

/** Opens a raw gRPC request; resolves with its status (headers or trailers) once the stream closes. */
function rawCall(session: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders, body?: Buffer) {
  const req = session.request({ ":method": "POST", ":path": WATCH, "content-type": "application/grpc", te: "trailers", ...headers }, { endStream: false });
  if (body) req.write(body);
  const status = new Promise<{ grpcStatus?: string; closedAfterMs: number; rstCode: number }>((ok) => {
    const t0 = Date.now();
    let grpcStatus: string | undefined;
    const take = (h: http2.IncomingHttpHeaders) => (grpcStatus = (h["grpc-status"] as string | undefined) ?? grpcStatus);
    req.on("response", take);
    req.on("trailers", take);
    req.on("error", () => undefined);
    req.on("close", () => ok({ grpcStatus, closedAfterMs: Date.now() - t0, rstCode: req.rstCode ?? 0 }));
    req.resume();
  });
  return { req, status };
}

test("the server advertises a concurrent stream limit", async (t) => {
  const session = http2.connect(stack.cp.grpcUrl);
  await new Promise((r) => session.once("remoteSettings", r));
  t.is(session.remoteSettings.maxConcurrentStreams, MAX_CONCURRENT_STREAMS);
  session.destroy();
});

test("a missing or malformed authorization is refused Unauthenticated before the request body is read", async (t) => {
  const session = http2.connect(stack.cp.grpcUrl);
  for (const authorization of [undefined, "Bearer nothing", "Basic abc", `Bearer svc_ingest_short`]) {
    // The request announces a 10-byte message and never sends it: only a check of the headers can answer.
    const { req, status } = rawCall(session, authorization ? { authorization } : {}, Buffer.from([0, 0, 0, 0, 10]));
    const s = await Promise.race([status, new Promise<undefined>((r) => setTimeout(() => r(undefined), 5000))]);
    req.close();
    t.is(s?.grpcStatus, "16", `authorization ${String(authorization)}`);
  }
  session.destroy();
});

test("a gzip bomb on Sync.Watch is inflated only up to readMaxBytes", async (t) => {
  // WatchRequest field 2 (sidecar_id) of 16 MiB of 'a': valid protobuf once inflated, ~16 KB compressed.
  const n = 16 * 1024 * 1024;
  const len: number[] = [];
  for (let v = n; ; ) {
    const b = v & 0x7f;
    v >>>= 7;
    if (v) len.push(b | 0x80);
    else {
      len.push(b);
      break;
    }
  }
  const gz = gzipSync(Buffer.concat([Buffer.from([0x12, ...len]), Buffer.alloc(n, 0x61)]), { level: 9 });
  t.true(gz.length < SMALL_REQUEST_MAX_BYTES, "the compressed message itself is under the limit");
  const session = http2.connect(stack.cp.grpcUrl);
  const { req, status } = rawCall(session, { authorization: `Bearer ${UNKNOWN_KEY}`, "grpc-encoding": "gzip" });
  req.end(envelope(1, gz));
  const s = await status;
  session.destroy();
  t.is(s.grpcStatus, "8", "ResourceExhausted, not Unauthenticated after inflating the whole message");
});

test("a request that never finishes arriving is reset; Watch and Upload streams outlive the timeout", async (t) => {
  t.timeout(REQUEST_ARRIVAL_TIMEOUT_MS + 30_000);
  const session = http2.connect(stack.cp.grpcUrl);
  const stuck = rawCall(session, { authorization: `Bearer ${UNKNOWN_KEY}` }, Buffer.from([0, 0, 0, 0, 10]));

  const transport = createGrpcTransport({ baseUrl: stack.cp.grpcUrl });
  const headers = { authorization: `Bearer ${stack.adminKey}` };
  const abort = new AbortController();
  // A Watch stream whose response keeps coming (heartbeats every 10 s).
  const watchTimes: number[] = [];
  const t0 = Date.now();
  const watching = (async () => {
    try {
      for await (const _ of createClient(SyncService, transport).watch(create(WatchRequestSchema, { sidecarId: "limits" }), { headers, signal: abort.signal })) watchTimes.push(Date.now() - t0);
      return "ended";
    } catch (e) {
      return abort.signal.aborted ? "open until aborted" : String(e);
    }
  })();
  // An Upload stream whose request stays open, quiet for longer than the timeout between two batches.
  async function* batches(): AsyncGenerator<UploadRequest> {
    yield create(UploadRequestSchema, { batchId: 1n });
    await new Promise((r) => setTimeout(r, REQUEST_ARRIVAL_TIMEOUT_MS + 3000));
    yield create(UploadRequestSchema, { batchId: 2n });
  }
  const acks: bigint[] = [];
  for await (const res of createClient(IngestService, transport).upload(batches(), { headers })) acks.push(res.batchId);
  abort.abort();

  const s = await stuck.status;
  session.destroy();
  t.deepEqual(acks, [1n, 2n], "the Upload stream was not cut");
  t.is(await watching, "open until aborted");
  t.true(watchTimes.some((ms) => ms > REQUEST_ARRIVAL_TIMEOUT_MS), `Watch messages at ${JSON.stringify(watchTimes)} ms`);
  t.true(s.closedAfterMs >= REQUEST_ARRIVAL_TIMEOUT_MS - 1000 && s.closedAfterMs < REQUEST_ARRIVAL_TIMEOUT_MS + 5000, `closed after ${s.closedAfterMs} ms`);
  t.is(s.rstCode, http2.constants.NGHTTP2_CANCEL);
});
