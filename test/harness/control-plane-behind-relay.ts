// A whole control plane whose Postgres is reached through a relay the test can cut (the database going
// away) and restore on the same port, with an admin key; its own data directory and trace database.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadControlPlaneConfig } from "../../control-plane/src/config/env.js";
import { generateApiKey } from "../../control-plane/src/domain/api-keys.js";
import { startControlPlane, type ControlPlane } from "../../control-plane/src/main.js";
import { CuttableRelay, freePort } from "./cuttable-relay.js";
import { createTestDatabase, uniqueName } from "./databases.js";

export interface ControlPlaneBehindRelay {
  cp: ControlPlane;
  relay: CuttableRelay;
  adminKey: string;
  /** Restores the relay, stops the control plane, removes its data directory. */
  stop(): Promise<void>;
}

export async function startControlPlaneBehindRelay(): Promise<ControlPlaneBehindRelay> {
  const target = new URL(await createTestDatabase());
  const relay = new CuttableRelay(await freePort(), { host: target.hostname, port: Number(target.port || 5432) });
  await relay.up();
  const viaRelay = new URL(target);
  viaRelay.hostname = "127.0.0.1";
  viaRelay.port = String(relay.port);
  const dataDir = mkdtempSync(join(tmpdir(), "agentgov-cp-relay-"));
  const adminKey = generateApiKey("api");
  const stopAll = async (cp?: ControlPlane) => {
    await relay.up().catch(() => undefined);
    await cp?.stop();
    await relay.down();
    rmSync(dataDir, { recursive: true, force: true });
  };
  let cp: ControlPlane;
  try {
    cp = await startControlPlane(
      loadControlPlaneConfig({
        DATA_DIR: dataDir,
        DATABASE_URL: viaRelay.toString(),
        CLICKHOUSE_DATABASE: uniqueName("agentgov"),
        PORT: "0",
        GRPC_PORT: "0",
        BOOTSTRAP_API_KEY: adminKey,
        LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
      }),
    );
  } catch (e) {
    await stopAll();
    throw e;
  }
  return { cp, relay, adminKey, stop: () => stopAll(cp) };
}
