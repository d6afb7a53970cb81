// The shipper against an Ingest peer over real gRPC (HTTP/2): what goes on the wire is the spool's
// encoded bytes (UploadRequest.encoded_traces, no `traces`), each decoding to the trace appended, and a
// trace leaves the spool when it is acknowledged. The peer here only decodes and acknowledges; the real
// control plane's side is covered by the end-to-end tests.
import test from "ava";
import http2 from "node:http2";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { create, fromBinary } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter, createGrpcTransport } from "@connectrpc/connect-node";
import { AgentSpendSchema, IngestService, TraceSchema, UploadResponseSchema, type AgentSpend, type Trace, type UploadRequest } from "@agentgov/proto";
import { DurableSpool, type SpoolLog } from "./spool.js";
import { BATCH_BYTES, TraceShipper } from "./shipper.js";

const log: SpoolLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * An Ingest peer over real gRPC that records every request and acknowledges each batch after
 * `ackDelayMs`, with each agent's spend so far (the sum of the costs it received), as the control plane does.
 */
async function startPeer(t: import("ava").ExecutionContext, ackDelayMs = 0): Promise<{ port: number; received: UploadRequest[] }> {
  const received: UploadRequest[] = [];
  const spent = new Map<string, number>();
  const routes = (router: ConnectRouter) => {
    router.service(IngestService, {
      async *upload(requests: AsyncIterable<UploadRequest>) {
        for await (const req of requests) {
          received.push(req);
          const xs = req.encodedTraces.map((b) => fromBinary(TraceSchema, b));
          for (const x of xs) spent.set(x.agentId, (spent.get(x.agentId) ?? 0) + x.costUsd);
          const agents = new Set(xs.filter((x) => x.costUsd > 0).map((x) => x.agentId));
          const spend = [...agents].map((agentId) => create(AgentSpendSchema, { agentId, day: "2026-11-23", spentUsd: spent.get(agentId)! }));
          if (ackDelayMs > 0) await new Promise((r) => setTimeout(r, ackDelayMs));
          yield create(UploadResponseSchema, { batchId: req.batchId, ackedTraceIds: xs.map((x) => x.id), rejected: [], spend });
        }
      },
    });
  };
  const server = http2.createServer(connectNodeAdapter({ routes, grpc: true, grpcWeb: false, connect: false }));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (s) => {
    sessions.add(s);
    s.once("close", () => sessions.delete(s));
  });
  t.teardown(() => {
    // The client transport keeps its HTTP/2 connection open: close it from this side.
    for (const s of sessions) s.destroy();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return { port: (server.address() as AddressInfo).port, received };
}

/** Ships everything spooled to the peer and stops; returns the shipper's errors. */
async function shipAll(spool: DurableSpool, port: number, onAcknowledged?: (ids: readonly string[], spend: readonly AgentSpend[]) => void): Promise<unknown[]> {
  const errors: unknown[] = [];
  const shipper = new TraceShipper(createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` }), "sk_test", spool, {
    onError: (e) => errors.push(e),
    onRejected: () => undefined,
    onAcknowledged,
  });
  shipper.start();
  const deadline = Date.now() + 10_000;
  while (spool.size() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  await shipper.stop();
  return errors;
}

test("batches carry the spooled bytes as encoded_traces; acknowledged traces leave the spool", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "agentgov-shipper-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { port, received } = await startPeer(t);
  const spool = await DurableSpool.open({ dir, log, cacheBytes: 4096 }); // some traces from memory, the rest read back from disk
  const xs: Trace[] = Array.from({ length: 120 }, (_, i) =>
    create(TraceSchema, { id: `trc_${String(i).padStart(26, "0")}`, tenantId: "ten_1", agentId: "agt_1", status: "success", timestampMs: BigInt(Date.now()), prompt: `p${i} ${"y".repeat(i)}`, costUsd: i / 1000 }),
  );
  await Promise.all(xs.map((x) => spool.append(x)));
  const acked: string[] = [];
  let lastSpend: AgentSpend[] = [];
  const errors = await shipAll(spool, port, (ids, spend) => {
    acked.push(...ids);
    lastSpend = [...spend];
  });
  await spool.close();

  t.is(spool.size(), 0, "every trace acknowledged and removed");
  t.deepEqual(acked.sort(), xs.map((x) => x.id).sort(), "every acknowledgement reported once");
  t.deepEqual(lastSpend.map((s) => [s.agentId, s.day, Math.round(s.spentUsd * 1e9)]), [["agt_1", "2026-11-23", Math.round(xs.reduce((n, x) => n + x.costUsd, 0) * 1e9)]], "with the figures the acknowledgement carried");
  t.deepEqual(errors, []);
  t.true(received.length > 0);
  t.true(received.every((r) => r.traces.length === 0), "no trace is sent as a message");
  const got = received.flatMap((r) => r.encodedTraces.map((b) => fromBinary(TraceSchema, b)));
  t.deepEqual(got, xs, "each element decodes to the trace appended, in order, once");
});

test("a backlog of 8 KB traces goes out in batches of at most BATCH_BYTES, all acknowledged, also when acknowledgements lag", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "agentgov-shipper-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { port, received } = await startPeer(t, 30);
  const spool = await DurableSpool.open({ dir, log });
  const xs: Trace[] = Array.from({ length: 300 }, (_, i) =>
    create(TraceSchema, { id: `trc_${String(i).padStart(26, "0")}`, tenantId: "ten_1", agentId: "agt_1", status: "success", timestampMs: BigInt(Date.now()), prompt: `${i} ${"z".repeat(8192)}` }),
  );
  await Promise.all(xs.map((x) => spool.append(x)));
  const errors = await shipAll(spool, port);
  await spool.close();

  t.deepEqual(errors, []);
  t.is(spool.size(), 0, "every trace acknowledged and removed");
  const sizes = received.map((r) => r.encodedTraces.reduce((n, b) => n + b.length, 0));
  t.true(sizes.every((n) => n <= BATCH_BYTES), `batch sizes ${Math.max(...sizes)} ≤ ${BATCH_BYTES}`);
  t.true(received.length >= Math.ceil((300 * 8192) / BATCH_BYTES), `${received.length} batches`);
  t.deepEqual(received.flatMap((r) => r.encodedTraces.map((b) => fromBinary(TraceSchema, b).id)), xs.map((x) => x.id), "each trace once, in order");
});
