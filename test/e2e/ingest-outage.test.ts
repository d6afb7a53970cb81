// Lossless ingest across a ClickHouse server outage (runs only when CLICKHOUSE_URL is set, i.e. a
// clickhouse-server binary is around): the test starts its OWN server (own directory and ports, so the
// shared one is untouched), points a control plane at it, streams traces into Ingest.Upload like a
// sidecar (unacknowledged traces are kept and resent), stops the server in the middle of the stream,
// keeps producing, starts the server again, and then finds every trace exactly once — in the list's
// exact total, in count(), in a full walk of the ids and in the tool counts. Nothing is acknowledged
// while the server is down (the uploader, like a sidecar, then stops at its in-flight limit).
import test from "ava";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Trace } from "@agentgov/proto";
import { startStack, type Stack } from "../harness/stack.js";
import { StreamingUploader, makeTrace } from "./traces-helpers.js";

const ROOT = resolve(fileURLToPath(import.meta.url), "../../..");
const SCRIPT = join(ROOT, ".ci/start-clickhouse.sh");
const enabled = Boolean(process.env.CLICKHOUSE_URL) && existsSync(SCRIPT);
const run = enabled ? test.serial : test.skip;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      const port = typeof a === "object" && a ? a.port : 0;
      s.close(() => ok(port));
    });
  });
}

class OwnClickHouse {
  constructor(
    readonly dir: string,
    readonly httpPort: number,
    readonly tcpPort: number,
  ) {}
  get url(): string {
    return `http://127.0.0.1:${this.httpPort}`;
  }
  start(): void {
    execFileSync("bash", [SCRIPT, this.dir, String(this.httpPort), String(this.tcpPort)], { stdio: "ignore", timeout: 90_000 });
  }
  private pid(): number | undefined {
    const f = join(this.dir, "clickhouse-server.pid");
    if (!existsSync(f)) return undefined;
    const pid = Number(readFileSync(f, "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  }
  /** Stops the server (SIGTERM) and waits until its process is gone. */
  async stop(): Promise<void> {
    const pid = this.pid();
    if (!pid) return;
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      return;
    }
    for (let i = 0; i < 600; i++) {
      try {
        process.kill(pid, 0);
      } catch {
        return;
      }
      await sleep(50);
    }
    process.kill(pid, "SIGKILL");
  }
}

let ch: OwnClickHouse | undefined;
let stack: Stack | undefined;

test.before(async () => {
  if (!enabled) return;
  ch = new OwnClickHouse(mkdtempSync(join(tmpdir(), "agentgov-ch-outage-")), await freePort(), await freePort());
  ch.start();
  stack = await startStack({ CLICKHOUSE_URL: ch.url });
});
test.after.always(async () => {
  await stack?.stop();
  await ch?.stop();
  if (ch) rmSync(ch.dir, { recursive: true, force: true });
});

run("every trace is stored exactly once across a ClickHouse server outage during the stream", async (t) => {
  t.timeout(240_000);
  const s = stack!;
  const server = ch!;
  const agentId = (await s.api.post<{ data: { id: string } }>("/api/agents", { name: "outage-bot" })).body.data.id;
  const uploader = new StreamingUploader(s.cp.grpcUrl, s.adminKey, { batch: 100, inFlight: 8 });
  const all: Trace[] = [];
  let produced = 0;
  const produce = (n: number) => {
    const now = Date.now();
    const batch = Array.from({ length: n }, (_, i) => makeTrace({ tenantId: s.cp.tenantId, agentId, atMs: now - 1000 + (produced + i) % 1000, costUsd: 0.0001, tools: (produced + i) % 10 === 0 ? ["search"] : [] }));
    produced += n;
    all.push(...batch);
    uploader.push(batch);
  };
  let producingDone = false;
  const producing = (async () => {
    while (!producingDone) {
      produce(100);
      await sleep(100);
    }
  })();
  let downAt = 0;
  let restartAt = 0;
  try {
    await sleep(1500);
    t.true(uploader.acked.size > 0, "traces are acknowledged before the outage");
    const stopAt = Date.now();
    await server.stop();
    downAt = Date.now();
    await sleep(3000); // producing goes on; the control plane cannot store anything
    restartAt = Date.now();
    server.start();
    t.log(`server stop took ${downAt - stopAt} ms, start ${Date.now() - restartAt} ms`);
    await sleep(1000);
    producingDone = true;
    await producing;
    await uploader.settled(180_000);
  } finally {
    producingDone = true;
    await producing;
    await uploader.stop();
  }
  t.true(all.length >= 3000);
  // Batches caught by the outage waited for the server; none was acknowledged while it was down
  // (a second's grace after the stop for a batch stored just before it).
  t.log(`stream failures ${uploader.streamFailures}; batches ${uploader.records.length}; down ${downAt} restart ${restartAt}`);
  const waited = uploader.records.filter((r) => r.sentAtMs < restartAt && (r.ackAtMs ?? 0) > restartAt);
  t.true(waited.length > 0, "some batches waited through the outage");
  const ackedWhileDown = uploader.records.filter((r) => r.ackAtMs !== undefined && r.ackAtMs > downAt + 1000 && r.ackAtMs < restartAt);
  t.deepEqual(ackedWhileDown, [], "nothing acknowledged while the server was down");
  t.is(uploader.rejected.size, 0);
  t.is(uploader.acked.size, all.length);

  const list = await s.api.get<{ total: number }>(`/api/traces?agentId=${agentId}&limit=1`);
  t.is(list.body.total, all.length, "exact total");
  const stats = await s.api.get<{ summary: { totalTraces: number } }>(`/api/traces/stats?period=1h&agentId=${agentId}`);
  t.is(stats.body.summary.totalTraces, all.length, "count()");
  const seen: string[] = [];
  for (let offset = 0; offset < all.length; offset += 500) {
    const page = await s.api.get<{ data: { id: string }[] }>(`/api/traces?agentId=${agentId}&limit=500&offset=${offset}`);
    seen.push(...page.body.data.map((x) => x.id));
  }
  t.is(new Set(seen).size, seen.length, "no trace listed twice");
  t.deepEqual([...seen].sort(), all.map((x) => x.id).sort(), "every trace listed");
  const tools = await s.api.get<{ data: { toolName: string; callCount: number }[] }>(`/api/agents/${agentId}/tools`);
  t.deepEqual(tools.body.data.map((x) => [x.toolName, x.callCount]), [["search", all.length / 10]], "tool calls counted once");
});
