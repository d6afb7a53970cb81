// DATA_DIR holds the trace store (chDB: every prompt and completion), the embedded Postgres and their
// secrets: after `agentgov start` no other local user may list it or read chDB's files (security audit,
// session 17: chdb/ was 0755 with 0644 files). DATA_DIR is 0700, or 0711 when the embedded Postgres runs
// as the `postgres` user (the start ran as root): traversable to DATA_DIR/postgres, which it owns, not
// listable. A DATA_DIR and chdb/ an older version left 0755 are tightened on start.
import test, { type ExecutionContext } from "ava";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { generateApiKey } from "@agentgov/control-plane";
import { createTestDatabase, uniqueName } from "../harness/databases.js";

const repo = join(fileURLToPath(import.meta.url), "..", "..", "..");
const asRoot = process.getuid?.() === 0;
const mode = (path: string) => statSync(path).mode & 0o777;

/** `agentgov start` on `env` until it printed its URLs; then SIGTERM (a graceful stop: the embedded Postgres stops too). */
async function whileStarted(env: NodeJS.ProcessEnv, check: () => void): Promise<void> {
  const child = spawn(process.execPath, [join(repo, "bin", "agentgov.js"), "start"], { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  try {
    await new Promise<void>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (c: Buffer) => {
        out += c.toString("utf8");
        if (out.split("\n").some((l) => l.startsWith("{"))) resolve();
      });
      void exited.then((code) => reject(new Error(`agentgov start exited (${code}):\n${stderr.slice(-3000)}`)));
    });
    check();
  } finally {
    if (child.exitCode === null) child.kill("SIGTERM");
    await exited;
  }
}

/** Every regular file under `dir` (read as this user). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/** Exit status of `sh -c command` as the unprivileged `postgres` user. */
const asPostgres = (command: string) => spawnSync("su", ["postgres", "-s", "/bin/sh", "-c", command], { stdio: "ignore" }).status;

/** The chDB files exist and, when the test runs as root, the `postgres` user can neither list DATA_DIR nor read one of them. */
function unreadableByOthers(t: ExecutionContext, dataDir: string): void {
  const files = filesUnder(join(dataDir, "chdb"));
  t.true(files.length > 0, "chDB wrote its files");
  if (!asRoot) return;
  t.not(asPostgres(`ls '${dataDir}'`), 0, "another user cannot list DATA_DIR");
  for (const file of files.slice(0, 20)) t.not(asPostgres(`cat '${file}' > /dev/null`), 0, `another user cannot read ${file}`);
}

const baseEnv = (dataDir: string): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  DATA_DIR: dataDir,
  PORT: "0",
  GRPC_PORT: "0",
  SIDECAR_PORT: "0",
  BOOTSTRAP_API_KEY: generateApiKey("api"),
});

test.serial("embedded Postgres, DATA_DIR and chdb/ left 0755 by an older version: tightened to 0700 (0711 as root), postgres/ reachable by its owner only", async (t) => {
  t.timeout(150_000);
  const dataDir = mkdtempSync(join(tmpdir(), "agentgov-modes-embedded-"));
  chmodSync(dataDir, 0o755);
  for (const dir of [join(dataDir, "chdb"), join(dataDir, "chdb", "chdb"), join(dataDir, "sidecar")]) {
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
  }
  try {
    await whileStarted(baseEnv(dataDir), () => {
      // The bundled sidecar's state: snapshot, the spool of traces (prompts included), its LOCK.
      t.is(mode(join(dataDir, "sidecar")), 0o700, "sidecar/ (left 0755 by an older version)");
      t.is(mode(join(dataDir, "sidecar", "spool")), 0o700, "sidecar/spool/");
      t.is(mode(join(dataDir, "sidecar", "spool", "LOCK")), 0o600, "the spool's LOCK");
      t.is(mode(dataDir), asRoot ? 0o711 : 0o700, "DATA_DIR");
      t.is(mode(join(dataDir, "chdb")), 0o700, "chdb/");
      t.is(mode(join(dataDir, "chdb", "chdb")), 0o700, "chdb/chdb/ (the store's own directory)");
      t.is(mode(join(dataDir, "postgres")), 0o700, "postgres/ (initdb)");
      if (asRoot) t.not(statSync(join(dataDir, "postgres")).uid, 0, "postgres/ belongs to the postgres user");
      unreadableByOthers(t, dataDir);
    });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.serial("DATABASE_URL set, fresh DATA_DIR: DATA_DIR and chdb/ are 0700, as root too", async (t) => {
  t.timeout(120_000);
  const parent = mkdtempSync(join(tmpdir(), "agentgov-modes-external-"));
  chmodSync(parent, 0o755); // another user may reach DATA_DIR itself: its own mode must keep them out
  const dataDir = join(parent, "data");
  try {
    await whileStarted({ ...baseEnv(dataDir), DATABASE_URL: await createTestDatabase(), CLICKHOUSE_DATABASE: uniqueName("agentgov") }, () => {
      t.is(mode(dataDir), 0o700, "DATA_DIR");
      t.is(mode(join(dataDir, "chdb")), 0o700, "chdb/");
      t.is(mode(join(dataDir, "chdb", "chdb")), 0o700, "chdb/chdb/");
      unreadableByOthers(t, dataDir);
    });
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
});
