// The response gate's three settings through a real sidecar (SPOOL_GATE, SPOOL_COMMIT_WAIT_MS): each
// answers and delivers the trace; with the gate on, every answer was held until its trace was written
// (write, the default) or fdatasync'd (fsync) — so its trace is in the spool file when the client has the
// answer — and with the gate off none was held.
import test from "ava";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startStack, eventually, type Stack } from "../harness/stack.js";
import { startFakeProviders } from "../fakes/providers/index.js";

type Fakes = Awaited<ReturnType<typeof startFakeProviders>>;
let stack: Stack;
let fakes: Fakes;
let agentId: string;

test.before(async () => {
  fakes = await startFakeProviders({ text: "held or not", usage: { inputTokens: 5, outputTokens: 3 } });
  stack = await startStack();
  agentId = (await stack.api.post<{ data: { id: string } }>("/api/agents", { name: "gate-modes", modelProvider: "openai", modelName: "gpt-4o-mini" })).body.data.id;
});
test.after.always(async () => {
  await stack?.stop();
  await fakes?.close();
});

/** Bytes of every spool segment of a sidecar's DATA_DIR. */
function spoolBytes(dataDir: string): Buffer {
  const dir = join(dataDir, "sidecar", "spool");
  return Buffer.concat(readdirSync(dir).filter((f) => f.endsWith(".log")).sort().map((f) => readFileSync(join(dir, f))));
}

const modes: { name: string; env: Record<string, string>; held: boolean }[] = [
  { name: "write (default)", env: {}, held: true },
  { name: "fsync", env: { SPOOL_GATE: "fsync", SPOOL_FSYNC_INTERVAL_MS: "0" }, held: true },
  { name: "off", env: { SPOOL_COMMIT_WAIT_MS: "0" }, held: false },
];
for (const mode of modes) {
  test.serial(`gate ${mode.name}: answers, traces delivered, answers held only with the gate on`, async (t) => {
    const dataDir = join(stack.dataDir, `gate-${mode.name.split(" ")[0]!}`);
    const sc = await stack.sidecar({ PROVIDER_OPENAI_URL: fakes.urls.openai, DATA_DIR: dataDir, SHUTDOWN_TIMEOUT_MS: "2000", ...mode.env });
    await eventually(async () => sc.state().agents.has(agentId));
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${sc.url}/v1/proxy/openai/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer sk-x", "x-service-key": stack.adminKey, "x-service-agent": agentId },
        body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: `gate mode ${mode.name} call ${i}` }] }),
      });
      t.is(res.status, 200);
      await res.text();
      const traceId = res.headers.get("x-service-trace-id")!;
      // With the gate on, the trace is in the spool file by the time the client has the whole answer.
      if (mode.held) t.true(spoolBytes(dataDir).includes(traceId), `trace ${traceId} spooled before its answer completed`);
    }
    await eventually(async () => sc.queue.size() === 0 && sc.queue.stats().ackedTotal === 5, 20_000);
    const readyz = (await (await fetch(`${sc.url}/readyz`)).json()) as { responses: { gated: number; timedOut: number; heldMaxMs: number } };
    t.is(readyz.responses.gated, mode.held ? 5 : 0);
    t.is(readyz.responses.timedOut, 0);
    if (!mode.held) t.is(readyz.responses.heldMaxMs, 0);
  });
}
