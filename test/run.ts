// `npm test`: static checks (types, lint, generated code), then the ava suite against real services.
// Services: DATABASE_URL / CLICKHOUSE_URL when set; else testcontainers when a Docker engine answers;
// else embedded Postgres started here for the run (each test file creates its own database in it) and
// chDB in each test process (the trace-store tests also run on CLICKHOUSE_URL when it is set).
import { spawn, spawnSync } from "node:child_process";
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
  else if (env.AGENTGOV_TEST_CONTAINERS !== "0" && (await dockerReachable())) {
    // A Docker engine answers: real Postgres (and a modern ClickHouse server unless one is given) in containers.
    const { startContainers } = await import("./harness/containers.js");
    const services = await startContainers({ clickhouse: !env.CLICKHOUSE_URL });
    env.TEST_DATABASE_URL = services.databaseUrl;
    if (services.clickhouseUrl) env.CLICKHOUSE_URL = services.clickhouseUrl;
    stopPg = services.stop;
    process.stdout.write(`services from testcontainers: Postgres${services.clickhouseUrl ? ` and ClickHouse ${services.clickhouseUrl}` : ""}\n`);
  } else {
    pgDir = mkdtempSync(join(tmpdir(), "agentgov-test-pg-"));
    const pg = await startEmbeddedPostgres(pgDir);
    env.TEST_DATABASE_URL = pg.url;
    stopPg = pg.stop;
    process.stdout.write(`no Docker engine: embedded Postgres for the test run in ${pgDir}\n`);
  }
}
process.stdout.write(`ClickHouse engines under test: chdb${env.CLICKHOUSE_URL ? ` + server ${env.CLICKHOUSE_URL}` : ""}\n`);

const t = Date.now();
// ava's output is passed through as it comes; its summary is read to print one plain closing line.
const counts = { passed: 0, failed: 0, skipped: 0 };
let passedLines = 0;
const status = await new Promise<number>((resolve) => {
  const child = spawn("npx", ["ava", ...avaArgs], { stdio: ["ignore", "pipe", "pipe"], env });
  const scan = (chunk: Buffer, out: NodeJS.WriteStream) => {
    out.write(chunk);
    for (const line of chunk.toString("utf8").split("\n")) {
      if (/^\s*✔ /.test(line)) passedLines++;
      const m = /^\s*(\d+) (?:tests?|known failures?|uncaught exceptions?|unhandled rejections?) (passed|failed|skipped|todo)?/.exec(line);
      if (!m) continue;
      const n = Number(m[1]);
      if (/passed/.test(line)) counts.passed = n;
      else if (/failed|uncaught|unhandled/.test(line)) counts.failed += n;
      else if (/skipped|todo/.test(line)) counts.skipped += n;
    }
  };
  child.stdout.on("data", (c: Buffer) => scan(c, process.stdout));
  child.stderr.on("data", (c: Buffer) => scan(c, process.stderr));
  child.on("close", (code) => resolve(code ?? 1));
});
if (status !== 0 && counts.failed === 0) counts.failed = 1;
// ava prints "N tests passed" only when nothing failed; otherwise count the ✔ lines.
if (counts.passed === 0) counts.passed = passedLines;
process.stdout.write(`ava finished in ${((Date.now() - t) / 1000).toFixed(1)} s; whole run ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
process.stdout.write(`${counts.passed} passed, ${counts.failed} failed${counts.skipped ? `, ${counts.skipped} skipped` : ""}\n`);
await stopPg?.();
if (pgDir) rmSync(pgDir, { recursive: true, force: true });
process.exit(status);
