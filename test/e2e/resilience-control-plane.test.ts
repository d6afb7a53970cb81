// The control plane (a real child process on its own Postgres database and trace store) dies under load:
// the sidecar keeps proxying and enforcing from its snapshot, spools the traces, and once the control
// plane is back (same DATA_DIR: chDB allows one process per directory) every trace arrives exactly once
// and Sync resumes with deltas, no new full snapshot. Then the sidecar starts while the control plane
// is down and serves from its persisted snapshot (fail static).
import test from "ava";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase } from "../harness/databases.js";
import { eventually, type ApiClient } from "../harness/stack.js";
import { startFakeProviders } from "../fakes/providers/index.js";
import {
  apiClient, controlPlaneSpec, readiness, sidecarSpec, startControlPlaneProcess, startLoad, startSidecarProcess, storedTraceIds,
  type ControlPlaneProcess, type ControlPlaneSpec, type SidecarProcess, type SidecarSpec,
} from "../harness/processes.js";

type Fakes = Awaited<ReturnType<typeof startFakeProviders>>;
let fakes: Fakes;
let dir: string;
let spec: ControlPlaneSpec;
let cp: ControlPlaneProcess | undefined;
let sc: SidecarProcess | undefined;
let scSpec: SidecarSpec;
let api: ApiClient;
let agentId: string;
let key: string;
const since = new Date(Date.now() - 60_000);

async function proxy(content: string): Promise<{ status: number; traceId: string | null; body: { error?: { code?: string } } }> {
  const r = await fetch(`${sc!.url}/v1/proxy/openai/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-x", "x-service-key": key, "x-service-agent": agentId },
    body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content }] }),
  });
  return { status: r.status, traceId: r.headers.get("x-service-trace-id"), body: (await r.json()) as { error?: { code?: string } } };
}

async function allStored(ids: readonly string[]): Promise<string[]> {
  return eventually(
    async () => {
      const stored = await storedTraceIds(api, agentId, since);
      return ids.every((id) => stored.includes(id)) ? stored : undefined;
    },
    90_000,
    500,
  );
}

test.before(async () => {
  fakes = await startFakeProviders({ text: "fine", usage: { inputTokens: 5, outputTokens: 2 } });
  dir = mkdtempSync(join(tmpdir(), "agentgov-resilience-cp-"));
  spec = await controlPlaneSpec(join(dir, "cp"), await createTestDatabase());
  cp = await startControlPlaneProcess(spec, "control-plane-1");
  api = await apiClient(cp.restUrl, spec.adminKey);
  agentId = (await api.post<{ data: { id: string } }>("/api/agents", { name: "cp-outage", modelProvider: "openai", modelName: "gpt-4o-mini" })).body.data.id;
  const policy = await api.post("/v1/policies", { name: "no SSN", action: "block", priority: 1, conditions: { direction: "inbound", pii_types: ["ssn"] } });
  if (policy.status !== 201) throw new Error(`policy: ${JSON.stringify(policy.body)}`);
  key = (await api.post<{ data: { key: string } }>("/api/keys", { name: "sidecar", scope: "ingest" })).body.data.key;
  scSpec = await sidecarSpec(join(dir, "sc"), cp.grpcUrl, key, { PROVIDER_OPENAI_URL: fakes.urls.openai });
  sc = await startSidecarProcess(scSpec, "sidecar-1");
  await eventually(async () => {
    const r = await readiness(sc!.url);
    return r.connected && r.sync.snapshots === 1;
  }, 30_000);
});
test.after.always(async () => {
  await sc?.kill9();
  await cp?.kill9();
  await fakes?.close();
  rmSync(dir, { recursive: true, force: true });
});

test.serial("kill -9 of the control plane under load: proxying continues, every trace arrives exactly once, Sync resumes without a snapshot", async (t) => {
  const load = startLoad({ url: () => sc!.url, key, agentId, concurrency: 6 });
  await load.answeredAtLeast(100);
  await cp!.kill9();
  const atKill = load.result().answered.length;
  await load.answeredAtLeast(150);
  const down = await eventually(async () => {
    const r = await readiness(sc!.url);
    return !r.connected && r.spool.depth > 0 ? r : undefined;
  }, 30_000);
  t.is(down.status, "ready");
  const blocked = await proxy("my SSN is 536-22-8726");
  t.is(blocked.status, 403, "policies are still enforced from the snapshot");
  t.is(blocked.body.error?.code, "policy_violation");
  t.log(`answered ${atKill} before the kill, ${load.result().answered.length} now; spool depth ${down.spool.depth}`);

  cp = await startControlPlaneProcess(spec, "control-plane-2");
  await load.answeredAtLeast(100);
  const result = await load.stop();
  t.is(result.failed, 0, "no request failed while the control plane was down");
  const expected = [...result.answered, blocked.traceId!];
  const stored = await allStored(expected);
  t.is(new Set(stored).size, stored.length, "no trace is listed twice");
  t.deepEqual([...stored].sort(), [...expected].sort(), "exactly the answered requests' traces, each once");

  const r = await eventually(async () => {
    const x = await readiness(sc!.url);
    return x.connected && x.spool.depth === 0 ? x : undefined;
  }, 30_000);
  t.is(r.sync.snapshots, 1, "the sidecar resumed from its version: no second full snapshot");
  t.true(r.sync.reconnects >= 1);

  // A change made through the restarted control plane reaches the sidecar as a delta.
  const kw = await api.post<{ id: string }>("/v1/policies", { name: "no launch codes", action: "block", priority: 2, conditions: { direction: "inbound", keywords: ["launch-code"] } });
  t.is(kw.status, 201);
  await eventually(async () => (await proxy("the launch-code is 0000")).status === 403, 15_000);
  const after = await readiness(sc!.url);
  t.is(after.sync.snapshots, 1);
  t.true(after.sync.deltas >= 1);
});

test.serial("the control plane is down when the sidecar starts: it serves and enforces from its persisted snapshot", async (t) => {
  t.is(await sc!.stop(), 0, "graceful stop");
  await cp!.kill9();
  sc = await startSidecarProcess(scSpec, "sidecar-2");
  const r = await readiness(sc.url);
  t.is(r.status, "ready");
  t.false(r.connected);
  t.true(r.snapshotAgeMs !== null && r.snapshotAgeMs >= 0, "the snapshot's age is reported");
  const ok = await proxy("hello while the control plane is away");
  t.is(ok.status, 200);
  const blocked = await proxy("my SSN is 536-22-8726");
  t.is(blocked.status, 403);
  const kw = await proxy("the launch-code is 1234");
  t.is(kw.status, 403, "the policy learnt by delta was persisted too");
  const metrics = await (await fetch(`${sc.url}/metrics`)).text();
  t.regex(metrics, /^agentgov_sync_connected 0$/m);
  t.regex(metrics, /^agentgov_spool_depth 3$/m);
  t.regex(metrics, /^agentgov_sync_snapshot_age_seconds \d/m);

  cp = await startControlPlaneProcess(spec, "control-plane-3");
  await allStored([ok.traceId!, blocked.traceId!, kw.traceId!]);
  const back = await eventually(async () => {
    const x = await readiness(sc!.url);
    return x.connected && x.spool.depth === 0 ? x : undefined;
  }, 30_000);
  t.is(back.sync.snapshots, 0, "resumed from the persisted snapshot's version");
  t.true(back.snapshotAgeMs !== null && back.snapshotAgeMs < 15_000);
});
