// Postgres access: a pooled client with a transaction helper. Plain SQL, parameters always bound.
import pg from "pg";

export type Queryable = Pick<pg.PoolClient, "query">;

export interface Db extends Queryable {
  readonly pool: pg.Pool;
  tx<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

// Postgres bigint/numeric come back as strings by default; counts here fit in a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));

export function openDb(connectionString: string, max = 10): Db {
  const pool = new pg.Pool({ connectionString, max, idleTimeoutMillis: 30_000 });
  pool.on("error", () => {
    /* an idle client died; the pool replaces it on next use */
  });
  return {
    pool,
    query: pool.query.bind(pool) as Queryable["query"],
    async tx<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
      const c = await pool.connect();
      try {
        await c.query("BEGIN");
        const out = await fn(c);
        await c.query("COMMIT");
        return out;
      } catch (e) {
        await c.query("ROLLBACK").catch(() => undefined);
        throw e;
      } finally {
        c.release();
      }
    },
    close: () => pool.end(),
  };
}
