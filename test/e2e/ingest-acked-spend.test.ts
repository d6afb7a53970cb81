// An Ingest acknowledgement carries, for each agent the batch charged today, the day's spend as the
// control plane counted it with the batch (UploadResponse.spend): the figure the sidecar's budget
// ledger retires the acknowledged traces against. It must include the batch, equal what Sync pushes
// (agent_spend), stay the same on redelivery, and leave out agents the batch did not charge today.
import test from "ava";
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { IngestService, UploadRequestSchema, type Trace, type UploadResponse } from "@agentgov/proto";
import { startStack, type Stack } from "../harness/stack.js";
import { makeTrace } from "./traces-helpers.js";

let stack: Stack;
let key = "";
let agentA = "";
let agentB = "";

test.before(async () => {
  stack = await startStack();
  agentA = (await stack.api.post<{ data: { id: string } }>("/api/agents", { name: "spend-a", configYaml: "budget_limit_daily: 10\n" })).body.data.id;
  agentB = (await stack.api.post<{ data: { id: string } }>("/api/agents", { name: "spend-b", configYaml: "budget_limit_daily: 10\n" })).body.data.id;
  key = (await stack.api.post<{ data: { key: string } }>("/api/keys", { name: "spend sidecar", scope: "ingest" })).body.data.key;
});
test.after.always(async () => {
  await stack?.stop();
});

async function uploadOne(traces: Trace[]): Promise<UploadResponse> {
  const client = createClient(IngestService, createGrpcTransport({ baseUrl: stack.cp.grpcUrl }));
  async function* requests() {
    yield create(UploadRequestSchema, { batchId: 1n, traces });
  }
  for await (const res of client.upload(requests(), { headers: { authorization: `Bearer ${key}` } })) return res;
  throw new Error("no acknowledgement");
}

const today = () => new Date().toISOString().slice(0, 10);
const micro = (usd: number) => Math.round(usd * 1e6);
const figures = (res: UploadResponse) => Object.fromEntries(res.spend.map((s) => [s.agentId, [s.day, micro(s.spentUsd)]]));

test.serial("each acknowledgement carries the charged agents' spend today including the batch; redelivery changes nothing", async (t) => {
  const now = Date.now();
  const trace = (agentId: string, costUsd: number, atMs = now) => makeTrace({ tenantId: stack.cp.tenantId, agentId, atMs, costUsd });
  const first = [trace(agentA, 0.01), trace(agentA, 0.02), trace(agentA, 0.03), trace(agentB, 0), trace(agentB, 5, now - 2 * 86_400_000)];
  const r1 = await uploadOne(first);
  t.deepEqual(new Set(r1.ackedTraceIds), new Set(first.map((x) => x.id)));
  t.deepEqual(figures(r1), { [agentA]: [today(), micro(0.06)] }, "B charged nothing today: no figure for it");

  const second = [trace(agentA, 0.04), trace(agentB, 0.5)];
  const r2 = await uploadOne(second);
  t.deepEqual(figures(r2), { [agentA]: [today(), micro(0.1)], [agentB]: [today(), micro(0.5)] });

  const again = await uploadOne(second);
  t.deepEqual(figures(again), figures(r2), "a redelivered batch is counted once");

  const stored = await stack.cp.db.query<{ agent_id: string; spent_usd: number }>("SELECT agent_id, spent_usd FROM agent_spend WHERE tenant_id = $1 AND day = $2", [stack.cp.tenantId, today()]);
  t.deepEqual(Object.fromEntries(stored.rows.map((r) => [r.agent_id, micro(r.spent_usd)])), { [agentA]: micro(0.1), [agentB]: micro(0.5) }, "the figures Sync pushes are the same");
});
