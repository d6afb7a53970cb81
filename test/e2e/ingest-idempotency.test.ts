// Ingest is at-least-once with idempotent trace ids: the same traces delivered again — on a new stream,
// in other batches, twice in one batch, and on two streams at once — are stored and counted once.
// Checked through every figure derived from traces: the exact total of GET /api/traces, count() and
// the sums of the stats, per-agent groups, the agents' metrics (agentMetrics), today's spend per
// agent (dailySpend → agent_spend, what Sync pushes for budgets) and the tool counts (agent_tools).
// Also: refusals (other tenant, unknown agent, bad id or status) and the key's lastUsedAt.
import test from "ava";
import type { Trace } from "@agentgov/proto";
import { startStack, type Stack } from "../harness/stack.js";
import { makeTrace, uploadTraces } from "./traces-helpers.js";
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { IngestService, UploadRequestSchema, type UploadRequest } from "@agentgov/proto";

let stack: Stack;
let ingestKey = "";
let ingestKeyId = "";
const agentIds: string[] = [];
let traces: Trace[] = [];
const TOOLS = ["search", "lookup", "send_email"];

const utcDay = () => new Date().toISOString().slice(0, 10);

test.before(async () => {
  stack = await startStack();
  for (const name of ["idem-a", "idem-b"]) {
    agentIds.push((await stack.api.post<{ data: { id: string } }>("/api/agents", { name, configYaml: "budget_limit_daily: 100\n" })).body.data.id);
  }
  const key = await stack.api.post<{ data: { id: string; key: string } }>("/api/keys", { name: "idem sidecar", scope: "ingest" });
  ingestKey = key.body.data.key;
  ingestKeyId = key.body.data.id;
  const now = Date.now();
  traces = Array.from({ length: 60 }, (_, i) =>
    makeTrace({
      tenantId: stack.cp.tenantId,
      agentId: agentIds[i % 2]!,
      atMs: now - 5000 + i * 50,
      status: i % 7 === 0 ? "error" : i % 11 === 0 ? "blocked" : "success",
      costUsd: 0.001 * (1 + (i % 5)),
      inputTokens: 100 + i,
      outputTokens: 10 + i,
      latencyMs: 50 + i * 3,
      tools: i % 3 === 0 ? [TOOLS[Math.floor(i / 3) % TOOLS.length]!] : i % 4 === 0 ? [TOOLS[0]!, TOOLS[1]!] : [],
    }),
  );
});
test.after.always(async () => {
  await stack?.stop();
});

interface Figures {
  listTotal: number;
  listIds: string[];
  stats: Record<string, number>;
  groups: Record<string, number>;
  metrics: Record<string, { requests_24h: number; cost_24h: number; total_requests: number }>;
  spend: Record<string, number>;
  storeSpend: Record<string, number>;
  tools: Record<string, Record<string, number>>;
}

async function figures(): Promise<Figures> {
  const list = await stack.api.get<{ data: { id: string }[]; total: number }>("/api/traces?limit=500");
  const stats = await stack.api.get<{ summary: Record<string, number> }>("/api/traces/stats?period=1h");
  const groups = await stack.api.get<{ groups: { agentId: string; traceCount: number }[] }>("/api/traces/stats?period=1h&groupBy=agent");
  const out: Figures = {
    listTotal: list.body.total,
    listIds: list.body.data.map((x) => x.id).sort(),
    stats: stats.body.summary,
    groups: Object.fromEntries(groups.body.groups.map((g) => [g.agentId, g.traceCount])),
    metrics: {},
    spend: {},
    storeSpend: Object.fromEntries(await stack.cp.traces.dailySpend(stack.cp.tenantId, utcDay())),
    tools: {},
  };
  const spend = await stack.cp.db.query<{ agent_id: string; spent_usd: number }>("SELECT agent_id, spent_usd FROM agent_spend WHERE tenant_id = $1 AND day = $2", [stack.cp.tenantId, utcDay()]);
  for (const r of spend.rows) out.spend[r.agent_id] = r.spent_usd;
  for (const id of agentIds) {
    const a = await stack.api.get<{ total_requests: number; metrics: { requests_24h: number; cost_24h: number } }>(`/v1/agents/${id}`);
    out.metrics[id] = { requests_24h: a.body.metrics.requests_24h, cost_24h: a.body.metrics.cost_24h, total_requests: a.body.total_requests };
    const tools = await stack.api.get<{ data: { toolName: string; callCount: number }[] }>(`/api/agents/${id}/tools?limit=500`);
    out.tools[id] = Object.fromEntries(tools.body.data.map((x) => [x.toolName, x.callCount]));
  }
  return out;
}

