// Postgres unavailable → gRPC UNAVAILABLE on Sync and Ingest (session 26 left them answering INTERNAL,
// which gRPC clients and retry policies treat as a fault, not as "try again"). A whole control plane on
// a real Postgres cut off through a relay; the trace store's outage is mapped the same way.
import test from "ava";
import { startControlPlaneBehindRelay } from "../../../test/harness/control-plane-behind-relay.js";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AckRequestSchema, IngestService, SyncService, UploadRequestSchema, WatchRequestSchema, type UploadRequest } from "@agentgov/proto";
import { TraceStoreError } from "../stores/clickhouse/errors.js";
import { unavailableError } from "./unavailable.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The gRPC code a call ends with (OK when it succeeds). */
async function codeOf(call: () => Promise<unknown>): Promise<Code | "OK"> {
  try {
    await call();
    return "OK";
  } catch (e) {
    return ConnectError.from(e).code;
  }
}

test("a control plane cut off from Postgres answers UNAVAILABLE on Sync.Watch, Sync.Ack and Ingest.Upload, and serves again once it is back", async (t) => {
  t.timeout(90_000);
  const h = await startControlPlaneBehindRelay();
  const { cp, relay, adminKey } = h;
  try {
    const transport = createGrpcTransport({ baseUrl: cp.grpcUrl });
    const headers = { authorization: `Bearer ${adminKey}` };
    const sync = createClient(SyncService, transport);
    const ingest = createClient(IngestService, transport);
    /** The first message of a new Watch stream (then the stream is closed). */
    const watchFirst = async () => {
      const abort = new AbortController();
      try {
        for await (const m of sync.watch(create(WatchRequestSchema, { sidecarId: "unavailable-test" }), { headers, signal: abort.signal })) return m;
      } finally {
        abort.abort();
      }
      throw new Error("the Watch stream ended without a message");
    };
    const ack = () => sync.ack(create(AckRequestSchema, { sidecarId: "unavailable-test", version: 1n }), { headers });
    const upload = async () => {
      async function* one(): AsyncGenerator<UploadRequest> {
        yield create(UploadRequestSchema, { batchId: 1n });
      }
      for await (const res of ingest.upload(one(), { headers })) return res;
      throw new Error("no acknowledgement");
    };

    t.is(await codeOf(watchFirst), "OK");
    t.is(await codeOf(upload), "OK");

    await relay.down();
    t.is(await codeOf(watchFirst), Code.Unavailable, "Sync.Watch");
    t.is(await codeOf(ack), Code.Unavailable, "Sync.Ack");
    t.is(await codeOf(upload), Code.Unavailable, "Ingest.Upload");

    await relay.up();
    let code: Code | "OK" = Code.Unavailable;
    for (let i = 0; i < 100 && code !== "OK"; i++) {
      code = await codeOf(watchFirst);
      if (code !== "OK") await sleep(100);
    }
    t.is(code, "OK", "Sync serves again");
    t.is(await codeOf(upload), "OK", "Ingest serves again");
  } finally {
    await h.stop();
  }
});

test("the trace store's outage is UNAVAILABLE too; other errors and a status a handler chose pass unchanged", (t) => {
  t.is(unavailableError(new TraceStoreError("engine_unavailable", "connect ECONNREFUSED"))?.code, Code.Unavailable);
  t.is(unavailableError(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }))?.code, Code.Unavailable);
  t.is(unavailableError(new TraceStoreError("invalid_argument", "bad trace")), undefined);
  t.is(unavailableError(Object.assign(new Error("duplicate key"), { code: "23505" })), undefined);
  t.is(unavailableError(new ConnectError("this sidecar's key was revoked", Code.Unauthenticated)), undefined);
});
