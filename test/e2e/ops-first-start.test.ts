// The first start's admin key is shown once (DESIGN.md §2): a first start that fails (a bad sidecar
// setting, a busy port) must not make a key nobody saw, which would leave the next start with none to show.
import test from "ava";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createTestDatabase, uniqueName } from "../harness/databases.js";

const repo = join(fileURLToPath(import.meta.url), "..", "..", "..");

function start(env: NodeJS.ProcessEnv): { line: Promise<Record<string, string>>; exited: Promise<number | null>; kill(): void; stderr(): string } {
  const child = spawn(process.execPath, [join(repo, "bin", "agentgov.js"), "start"], { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr.on("data", (c: Buffer) => (err += c.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const line = new Promise<Record<string, string>>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString("utf8");
      const l = out.split("\n").find((x) => x.startsWith("{"));
      if (l) resolve(JSON.parse(l) as Record<string, string>);
    });
    void exited.then((code) => reject(new Error(`exited ${code}`)));
  });
  line.catch(() => undefined);
  return { line, exited, kill: () => child.kill("SIGKILL"), stderr: () => err };
}

test("a failed first start makes no admin key; the first start that succeeds shows one, and it works", async (t) => {
  t.timeout(120_000);
  const dataDir = mkdtempSync(join(tmpdir(), "agentgov-first-start-"));
  const busy = createServer();
  await new Promise<void>((r) => busy.listen(0, "127.0.0.1", r));
  const busyPort = String((busy.address() as { port: number }).port);
  const base: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: dataDir,
    DATABASE_URL: await createTestDatabase(),
    CLICKHOUSE_DATABASE: uniqueName("agentgov"),
    ...(process.env.CLICKHOUSE_URL ? { CLICKHOUSE_URL: process.env.CLICKHOUSE_URL } : {}),
    PORT: "0",
    GRPC_PORT: "0",
    SIDECAR_PORT: "0",
  };
  try {
    const badSidecar = start({ ...base, SIDECAR_PORT: "abc" });
    t.not(await badSidecar.exited, 0);
    t.regex(badSidecar.stderr(), /SIDECAR_PORT/);
    const busyRest = start({ ...base, PORT: busyPort });
    t.not(await busyRest.exited, 0);
    t.regex(busyRest.stderr(), /EADDRINUSE/);
    const ok = start(base);
    const urls = await ok.line;
    t.regex(urls.apiKey ?? "", /^svc_api_/, "the first start that succeeds shows the admin key");
    const r = await fetch(`${urls.restUrl}/v1/agents`, { headers: { authorization: `Bearer ${urls.apiKey}` } });
    t.is(r.status, 200);
    ok.kill();
    await ok.exited;
  } finally {
    busy.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
