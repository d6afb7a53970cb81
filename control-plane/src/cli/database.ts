// How CLI commands reach Postgres: DATABASE_URL, else the embedded Postgres a running `agentgov start`
// uses (its connection file in DATA_DIR), else an embedded Postgres started for the command. The
// environment is checked by the control plane's schema first, so a bad value stops the command with the
// error `start` would give, before any database is touched.
import { findRunningEmbedded, startEmbeddedPostgres } from "../stores/postgres/embedded.js";
import { openDb, type Db } from "../stores/postgres/db.js";
import { migrate } from "../stores/postgres/migrate.js";
import { loadControlPlaneConfig, type ControlPlaneConfig } from "../config/env.js";

/** What a command gets besides the database: the checked configuration and the migrations this run applied. */
export interface CommandContext {
  config: ControlPlaneConfig;
  applied: string[];
}

export async function withDatabase<T>(env: NodeJS.ProcessEnv, fn: (db: Db, ctx: CommandContext) => Promise<T>): Promise<T> {
  const config = loadControlPlaneConfig(env);
  const dataDir = config.DATA_DIR;
  let url = config.DATABASE_URL;
  let stop: (() => Promise<void>) | undefined;
  if (!url) url = await findRunningEmbedded(dataDir);
  if (!url) {
    const pg = await startEmbeddedPostgres(dataDir);
    url = pg.url;
    stop = pg.stop;
  }
  const db = openDb(url, 2);
  try {
    const applied = await migrate(db);
    return await fn(db, { config, applied });
  } finally {
    await db.close();
    await stop?.();
  }
}
