// A sidecar's spool damaged while it is down (a record with flipped bits in the middle of a segment, and
// a torn last record): at restart the damage is detected, the good records are replayed and delivered
// once the control plane is back (with the quality scores amended after each trace), and the bad bytes
// are kept in quarantine/ and reported in /readyz.
import test from "ava";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase } from "../harness/databases.js";
import { eventually } from "../harness/stack.js";
import { startFakeProviders } from "../fakes/providers/index.js";
import {
  apiClient, controlPlaneSpec, readiness, sidecarSpec, startControlPlaneProcess, startSidecarProcess, storedTraceIds,
  type ControlPlaneProcess, type SidecarProcess,
} from "../harness/processes.js";
import { HEADER_BYTES, scanRecords, traceKeyFields } from "../../data-plane/src/trace/spool-format.js";

type Fakes = Awaited<ReturnType<typeof startFakeProviders>>;
let fakes: Fakes;
let dir: string;
let cp: ControlPlaneProcess | undefined;
let sc: SidecarProcess | undefined;

test.before(async () => {
  fakes = await startFakeProviders({ text: "fine", usage: { inputTokens: 5, outputTokens: 2 } });
  dir = mkdtempSync(join(tmpdir(), "agentgov-spool-damage-"));
});
test.after.always(async () => {
  await sc?.kill9();
  await cp?.kill9();
  await fakes?.close();
  rmSync(dir, { recursive: true, force: true });
});

test("a damaged and truncated spool: good traces replayed and delivered, bad bytes quarantined", async (t) => {
  const spec = await controlPlaneSpec(join(dir, "cp"), await createTestDatabase());
  cp = await startControlPlaneProcess(spec);
  const api = await apiClient(cp.restUrl, spec.adminKey);
  const agentId = (await api.post<{ data: { id: string } }>("/api/agents", { name: "damaged-spool", modelProvider: "openai", modelName: "gpt-4o-mini" })).body.data.id;
  const key = (await api.post<{ data: { key: string } }>("/api/keys", { name: "sidecar", scope: "ingest" })).body.data.key;
  const since = new Date(Date.now() - 60_000);
  const scSpec = await sidecarSpec(join(dir, "sc"), cp.grpcUrl, key, { PROVIDER_OPENAI_URL: fakes.urls.openai });
  sc = await startSidecarProcess(scSpec, "sidecar-1");
  await eventually(async () => (await readiness(sc!.url)).connected, 30_000);

  // The control plane goes away: traces stay in the spool.
  await cp.kill9();
  const answered: string[] = [];
  for (let i = 0; i < 30; i++) {
    const r = await fetch(`${sc.url}/v1/proxy/openai/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-x", "x-service-key": key, "x-service-agent": agentId },
      body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: `request ${i}` }] }),
    });
    await r.arrayBuffer();
    t.is(r.status, 200);
    answered.push(r.headers.get("x-service-trace-id")!);
  }
  t.is((await readiness(sc.url)).spool.depth, 30);
  // The last answer's quality scores ride on the next trace's write or are written alone within
  // AMENDMENT_WRITE_DELAY_MS (20 ms; a crash before then loses them, never the trace): let it pass.
  await new Promise((r) => setTimeout(r, 200));
  await sc.kill9();

  // Damage the segment that holds them: flip bits in record #10, tear the last record.
  const spoolDir = join(scSpec.dataDir, "sidecar", "spool");
  const segments = readdirSync(spoolDir).filter((f) => f.endsWith(".log")).sort();
  const segPath = join(spoolDir, segments.find((f) => statSync(join(spoolDir, f)).size > 0)!);
  const bytes = Buffer.from(readFileSync(segPath));
  const all = scanRecords(bytes).records;
  t.deepEqual(all.map((r) => r.kind), answered.flatMap(() => ["trace", "amendment"]), "each trace is followed by its quality scores' amendment");
  const records = all.filter((r) => r.kind === "trace");
  const ids = records.map((r) => traceKeyFields(r.payload)!.id);
  t.deepEqual(ids, answered, "the spool holds the traces in answer order");
  const hit = records[10]!;
  bytes[hit.offset + HEADER_BYTES + 20]! ^= 0x5a;
  // torn in the middle of the last trace (its amendment after it is gone with it)
  const last = records.at(-1)!;
  writeFileSync(segPath, bytes.subarray(0, last.offset + Math.floor(last.length / 2)));
  const lost = new Set([ids[10], ids.at(-1)]);

  sc = await startSidecarProcess(scSpec, "sidecar-2");
  const r = await readiness(sc.url);
  t.is(r.spool.replayedTotal, 28);
  t.is(r.spool.quarantinedRanges, 2);
  t.is(r.spool.quarantinedBytes, hit.length + Math.floor(last.length / 2));
  const quarantine = readdirSync(join(spoolDir, "quarantine"));
  t.is(quarantine.length, 2);
  t.true(sc.logTail(200).includes("quarantined"), "the damage is logged");

  cp = await startControlPlaneProcess(spec, "control-plane-2");
  const expected = answered.filter((id) => !lost.has(id));
  const stored = await eventually(
    async () => {
      const got = await storedTraceIds(api, agentId, since);
      return expected.every((id) => got.includes(id)) ? got : undefined;
    },
    60_000,
    500,
  );
  t.deepEqual([...stored].sort(), [...expected].sort(), "every good trace once; the damaged ones are not invented");
  // The amendments were replayed onto their traces, also the one after the damaged trace's (whose amendment, without its trace, is dropped).
  for (const id of [expected[0]!, expected[10]!, expected.at(-1)!]) {
    const got = await api.get<{ data: { qualityScores: { scorer: string }[]; spans: { stage: string }[] } }>(`/api/traces/${id}`);
    t.true(got.body.data.qualityScores.some((q) => q.scorer === "relevance"), `${id}: quality scores`);
    t.true(got.body.data.spans.some((x) => x.stage === "quality_score"), `${id}: quality_score span`);
  }
  await eventually(async () => (await readiness(sc!.url)).spool.depth === 0, 30_000);
  t.true(readdirSync(spoolDir).filter((f) => f === segPath.split("/").at(-1)).length === 0, "the damaged segment is compacted once its good traces are acknowledged");
  t.is(readdirSync(join(spoolDir, "quarantine")).length, 2, "quarantined bytes are kept for inspection");
});
