// `npm test`: static checks (types, lint, generated code), then the ava suite against real services.
// Services: DATABASE_URL / CLICKHOUSE_URL when set; else embedded Postgres started here for the run
// (each test file creates its own database in it) and chDB in each test process.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres } from "../control-plane/src/stores/postgres/embedded.js";
import { dockerReachable } from "./harness/docker.js";

const started = Date.now();
const args = process.argv.slice(2);
const onlyAva = args.includes("--ava-only");
const avaArgs = args.filter((a) => a !== "--ava-only");

function step(name: string, cmd: string, cmdArgs: string[], env: NodeJS.ProcessEnv = process.env): void {
  const t = Date.now();
  process.stdout.write(`\n▶ ${name}\n`);
  const r = spawnSync(cmd, cmdArgs, { stdio: "inherit", env });
  if (r.status !== 0) {
    process.stdout.write(`✖ ${name} failed (exit ${r.status})\n`);
    process.exit(r.status ?? 1);
  }
  process.stdout.write(`✔ ${name} (${((Date.now() - t) / 1000).toFixed(1)} s)\n`);
}

if (!onlyAva) {
  step("type-check", "npx", ["tsc", "-p", "tsconfig.json", "--noEmit"]);
  step("lint", "npx", ["eslint", "."]);
  step("generated protobuf code is current", "node", ["--import", "tsx", "proto/scripts/check-generated.ts"]);
  step("generated SDK code is current", "node", ["--import", "tsx", "sdk/scripts/generate.ts", "--check"]);
}

const env: NodeJS.ProcessEnv = { ...process.env };
let stopPg: (() => Promise<void>) | undefined;
let pgDir: string | undefined;
if (!env.TEST_DATABASE_URL) {
  if (env.DATABASE_URL) env.TEST_DATABASE_URL = env.DATABASE_URL;
  else {
    if (await dockerReachable()) process.stdout.write("Docker engine reachable, but embedded Postgres is used for speed; set DATABASE_URL to use another server\n");
    pgDir = mkdtempSync(join(tmpdir(), "agentgov-test-pg-"));
    const pg = await startEmbeddedPostgres(pgDir);
    env.TEST_DATABASE_URL = pg.url;
    stopPg = pg.stop;
    process.stdout.write(`embedded Postgres for the test run: ${pgDir}\n`);
  }
}
process.stdout.write(`ClickHouse engines under test: chdb${env.CLICKHOUSE_URL ? ` + server ${env.CLICKHOUSE_URL}` : ""}\n`);

const t = Date.now();
const r = spawnSync("npx", ["ava", ...avaArgs], { stdio: "inherit", env });
process.stdout.write(`ava finished in ${((Date.now() - t) / 1000).toFixed(1)} s; whole run ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
await stopPg?.();
if (pgDir) rmSync(pgDir, { recursive: true, force: true });
process.exit(r.status ?? 1);