function expectedFigures(xs: Trace[]) {
  const sum = (f: (x: Trace) => number, ys = xs) => ys.reduce((s, x) => s + f(x), 0);
  const per = <T>(f: (ys: Trace[]) => T) => Object.fromEntries(agentIds.map((id) => [id, f(xs.filter((x) => x.agentId === id))]));
  return {
    total: xs.length,
    ids: xs.map((x) => x.id).sort(),
    totalCostUsd: sum((x) => x.costUsd),
    totalInputTokens: sum((x) => x.inputTokens),
    totalOutputTokens: sum((x) => x.outputTokens),
    errorCount: xs.filter((x) => x.status !== "success").length,
    groups: per((ys) => ys.length),
    cost: per((ys) => sum((x) => x.costUsd, ys)),
    tools: per((ys) => {
      const m: Record<string, number> = {};
      for (const y of ys) for (const c of y.toolCalls) m[c.name] = (m[c.name] ?? 0) + 1;
      return m;
    }),
  };
}

const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

function assertFigures(t: import("ava").ExecutionContext, f: Figures, xs: Trace[], when: string) {
  const e = expectedFigures(xs);
  t.is(f.listTotal, e.total, `${when}: list total`);
  t.deepEqual(f.listIds, e.ids, `${when}: listed ids`);
  t.is(f.stats.totalTraces, e.total, `${when}: count()`);
  t.is(f.stats.errorCount, e.errorCount, `${when}: errorCount`);
  t.is(f.stats.totalInputTokens, e.totalInputTokens, `${when}: input tokens`);
  t.is(f.stats.totalOutputTokens, e.totalOutputTokens, `${when}: output tokens`);
  t.true(close(f.stats.totalCostUsd!, e.totalCostUsd), `${when}: total cost ${f.stats.totalCostUsd} vs ${e.totalCostUsd}`);
  t.deepEqual(f.groups, e.groups, `${when}: per-agent trace counts`);
  for (const id of agentIds) {
    t.is(f.metrics[id]!.requests_24h, e.groups[id]!, `${when}: requests_24h`);
    t.is(f.metrics[id]!.total_requests, e.groups[id]!, `${when}: total_requests`);
    t.true(close(f.metrics[id]!.cost_24h, e.cost[id]!), `${when}: cost_24h`);
    t.true(close(f.storeSpend[id]!, e.cost[id]!), `${when}: dailySpend ${f.storeSpend[id]} vs ${e.cost[id]}`);
    t.true(close(f.spend[id]!, e.cost[id]!), `${when}: agent_spend ${f.spend[id]} vs ${e.cost[id]}`);
    t.deepEqual(f.tools[id], e.tools[id], `${when}: tool counts`);
  }
}

test.serial("a trace delivered twice is stored and counted once, however the copies arrive", async (t) => {
  const first = traces.slice(0, 40);
  const r1 = await uploadTraces(stack.cp.grpcUrl, ingestKey, first, { batch: 10 });
  t.is(r1.acked.size, 40);
  assertFigures(t, await figures(), first, "first delivery");

  // The same traces again, in other batches, on a new stream.
  const r2 = await uploadTraces(stack.cp.grpcUrl, ingestKey, first, { batch: 7 });
  t.is(r2.acked.size, 40);
  assertFigures(t, await figures(), first, "redelivery");

  // Copies inside one batch, and new traces mixed with old ones.
  const next = traces.slice(40);
  const mixed = [...next, ...next.slice(0, 5), ...first.slice(0, 5)];
  const r3 = await uploadTraces(stack.cp.grpcUrl, ingestKey, mixed, { batch: 500 });
  t.is(r3.acked.size, 25);
  assertFigures(t, await figures(), traces, "duplicates in one batch");

  // Two streams delivering everything at the same time.
  const [r4, r5] = await Promise.all([
    uploadTraces(stack.cp.grpcUrl, ingestKey, traces, { batch: 9 }),
    uploadTraces(stack.cp.grpcUrl, stack.adminKey, [...traces].reverse(), { batch: 13 }),
  ]);
  t.is(r4.acked.size, traces.length);
  t.is(r5.acked.size, traces.length);
  assertFigures(t, await figures(), traces, "two concurrent streams");
});

