// Pagination while traces keep arriving through Ingest.Upload. GET /v1/traces with the default window
// and a cursor: every trace present when the walk began is listed exactly once, newest first, nothing
// newer than the first page's window shows up, and late traces (older timestamps, as a sidecar's
// spool replays them) never break the order or repeat a row. GET /api/traces with a fixed endDate:
// offset pages stay exact while newer traces arrive.
import test from "ava";
import type { Trace } from "@agentgov/proto";
import { startStack, type Stack } from "../harness/stack.js";
import { MINUTE, StreamingUploader, makeTrace, uploadTraces } from "./traces-helpers.js";

let stack: Stack;
let agentId = "";
let initial: Trace[] = [];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const enc = encodeURIComponent;

test.before(async () => {
  stack = await startStack();
  agentId = (await stack.api.post<{ data: { id: string } }>("/api/agents", { name: "pager" })).body.data.id;
  const now = Date.now();
  // 400 traces over the last 50 minutes, some sharing a millisecond (the id breaks the tie).
  initial = Array.from({ length: 400 }, (_, i) => makeTrace({ tenantId: stack.cp.tenantId, agentId, atMs: now - 50 * MINUTE + Math.floor(i / 3) * 20_000 }));
  const r = await uploadTraces(stack.cp.grpcUrl, stack.adminKey, initial, { batch: 100 });
  if (r.acked.size !== initial.length) throw new Error("initial traces not acknowledged");
});
test.after.always(async () => {
  await stack?.stop();
});

interface Row { id: string; timestamp: string }

/** Keeps ingesting: fresh traces (now) and late ones (random times in the last 50 minutes). */
function startIngest(late: boolean) {
  const uploader = new StreamingUploader(stack.cp.grpcUrl, stack.adminKey, { batch: 50 });
  const pushed: Trace[] = [];
  let stop = false;
  const running = (async () => {
    for (let round = 0; !stop; round++) {
      const now = Date.now();
      const batch = Array.from({ length: 20 }, (_, i) =>
        makeTrace({ tenantId: stack.cp.tenantId, agentId, atMs: late && i % 2 === 1 ? now - Math.floor(Math.random() * 50 * MINUTE) : now }),
      );
      pushed.push(...batch);
      uploader.push(batch);
      await sleep(40);
    }
  })();
  return {
    uploader,
    pushed,
    async stop() {
      stop = true;
      await running;
      await uploader.settled(60_000);
      await uploader.stop();
    },
  };
}

/** Waits until the uploader has more acknowledgements than `n` (so that ingest interleaves with pages). */
async function moreAcked(u: StreamingUploader, n: number): Promise<void> {
  for (let i = 0; i < 200 && u.acked.size <= n; i++) await sleep(10);
}

test.serial("GET /v1/traces: a cursor walk under concurrent ingest lists every earlier trace once, in order", async (t) => {
  const ingest = startIngest(true);
  await moreAcked(ingest.uploader, 0);
  const startedAt = Date.now();
  const rows: Row[] = [];
  let cursor: string | undefined;
  let pages = 0;
  try {
    do {
      const r = await stack.api.get<{ data: Row[]; has_more: boolean; next_cursor?: string }>(`/v1/traces?agent_id=${agentId}&limit=37${cursor ? `&cursor=${cursor}` : ""}`);
      t.is(r.status, 200);
      rows.push(...r.body.data);
      cursor = r.body.next_cursor;
      pages++;
      await moreAcked(ingest.uploader, ingest.uploader.acked.size);
    } while (cursor && pages < 200);
  } finally {
    await ingest.stop();
  }
  t.true(pages > 10, `${pages} pages`);
  t.is(new Set(rows.map((r) => r.id)).size, rows.length, "no trace twice");
  for (let i = 1; i < rows.length; i++) {
    const a = rows[i - 1]!;
    const b = rows[i]!;
    t.true(a.timestamp > b.timestamp || (a.timestamp === b.timestamp && a.id > b.id), `order at ${i}`);
  }
  const listed = new Set(rows.map((r) => r.id));
  t.deepEqual(initial.filter((x) => !listed.has(x.id)).map((x) => x.id), [], "every trace present at the start is listed");
  t.true(rows.every((r) => Date.parse(r.timestamp) <= startedAt + 1000), "nothing newer than the first page's window");
  t.true(ingest.pushed.length > 100, "traces kept arriving during the walk");
});

test.serial("GET /api/traces: offset pages with a fixed endDate stay exact while newer traces arrive", async (t) => {
  const endDate = new Date().toISOString();
  const before = await stack.api.get<{ total: number }>(`/api/traces?agentId=${agentId}&endDate=${enc(endDate)}&limit=1`);
  const ingest = startIngest(false);
  const rows: string[] = [];
  try {
    for (let offset = 0; offset < before.body.total; offset += 150) {
      const r = await stack.api.get<{ data: { id: string }[]; total: number }>(`/api/traces?agentId=${agentId}&endDate=${enc(endDate)}&limit=150&offset=${offset}`);
      t.is(r.body.total, before.body.total, "total unchanged by newer traces");
      rows.push(...r.body.data.map((x) => x.id));
      await moreAcked(ingest.uploader, ingest.uploader.acked.size);
    }
  } finally {
    await ingest.stop();
  }
  t.is(rows.length, before.body.total);
  t.is(new Set(rows).size, rows.length);
  const all = await stack.api.get<{ total: number }>(`/api/traces?agentId=${agentId}&limit=1`);
  t.true(all.body.total > before.body.total, "newer traces were stored meanwhile");
});
