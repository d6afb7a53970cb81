// CLI commands that reach the database (migrate, keys create, tenants create) check the environment with
// the control plane's schema first: a bad value is a clear error naming the variable, exit status 1, and
// no database is started or touched (no embedded Postgres data directory appears). With a good
// environment they use the checked values (an empty BOOTSTRAP_IDP_ORG_ID is the default organization),
// and `migrate` reports the migrations it applied.
import test from "ava";
import { spawnSync } from "node:child_process";
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
