// kill -9 of the sidecar (a real child process) in the middle of a load of proxied requests, twice, then
// restart on the same DATA_DIR: every request that received a response has exactly one stored trace
// (the response's last bytes wait for the trace to be written to the spool; the restarted sidecar replays it).
import test from "ava";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase } from "../harness/databases.js";
import { eventually } from "../harness/stack.js";
import { startFakeProviders } from "../fakes/providers/index.js";
import {
  apiClient, controlPlaneSpec, readiness, sidecarSpec, startControlPlaneProcess, startLoad, startSidecarProcess, storedTraceIds,
  type ControlPlaneProcess, type SidecarProcess,
} from "../harness/processes.js";

type Fakes = Awaited<ReturnType<typeof startFakeProviders>>;
let fakes: Fakes;
let dir: string;
let cp: ControlPlaneProcess | undefined;
let sc: SidecarProcess | undefined;

test.before(async () => {
  fakes = await startFakeProviders({ text: "fine", usage: { inputTokens: 5, outputTokens: 2 } });
  dir = mkdtempSync(join(tmpdir(), "agentgov-resilience-sc-"));
});
test.after.always(async () => {
  await sc?.kill9();
  await cp?.stop();
  await fakes?.close();
  rmSync(dir, { recursive: true, force: true });
});

test("kill -9 of the sidecar under load: every answered request has exactly one trace after restart", async (t) => {
  const spec = await controlPlaneSpec(join(dir, "cp"), await createTestDatabase());
  cp = await startControlPlaneProcess(spec);
  const api = await apiClient(cp.restUrl, spec.adminKey);
  const agent = await api.post<{ data: { id: string } }>("/api/agents", { name: "kill-target", modelProvider: "openai", modelName: "gpt-4o-mini" });
  const agentId = agent.body.data.id;
  const key = (await api.post<{ data: { key: string } }>("/api/keys", { name: "sidecar", scope: "ingest" })).body.data.key;
  const since = new Date(Date.now() - 60_000);

  const scSpec = await sidecarSpec(join(dir, "sc"), cp.grpcUrl, key, { PROVIDER_OPENAI_URL: fakes.urls.openai });
  sc = await startSidecarProcess(scSpec, "sidecar-1");
  await eventually(async () => (await readiness(sc!.url)).status === "ready", 30_000);

  const load = startLoad({ url: () => sc!.url, key, agentId, concurrency: 8 });
  for (let round = 2; round <= 3; round++) {
    await load.answeredAtLeast(150);
    await sc.kill9();
    t.log(`sidecar killed with ${load.result().answered.length} answered requests so far`);
    sc = await startSidecarProcess(scSpec, `sidecar-${round}`);
  }
  await load.answeredAtLeast(150);
  const result = await load.stop();
  t.true(result.failed > 0, "requests were cut by the kills (the kills happened under load)");
  t.log(`answered ${result.answered.length}, failed ${result.failed}, statuses ${JSON.stringify(result.statuses)}`);

  const answered = new Set(result.answered);
  t.is(answered.size, result.answered.length, "trace ids are unique per response");
  const stored = await eventually(
    async () => {
      const ids = await storedTraceIds(api, agentId, since);
      return result.answered.every((id) => ids.includes(id)) ? ids : undefined;
    },
    90_000,
    500,
  ).catch((e: unknown) => {
    t.log(sc?.logTail(60));
    throw e;
  });
  t.is(new Set(stored).size, stored.length, "no trace is listed twice");
  // Requests cut by a kill got no response; their traces may or may not exist (at most one per request in flight).
  const extra = stored.filter((id) => !answered.has(id));
  t.true(extra.length <= 2 * 8, `traces without a response: ${extra.length}`);

  const r = await eventually(async () => {
    const x = await readiness(sc!.url);
    return x.spool.depth === 0 ? x : undefined;
  }, 30_000);
  t.is(r.spool.droppedTotal, 0);
  t.is(r.spool.quarantinedRanges, 0);
});
