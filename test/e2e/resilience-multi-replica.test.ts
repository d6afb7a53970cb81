// Two control-plane processes on one Postgres database: a policy changed through replica A reaches the
// sidecar connected to replica B (Postgres LISTEN/NOTIFY), which enforces it; so do its update and its
// deletion, and an agent created through A.
import test from "ava";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase } from "../harness/databases.js";
import { eventually } from "../harness/stack.js";
import { startFakeProviders } from "../fakes/providers/index.js";
import { apiClient, controlPlaneSpec, readiness, sidecarSpec, startControlPlaneProcess, startSidecarProcess, type ChildHandle } from "../harness/processes.js";

type Fakes = Awaited<ReturnType<typeof startFakeProviders>>;
let fakes: Fakes;
let dir: string;
const procs: ChildHandle[] = [];

test.before(async () => {
  fakes = await startFakeProviders({ text: "fine", usage: { inputTokens: 5, outputTokens: 2 } });
  dir = mkdtempSync(join(tmpdir(), "agentgov-replicas-"));
});
test.after.always(async () => {
  for (const p of procs.reverse()) await p.kill9();
  await fakes?.close();
  rmSync(dir, { recursive: true, force: true });
});

test("a policy changed through one replica is enforced by a sidecar connected to the other", async (t) => {
  const databaseUrl = await createTestDatabase();
  const specA = await controlPlaneSpec(join(dir, "cp-a"), databaseUrl);
  // Same database, same bootstrap key and trace database name; its own DATA_DIR (chDB: one process per directory).
  const specB = { ...(await controlPlaneSpec(join(dir, "cp-b"), databaseUrl, specA.adminKey, specA.clickhouseDatabase)) };
  const a = await startControlPlaneProcess(specA, "replica-a");
  procs.push(a);
  const b = await startControlPlaneProcess(specB, "replica-b");
  procs.push(b);
  const apiA = await apiClient(a.restUrl, specA.adminKey);

  const agentId = (await apiA.post<{ data: { id: string } }>("/api/agents", { name: "replicated", modelProvider: "openai", modelName: "gpt-4o-mini" })).body.data.id;
  const key = (await apiA.post<{ data: { key: string } }>("/api/keys", { name: "sidecar on B", scope: "ingest" })).body.data.key;
  const sc = await startSidecarProcess(await sidecarSpec(join(dir, "sc"), b.grpcUrl, key, { PROVIDER_OPENAI_URL: fakes.urls.openai }));
  procs.push(sc);
  await eventually(async () => (await readiness(sc.url)).connected, 30_000);

  const call = async (content: string, agent = agentId) => {
    const r = await fetch(`${sc.url}/v1/proxy/openai/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-x", "x-service-key": key, "x-service-agent": agent },
      body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content }] }),
    });
    await r.arrayBuffer();
    return r.status;
  };
  t.is(await call("mention the secret-project please"), 200);

  const t0 = Date.now();
  const created = await apiA.post<{ id: string }>("/v1/policies", { name: "secret project", action: "block", priority: 1, conditions: { direction: "inbound", keywords: ["secret-project"] } });
  t.is(created.status, 201);
  // Within 5 s: B's streams re-read the change log on their own only every 10 s (heartbeat), so this
  // is the NOTIFY from A's commit waking B.
  await eventually(async () => (await call("mention the secret-project please")) === 403, 5_000, 10);
  t.log(`policy created on A enforced by the sidecar on B after ${Date.now() - t0} ms`);
  t.is(await call("an innocent question"), 200);

  const updated = await apiA.call("PATCH", `/v1/policies/${created.body.id}`, { conditions: { direction: "inbound", keywords: ["other-words"] } });
  t.is(updated.status, 200);
  await eventually(async () => (await call("mention the secret-project please")) === 200, 15_000);
  t.is(await call("say other-words"), 403);

  t.is((await apiA.call("DELETE", `/v1/policies/${created.body.id}`)).status, 204);
  await eventually(async () => (await call("say other-words")) === 200, 15_000);

  const second = (await apiA.post<{ data: { id: string } }>("/api/agents", { name: "created on A", modelProvider: "openai", modelName: "gpt-4o-mini" })).body.data.id;
  await eventually(async () => (await call("hello", second)) === 200, 15_000);
  t.is((await readiness(sc.url)).sync.snapshots, 1, "all of it arrived as deltas");
});
