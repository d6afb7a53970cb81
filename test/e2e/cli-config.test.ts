// CLI commands that reach the database (migrate, keys create, tenants create) check the environment with
// the control plane's schema first: a bad value is a clear error naming the variable, exit status 1, and
// no database is started or touched (no embedded Postgres data directory appears). With a good
// environment they use the checked values (an empty BOOTSTRAP_IDP_ORG_ID is the default organization),
// and `migrate` reports the migrations it applied.
import test from "ava";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createTestDatabase } from "../harness/databases.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

function cli(args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, ["bin/agentgov.js", ...args], { cwd: REPO, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env }, encoding: "utf8", timeout: 60_000 });
}

test("a bad DATABASE_URL or setting stops migrate / keys create / tenants create before any database is touched", (t) => {
  const dir = mkdtempSync(join(tmpdir(), "agentgov-cli-"));
  try {
    const commands = [["migrate"], ["keys", "create", "--name", "k", "--scope", "api"], ["tenants", "create", "--name", "T", "--idp-org-id", "org_x", "--admin-email", "a@example.com"]];
    for (const args of commands) {
      for (const [name, value] of [["DATABASE_URL", "mysql://root:hunter2@db/agentgov"], ["LOG_LEVEL", "loud"]] as const) {
        const r = cli(args, { DATA_DIR: dir, [name]: value });
        t.is(r.status, 1, `${args.join(" ")} with ${name}`);
        t.true(r.stderr.includes("invalid configuration"), r.stderr);
        t.true(r.stderr.includes(name), r.stderr);
        t.false(r.stderr.includes("hunter2"), "a password in a bad URL is not echoed");
        t.is(r.stdout, "");
      }
    }
    t.deepEqual(existsSync(dir) ? readdirSync(dir) : [], [], "no embedded Postgres was started in DATA_DIR");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("migrate reports what it applied, then nothing; keys create treats an empty BOOTSTRAP_IDP_ORG_ID as the default organization", (t) => {
  return createTestDatabase().then((url) => {
    const env = { DATABASE_URL: url, LOG_LEVEL: "silent" };
    const first = cli(["migrate"], env);
    t.is(first.status, 0, first.stderr);
    const applied = (JSON.parse(first.stdout) as { applied: string[] }).applied;
    t.true(applied.length > 0, "a new database gets every migration, and says so");
    t.deepEqual(JSON.parse(cli(["migrate"], env).stdout), { applied: [] });
    const tenant = cli(["tenants", "create", "--name", "Default", "--idp-org-id", "org_default", "--admin-email", "admin@example.com"], env);
    t.is(tenant.status, 0, tenant.stderr);
    const key = cli(["keys", "create", "--name", "k", "--scope", "api"], { ...env, BOOTSTRAP_IDP_ORG_ID: "" });
    t.is(key.status, 0, key.stderr);
    t.is((JSON.parse(key.stdout) as { tenantId: string }).tenantId, (JSON.parse(tenant.stdout) as { tenantId: string }).tenantId);
  });
});

test("start: a port that is taken fails with the variables that choose it named", async (t) => {
  const { createServer } = await import("node:net");
  const taken = createServer();
  await new Promise<void>((r) => taken.listen(0, "127.0.0.1", r));
  const port = String((taken.address() as import("node:net").AddressInfo).port);
  const dir = mkdtempSync(join(tmpdir(), "agentgov-cli-port-"));
  try {
    const r = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ["bin/agentgov.js", "start"], { cwd: REPO, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", DATA_DIR: dir, PORT: port, GRPC_PORT: "0", SIDECAR_PORT: "0" } });
      let stderr = "";
      child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
      child.on("exit", (status) => resolve({ status, stderr }));
    });
    t.is(r.status, 1);
    t.regex(r.stderr, /EADDRINUSE.*set PORT, GRPC_PORT or SIDECAR_PORT/, r.stderr.slice(-500));
  } finally {
    taken.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("control-plane / start: a HOST or SIDECAR_HOST that does not resolve is named in the hint, not the databases", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "agentgov-cli-host-"));
  try {
    const base = { DATABASE_URL: await createTestDatabase(), DATA_DIR: dir, PORT: "0", GRPC_PORT: "0", SIDECAR_PORT: "0", LOG_LEVEL: "silent" };
    for (const [args, name] of [
      [["control-plane"], "HOST"],
      [["start"], "SIDECAR_HOST"],
    ] as const) {
      const r = cli([...args], { ...base, [name]: "no-such-host.invalid" });
      t.is(r.status, 1, `${args[0]} with ${name}: ${r.stderr.slice(-500)}`);
      t.regex(r.stderr, /no-such-host\.invalid.*\(HOST \/ SIDECAR_HOST must be a name or address of this machine/, r.stderr.slice(-500));
      t.false(r.stderr.includes("DATABASE_URL"), "the databases are not blamed");
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
