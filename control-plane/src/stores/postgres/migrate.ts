// Versioned SQL migrations: migrations/NNN_name.sql applied in order, once, under an advisory lock.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Db } from "./db.js";

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "migrations");
const LOCK_ID = 774_201;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{3}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: Number(f.slice(0, 3)), name: f, sql: readFileSync(join(dir, f), "utf8") }));
}

/** Applies pending migrations; returns the names applied now. Safe to run from several processes at once. */
export async function migrate(db: Db): Promise<string[]> {
  return db.tx(async (c) => {
    // A migration may rewrite a large table, and waiting for another process's migrations counts too:
    // no statement limit here (the pool's SESSION_TIMEOUTS is for requests).
    await c.query("SET LOCAL statement_timeout = 0");
    await c.query("SELECT pg_advisory_xact_lock($1)", [LOCK_ID]);
    await c.query(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    const done = new Set((await c.query<{ version: number }>("SELECT version FROM schema_migrations")).rows.map((r) => r.version));
    const applied: string[] = [];
    for (const m of listMigrations()) {
      if (done.has(m.version)) continue;
      await c.query(m.sql);
      await c.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [m.version, m.name]);
      applied.push(m.name);
    }
    return applied;
  });
}