test.serial("traces of another tenant, of unknown agents, with bad ids or statuses are rejected for good; the rest are acknowledged", async (t) => {
  const tenantId = stack.cp.tenantId;
  const ok = makeTrace({ tenantId, agentId: agentIds[0]!, atMs: Date.now() - 100 });
  const foreign = makeTrace({ tenantId: "ten_01JD3Z6Q4W8X9Y0Z1A2B3C4D5E", agentId: agentIds[0]!, atMs: Date.now() - 100 });
  const unknownAgent = makeTrace({ tenantId, agentId: "agt_01JD3Z6Q4W8X9Y0Z1A2B3C4D5E", atMs: Date.now() - 100 });
  const badId = { ...makeTrace({ tenantId, agentId: agentIds[0]!, atMs: Date.now() - 100 }), id: "trace-1" };
  const badStatus = { ...makeTrace({ tenantId, agentId: agentIds[0]!, atMs: Date.now() - 100 }), status: "weird" };
  const badTime = { ...makeTrace({ tenantId, agentId: agentIds[0]!, atMs: Date.now() - 100 }), timestampMs: -5n };
  // Values Postgres cannot hold must not stall ingest (they would fail every retry).
  const nulAgent = makeTrace({ tenantId, agentId: "agt_\0", atMs: Date.now() - 100 });
  const badKey = { ...makeTrace({ tenantId, agentId: agentIds[0]!, atMs: Date.now() - 100 }), keyId: "key_\0" };
  const nulTool = makeTrace({ tenantId, agentId: agentIds[0]!, atMs: Date.now() - 100, tools: ["bad\0tool"] });
  const r = await uploadTraces(stack.cp.grpcUrl, ingestKey, [ok, foreign, unknownAgent, badId, badStatus, badTime, nulAgent, badKey, nulTool]);
  t.deepEqual([...r.acked].sort(), [ok.id, nulTool.id].sort());
  t.deepEqual(Object.fromEntries(r.rejected), {
    [nulAgent.id]: "unknown agent",
    [badKey.id]: "invalid key id",
    [foreign.id]: "trace belongs to another tenant",
    [unknownAgent.id]: "unknown agent",
    "trace-1": "invalid trace id",
    [badStatus.id]: 'invalid status "weird"',
    [badTime.id]: "timestamp_ms out of range",
  });
  t.is((await stack.api.get(`/api/traces/${ok.id}`)).status, 200);
  const tools = await stack.api.get<{ data: { toolName: string }[] }>(`/api/agents/${agentIds[0]}/tools?limit=500`);
  t.true(tools.body.data.some((x) => x.toolName === "bad\uFFFDtool"), "a NUL in a tool name is stored as U+FFFD");
  for (const x of [foreign, unknownAgent, badStatus, badTime]) t.is((await stack.api.get(`/api/traces/${x.id}`)).status, 404);
});

test.serial("uploading with a key sets its lastUsedAt; an agent-scoped or unknown key cannot upload", async (t) => {
  const keys = await stack.api.get<{ data: { id: string; lastUsedAt: string | null }[] }>("/api/keys?limit=500");
  const mine = keys.body.data.find((k) => k.id === ingestKeyId)!;
  t.not(mine.lastUsedAt, null);
  t.true(Date.now() - Date.parse(mine.lastUsedAt!) < 10 * 60_000);
  const agentKey = (await stack.api.post<{ data: { key: string } }>("/api/keys", { name: "reader", scope: "agent" })).body.data.key;
  const trace = makeTrace({ tenantId: stack.cp.tenantId, agentId: agentIds[0]!, atMs: Date.now() });
  await t.throwsAsync(uploadTraces(stack.cp.grpcUrl, agentKey, [trace], { deadlineMs: 1500 }));
  await t.throwsAsync(uploadTraces(stack.cp.grpcUrl, "svc_ingest_" + "x".repeat(40), [trace], { deadlineMs: 1500 }));
  t.is((await stack.api.get(`/api/traces/${trace.id}`)).status, 404);
});

test.serial("a key deleted while its Ingest stream is open stores nothing more: the next batch ends the stream Unauthenticated (review, session 16)", async (t) => {
  const key = (await stack.api.post<{ data: { id: string; key: string } }>("/api/keys", { name: "revoked mid-stream", scope: "ingest" })).body.data;
  const first = makeTrace({ tenantId: stack.cp.tenantId, agentId: agentIds[0]!, atMs: Date.now() });
  const second = makeTrace({ tenantId: stack.cp.tenantId, agentId: agentIds[0]!, atMs: Date.now() + 1 });
  const client = createClient(IngestService, createGrpcTransport({ baseUrl: stack.cp.grpcUrl }));
  let acked!: () => void;
  const firstAcked = new Promise<void>((r) => (acked = r));
  async function* requests(): AsyncGenerator<UploadRequest> {
    yield create(UploadRequestSchema, { batchId: 1n, traces: [first] });
    await firstAcked;
    t.is((await stack.api.call("DELETE", `/api/keys/${key.id}`)).status, 200);
    yield create(UploadRequestSchema, { batchId: 2n, traces: [second] });
    await new Promise((r) => setTimeout(r, 5000)); // keeps the stream open until the server ends it
  }
  const ids: string[] = [];
  const err = await t.throwsAsync(async () => {
    for await (const res of client.upload(requests(), { headers: { authorization: `Bearer ${key.key}` } })) {
      ids.push(...res.ackedTraceIds);
      if (res.batchId === 1n) acked();
    }
  });
  t.regex(String(err?.message), /revoked/);
  t.deepEqual(ids, [first.id]);
  t.is((await stack.api.get(`/api/traces/${first.id}`)).status, 200);
  t.is((await stack.api.get(`/api/traces/${second.id}`)).status, 404, "nothing stored after the deletion");
});
