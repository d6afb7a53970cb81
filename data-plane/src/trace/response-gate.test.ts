// The response gate on a real HTTP server: a response whose request emitted a trace completes only
// once the trace is committed (or, with SPOOL_GATE=write, once it is emitted and written); a response
// without a trace, and one whose commit takes too long, complete anyway.
import test from "ava";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { closeSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { TraceSchema } from "@agentgov/proto";
import { GatedServerResponse, ResponseGate } from "./response-gate.js";
import { DurableSpool } from "./spool.js";
import { readiness, renderMetrics } from "../sidecar-status.js";
import { EMPTY_STATE } from "../state/governance-state.js";

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

async function serve(gate: ResponseGate, handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>) {
  const server = createServer({ ServerResponse: GatedServerResponse }, (req, res) => void gate.run(res, () => handler(req, res)));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const addr = server.address();
  const url = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`;
  return { url, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** A GET whose completion (the whole body received) can be checked while it runs. */
function fetchTracked(url: string) {
  let done = false;
  const body = fetch(url).then(async (r) => {
    const text = await r.text();
    done = true;
    return text;
  });
  return { body, done: () => done };
}

test("the answer completes only after its trace's commit (trace emitted after res.end, as the proxy does)", async (t) => {
  const gate = new ResponseGate(60_000);
  const commit = deferred();
  let emitted = false;
  const srv = await serve(gate, async (_req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("answer");
    setImmediate(() => {
      emitted = true;
      gate.traceEmitted(res, commit.promise);
    });
  });
  t.teardown(() => srv.close());
  const call = fetchTracked(srv.url);
  while (!emitted) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 100));
  t.false(call.done(), "the client has no complete answer while the trace is not on disk");
  commit.resolve();
  t.is(await call.body, "answer");
  t.like(gate.stats(), { gated: 1, timedOut: 0 });
  t.true(gate.stats().heldMaxMs >= 90, `the hold is measured (${gate.stats().heldMaxMs} ms)`);
});

test("with an append that is safe at once (SPOOL_GATE=write), the answer still waits for the trace to be emitted", async (t) => {
  const gate = new ResponseGate(60_000);
  let emit!: () => void;
  const srv = await serve(gate, async (_req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("answer");
    // the handler is still running (as the proxy's is until its trace is built)
    await new Promise<void>((r) => (emit = r));
    gate.traceEmitted(res, null);
  });
  t.teardown(() => srv.close());
  const call = fetchTracked(srv.url);
  while (!emit) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 100));
  t.false(call.done(), "no complete answer before its trace is written");
  emit();
  t.is(await call.body, "answer");
  t.like(gate.stats(), { gated: 1, timedOut: 0 });
});

test("a trace emitted for another response does not release this one", async (t) => {
  const gate = new ResponseGate(60_000);
  const held: ServerResponse[] = [];
  const srv = await serve(gate, async (_req, res) => {
    res.writeHead(200).end("ok");
    held.push(res);
    await new Promise<void>(() => undefined); // still running: only its trace can release it
  });
  t.teardown(() => srv.close());
  const done: boolean[] = [false, false];
  const a = fetch(srv.url).then(async (r) => (await r.text(), (done[0] = true)));
  while (held.length < 1) await new Promise((r) => setTimeout(r, 5));
  const b = fetch(srv.url).then(async (r) => (await r.text(), (done[1] = true)));
  while (held.length < 2) await new Promise((r) => setTimeout(r, 5));
  gate.traceEmitted(held[1]!, null);
  await b;
  await new Promise((r) => setTimeout(r, 50));
  t.deepEqual(done, [false, true]);
  gate.traceEmitted(held[0]!, null);
  await a;
  t.deepEqual(done, [true, true]);
});

test("a refusal whose trace is emitted synchronously after res.end is gated too", async (t) => {
  const gate = new ResponseGate(60_000);
  const commit = deferred();
  const srv = await serve(gate, async (_req, res) => {
    res.writeHead(403).end("blocked");
    gate.traceEmitted(res, commit.promise);
  });
  t.teardown(() => srv.close());
  let done = false;
  const response = fetch(srv.url).then(async (r) => {
    await r.text();
    done = true;
    return r.status;
  });
  await new Promise((r) => setTimeout(r, 100));
  t.false(done);
  commit.resolve();
  t.is(await response, 403);
});

test("a response without a trace completes at once; a commit slower than the limit releases the response", async (t) => {
  const gate = new ResponseGate(200);
  const never = new Promise<void>(() => undefined);
  const srv = await serve(gate, async (req, res) => {
    res.writeHead(200).end("ok");
    if (req.url === "/traced") setImmediate(() => gate.traceEmitted(res, never));
  });
  t.teardown(() => srv.close());
  t.is(await (await fetch(`${srv.url}/untraced`)).text(), "ok");
  t.is(await (await fetch(`${srv.url}/traced`)).text(), "ok");
  t.like(gate.stats(), { gated: 1, timedOut: 1 });
});

test("with a zero limit the gate is off", async (t) => {
  const gate = new ResponseGate(0);
  const never = new Promise<void>(() => undefined);
  const srv = await serve(gate, async (_req, res) => {
    res.writeHead(200).end("ok");
    gate.traceEmitted(res, never);
  });
  t.teardown(() => srv.close());
  t.is(await (await fetch(srv.url)).text(), "ok");
  t.like(gate.stats(), { gated: 0, timedOut: 0, heldMaxMs: 0 });
});

/** A spool on a "full disk": its segment files are written through /dev/full (every write(2) fails with ENOSPC). */
async function fullDiskSpool(t: { teardown(fn: () => unknown): void }) {
  const dir = mkdtempSync(join(tmpdir(), "agentgov-gate-spool-"));
  const quiet = { info() {}, warn() {}, error() {} };
  const spool = await DurableSpool.open({
    dir,
    log: quiet,
    resolveOn: "write",
    openSegmentFile: (path) => {
      closeSync(openSync(path, "wx", 0o600));
      return openSync("/dev/full", "w");
    },
  });
  t.teardown(async () => {
    await spool.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return spool;
}

const statusOf = (spool: DurableSpool, gate: ResponseGate) =>
  readiness(
    { ...EMPTY_STATE, tenantId: "ten_1", version: 1n },
    { connected: true, version: 1n, lastContactMs: Date.now(), snapshots: 1, deltas: 0, heartbeats: 0, reconnects: 0 },
    spool.stats(),
    { connected: true, batchesSent: 0, streamFailures: 0, lastAckAtMs: 0 },
    gate.stats(),
    { localEntries: 0, inFlight: 0 },
  );

let traceNo = 0;
const gatedTrace = () => create(TraceSchema, { id: `trc_${String(++traceNo).padStart(26, "0")}`, tenantId: "ten_1", agentId: "agt_1", timestampMs: BigInt(Date.now()), prompt: "disk full" });

test("a trace the spool could not write holds its answer until the control plane acknowledges it, and the sidecar reports the spool unwritable", async (t) => {
  const spool = await fullDiskSpool(t);
  const gate = new ResponseGate(60_000);
  const ids: string[] = [];
  const srv = await serve(gate, async (_req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("answer");
    const x = gatedTrace();
    ids.push(x.id);
    gate.traceEmitted(res, spool.append(x));
  });
  t.teardown(() => srv.close());
  const call = fetchTracked(srv.url);
  while (ids.length === 0) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 150));
  t.false(call.done(), "no complete answer while its trace is only in memory");
  const status = statusOf(spool, gate);
  t.is(status.status, "spool_unwritable");
  t.like(status, { spoolWriteErrors: 1, spool: { unwritable: true, memoryOnly: 1 } });
  t.regex("reason" in status ? status.reason : "", /trace spool cannot write.*ENOSPC/);
  const metrics = renderMetrics(status);
  t.regex(metrics, /^agentgov_sidecar_ready 0$/m);
  t.regex(metrics, /^agentgov_spool_unwritable 1$/m);
  t.regex(metrics, /^agentgov_spool_memory_only 1$/m);
  // The shipper delivers it from memory; the control plane's acknowledgement releases the answer.
  const shipped = await spool.peek(10, new Set());
  t.deepEqual(shipped.map((s) => s.id), ids);
  await spool.remove(ids);
  t.is(await call.body, "answer");
  t.like(gate.stats(), { gated: 1, timedOut: 0 });
});

test("an unwritten trace that is not acknowledged in time releases its answer at the limit, counted as timed out", async (t) => {
  const spool = await fullDiskSpool(t);
  const gate = new ResponseGate(300);
  const srv = await serve(gate, async (_req, res) => {
    res.writeHead(200).end("ok");
    gate.traceEmitted(res, spool.append(gatedTrace()));
  });
  t.teardown(() => srv.close());
  const t0 = performance.now();
  t.is(await (await fetch(srv.url)).text(), "ok");
  t.true(performance.now() - t0 >= 290, "held up to the limit");
  t.like(gate.stats(), { gated: 1, timedOut: 1 });
});
