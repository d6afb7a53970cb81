// Each test file gets its own Postgres database (and ClickHouse database name) on the run's servers.
import { randomBytes } from "node:crypto";
import pg from "pg";

export function uniqueName(prefix = "t"): string {
  return `${prefix}_${randomBytes(6).toString("hex")}`;
}

export async function createTestDatabase(): Promise<string> {
  const admin = process.env.TEST_DATABASE_URL;
  if (!admin) throw new Error("TEST_DATABASE_URL is not set: run the suite with `npm test` (or set it to a Postgres you can create databases in)");
  const name = uniqueName("agentgov");
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  try {
    await c.query(`CREATE DATABASE ${name}`);
  } finally {
    await c.end();
  }
  const u = new URL(admin);
  u.pathname = `/${name}`;
  return u.toString();
}
