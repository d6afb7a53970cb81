// The control plane's configuration: bounds that protect data, and e-mail addresses as organisations have them.
import test from "ava";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_DATA_DIR, loadControlPlaneConfig } from "./env.js";

test("TRACE_RETENTION_DAYS: at most 20,000 (a TTL past ClickHouse's DateTime range would expire every trace at once)", (t) => {
  t.is(loadControlPlaneConfig({}).TRACE_RETENTION_DAYS, 30);
  t.is(loadControlPlaneConfig({ TRACE_RETENTION_DAYS: "20000" }).TRACE_RETENTION_DAYS, 20_000);
  for (const v of ["20001", "36500", "0", "-1", "ten"]) {
    const e = t.throws(() => loadControlPlaneConfig({ TRACE_RETENTION_DAYS: v }));
    t.regex(e!.message, /TRACE_RETENTION_DAYS/, v);
  }
});

test("BOOTSTRAP_ADMIN_EMAIL: the default admin@localhost and single-label domains are accepted when set; non-addresses are not", (t) => {
  t.is(loadControlPlaneConfig({}).BOOTSTRAP_ADMIN_EMAIL, "admin@localhost");
  for (const v of ["admin@localhost", "ops@corp", "Jane.Doe@example.com"]) t.is(loadControlPlaneConfig({ BOOTSTRAP_ADMIN_EMAIL: v }).BOOTSTRAP_ADMIN_EMAIL, v);
  for (const v of ["notanemail", "a b@c", "@corp", "ops@"]) {
    const e = t.throws(() => loadControlPlaneConfig({ BOOTSTRAP_ADMIN_EMAIL: v }));
    t.regex(e!.message, /BOOTSTRAP_ADMIN_EMAIL/, v);
  }
});

test("URLs: only the schemes the programs speak, refused at start with the variable named and no secret echoed", (t) => {
  t.is(loadControlPlaneConfig({ DATABASE_URL: "postgresql://u:p@db:5432/x" }).DATABASE_URL, "postgresql://u:p@db:5432/x");
  t.is(loadControlPlaneConfig({ CLICKHOUSE_URL: "https://ch:8443" }).CLICKHOUSE_URL, "https://ch:8443");
  for (const [name, value] of [
    ["DATABASE_URL", "mysql://x:1/y"],
    ["CLICKHOUSE_URL", "clickhouse://default:ChPwSecret99@127.0.0.1:9000"],
    ["CLICKHOUSE_URL", "localhost:8123"],
    // No URL at all: named too (the scheme check used to throw a bare "Invalid URL" out of the parse).
    ["DATABASE_URL", "notaurl"],
    ["CLICKHOUSE_URL", "not a url"],
  ] as const) {
    const e = t.throws(() => loadControlPlaneConfig({ [name]: value }));
    t.regex(e!.message, new RegExp(name), value);
    t.false(e!.message.includes("ChPwSecret99"), "the password is not echoed");
  }
});

test("numbers: a blank value counts as unset (the default, not 0); stray characters are refused with the variable named", (t) => {
  // PORT=" " used to read as 0: a random port.
  for (const blank of [" ", "  ", "\t", " \n"]) {
    const c = loadControlPlaneConfig({ PORT: blank, GRPC_PORT: blank, TRACE_RETENTION_DAYS: blank, SHUTDOWN_DRAIN_MS: blank });
    t.is(c.PORT, 8080);
    t.is(c.GRPC_PORT, 8090);
    t.is(c.TRACE_RETENTION_DAYS, 30);
    t.is(c.SHUTDOWN_DRAIN_MS, 0);
  }
  t.is(loadControlPlaneConfig({ PORT: " 9000 " }).PORT, 9000, "spaces around a number are fine");
  t.is(loadControlPlaneConfig({ PORT: "0" }).PORT, 0);
  for (const [name, v] of [
    ["PORT", "0x50"],
    ["PORT", "80px"],
    ["GRPC_PORT", "80 90"],
    ["API_RATE_LIMIT_PER_MINUTE", "1e3"],
    ["SHUTDOWN_TIMEOUT_MS", "25s"],
    ["TRACE_RETENTION_DAYS", "30.5"],
  ] as const) {
    const e = t.throws(() => loadControlPlaneConfig({ [name]: v }));
    t.regex(e!.message, new RegExp(`${name}: must be a whole number`), v);
  }
});

test("DATA_DIR: unset is .data of the project (not of the current directory); a set value is kept as given", (t) => {
  const project = fileURLToPath(new URL("../../../", import.meta.url));
  t.is(loadControlPlaneConfig({}).DATA_DIR, join(project, ".data"));
  t.is(loadControlPlaneConfig({ DATA_DIR: " " }).DATA_DIR, DEFAULT_DATA_DIR);
  t.is(loadControlPlaneConfig({ DATA_DIR: "./elsewhere" }).DATA_DIR, "./elsewhere", "relative to the current directory, as set");
  // The CLI run from another directory (`cd sdk && npx agentgov …` used to start a fresh Postgres in sdk/.data).
  const cwd = mkdtempSync(join(tmpdir(), "agentgov-cwd-"));
  try {
    const register = new URL("../../../bin/typescript/register.js", import.meta.url).href;
    const env = new URL("./env.ts", import.meta.url).href;
    const seen = execFileSync(process.execPath, ["--import", register, "--input-type=module", "-e", `const m = await import(${JSON.stringify(env)}); console.log(m.loadControlPlaneConfig({}).DATA_DIR);`], {
      cwd,
      encoding: "utf8",
    });
    t.is(seen.trim(), join(project, ".data"));
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
});
