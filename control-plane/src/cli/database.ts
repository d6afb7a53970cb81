// How CLI commands reach Postgres: DATABASE_URL, else the embedded Postgres a running `agentgov start`
// uses (its connection file in DATA_DIR), else an embedded Postgres started for the command.
import { findRunningEmbedded, startEmbeddedPostgres } from "../stores/postgres/embedded.js";
import { openDb, type Db } from "../stores/postgres/db.js";
import { migrate } from "../stores/postgres/migrate.js";

export async function withDatabase<T>(env: NodeJS.ProcessEnv, fn: (db: Db) => Promise<T>): Promise<T> {
  const dataDir = env.DATA_DIR || "./.data";
  let url = env.DATABASE_URL;
  let stop: (() => Promise<void>) | undefined;
  if (!url) url = await findRunningEmbedded(dataDir);
  if (!url) {
    const pg = await startEmbeddedPostgres(dataDir);
    url = pg.url;
    stop = pg.stop;
  }
  const db = openDb(url, 2);
  try {
    await migrate(db);
    return await fn(db);
  } finally {
    await db.close();
    await stop?.();
  }
}
