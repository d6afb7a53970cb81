// Supervision of the embedded Postgres (`npm start` without DATABASE_URL; QA, session 25: once it was
// killed, the control plane ran on without a database, every REST call answering 500): a Postgres that
// exits unexpectedly is restarted on the same data directory and port, and the pool of the control
// plane serves writes again; our own stop is never taken for a crash; a Postgres that cannot be
// started again is reported (by default the process exits 1, for a supervisor to restart it).
import test from "ava";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadControlPlaneConfig } from "../../config/env.js";
import { generateApiKey } from "../../domain/api-keys.js";
import { startControlPlane, type ControlPlane } from "../../main.js";
import { openDb } from "./db.js";
import { connectionFilePath, startEmbeddedPostgres, RESTART_ATTEMPTS, type EmbeddedPostgresHandle } from "./embedded.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const dataDir = mkdtempSync(join(tmpdir(), "agentgov-embedded-supervision-"));
const postmasterPid = () => Number(readFileSync(join(dataDir, "postgres", "postmaster.pid"), "utf8").split("\n")[0]);
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until(what: string, cond: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(50);
  }
}

const logs: string[] = [];
const giveUps: string[] = [];
const start = () => startEmbeddedPostgres(dataDir, (m) => logs.push(m), { onGiveUp: (r) => giveUps.push(r), restartDelaysMs: [100, 200] });
let pgHandle: EmbeddedPostgresHandle | undefined;

test.after.always(async () => {
  await pgHandle?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test.serial("a killed embedded Postgres is restarted on the same data directory and port; the pool writes again", async (t) => {
  t.timeout(60_000);
  pgHandle = await start();
  const db = openDb(pgHandle.url, 4);
  try {
    await db.query("CREATE TABLE notes (n int)");
    await db.query("INSERT INTO notes VALUES (1)");
    const before = postmasterPid();
    process.kill(before, "SIGKILL");
    await until("the killed postmaster is gone", () => !alive(before));
    // Writes fail while it is down (the REST layer answers 503), then succeed once it is back.
    let wrote = false;
    await until("a write succeeds again", async () => {
      wrote = await db.query("INSERT INTO notes VALUES (2)").then(
        () => true,
        () => false,
      );
      return wrote;
    });
    t.not(postmasterPid(), before, "a new postmaster");
    t.deepEqual((await db.query<{ n: number }>("SELECT n FROM notes ORDER BY n")).rows, [{ n: 1 }, { n: 2 }], "same data directory: the row written before the kill is there");
    t.truthy(logs.find((l) => /exited unexpectedly \(SIGKILL\); restarting/.test(l)), logs.join("\n"));
    t.truthy(logs.find((l) => /restarted \(pid \d+\)/.test(l)), logs.join("\n"));
    t.deepEqual(giveUps, []);
    t.log(logs.join("\n"));
    t.is(JSON.parse(readFileSync(connectionFilePath(dataDir), "utf8")).url, pgHandle.url, "CLI commands still find it");
  } finally {
    await db.close();
  }
});

test.serial("our own stop is not a crash: nothing restarts Postgres afterwards", async (t) => {
  t.timeout(30_000);
  const pid = postmasterPid();
  logs.length = 0;
  await pgHandle!.stop();
  pgHandle = undefined;
  t.false(alive(pid));
  await sleep(1000); // longer than every restart delay
  t.deepEqual(logs, []);
  t.deepEqual(giveUps, []);
});

test.serial("a Postgres that cannot be started again is given up on after the restart attempts, with Postgres's reason; stop() still returns", async (t) => {
  t.timeout(60_000);
  pgHandle = await start();
  const port = Number(new URL(pgHandle.url).port);
  const pid = postmasterPid();
  logs.length = 0;
  process.kill(pid, "SIGKILL");
  await until("the killed postmaster is gone", () => !alive(pid));
  // Its port taken by someone else (on every address "localhost" has): Postgres cannot listen.
  const squatters: Server[] = [];
  for (const host of ["127.0.0.1", "::1"]) {
    const s = createServer();
    const ok = await new Promise<boolean>((r) => {
      s.once("error", () => r(false));
      s.listen(port, host, () => r(true));
    });
    if (ok) squatters.push(s);
  }
  try {
    t.true(squatters.length > 0);
    await until("given up", () => giveUps.length > 0, 45_000);
    t.log(giveUps[0]);
    t.regex(giveUps[0]!, new RegExp(`could not be restarted \\(${RESTART_ATTEMPTS} attempts; last: .*(could not|bind|address)`, "i"));
    t.is(logs.filter((l) => /restart attempt \d+ of/.test(l)).length, RESTART_ATTEMPTS);
  } finally {
    for (const s of squatters) await new Promise((r) => s.close(r));
  }
  await pgHandle.stop();
  pgHandle = undefined;
});

test.serial("the control plane on its embedded Postgres (as `npm start` runs it): while Postgres is restarted REST writes answer 503, never 500, then succeed", async (t) => {
  t.timeout(90_000);
  const cpDir = mkdtempSync(join(tmpdir(), "agentgov-embedded-cp-"));
  const adminKey = generateApiKey("api");
  let cp: ControlPlane | undefined;
  try {
    cp = await startControlPlane(loadControlPlaneConfig({ DATA_DIR: cpDir, PORT: "0", GRPC_PORT: "0", BOOTSTRAP_API_KEY: adminKey, LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent" }));
    let n = 0;
    const create = async () => {
      const res = await fetch(`${cp!.restUrl}/api/agents`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
        body: JSON.stringify({ name: `agent-${++n}` }),
      });
      return { status: res.status, retryAfter: res.headers.get("retry-after"), body: await res.text() };
    };
    t.is((await create()).status, 201);
    const pid = Number(readFileSync(join(cpDir, "postgres", "postmaster.pid"), "utf8").split("\n")[0]);
    process.kill(pid, "SIGKILL");
    await until("the killed postmaster is gone", () => !alive(pid));
    const answers: string[] = [];
    let last = 0;
    await until("a write succeeds again", async () => {
      const r = await create();
      last = r.status;
      if (r.status !== 201) answers.push(`${r.status} retry-after=${r.retryAfter} ${r.body}`);
      return r.status === 201;
    });
    t.is(last, 201);
    t.log(`${answers.length} answers before Postgres was back`, answers[0] ?? "");
    t.deepEqual(
      answers.filter((a) => !a.startsWith("503 retry-after=2 ")),
      [],
      "every answer while Postgres was down is a retryable 503",
    );
    const list = await fetch(`${cp.restUrl}/api/agents?limit=100`, { headers: { authorization: `Bearer ${adminKey}` } });
    t.is(((await list.json()) as { total: number }).total, 2, "the first agent, and the write that succeeded after: the 503s wrote nothing");
  } finally {
    await cp?.stop();
    rmSync(cpDir, { recursive: true, force: true });
  }
});
