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

/** Limits Postgres enforces on every session of the pool (milliseconds; 0 = left to the server's setting). */
export interface SessionTimeouts {
  idleInTransactionMs: number;
  statementMs: number;
}

/**
 * A transaction left open by a frozen or cut-off replica holds its locks, and one that wrote a Sync change
 * holds back Sync deltas for every tenant (sync/settled-version.ts): Postgres ends a session idle in a
 * transaction for 60 s. No request runs a statement for minutes; 5 min only stops runaways. Migrations
 * lift the statement limit for their transaction (migrate.ts). `idle_in_transaction_session_timeout` or
 * `statement_timeout` in DATABASE_URL's query string take precedence (node-postgres reads them from there).
 */
export const SESSION_TIMEOUTS: SessionTimeouts = { idleInTransactionMs: 60_000, statementMs: 5 * 60_000 };

export function openDb(connectionString: string, max = 10, timeouts: SessionTimeouts = SESSION_TIMEOUTS): Db {
  const pool = new pg.Pool({
    connectionString,
    max,
    idleTimeoutMillis: 30_000,
    idle_in_transaction_session_timeout: timeouts.idleInTransactionMs,
    statement_timeout: timeouts.statementMs,
  });
  pool.on("error", () => {
    /* an idle client died; the pool replaces it on next use */
  });
  return {
    pool,
    query: pool.query.bind(pool) as Queryable["query"],
    async tx<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
      const c = await pool.connect();
      // Postgres may end the session between two statements (idle_in_transaction_session_timeout): the
      // client then emits "error", which must not go unheard (the process would crash); the next query
      // fails, and the dead client is discarded rather than returned to the pool.
      let lost: Error | undefined;
      const onError = (e: Error) => (lost = e);
      c.on("error", onError);
      try {
        await c.query("BEGIN");
        const out = await fn(c);
        await c.query("COMMIT");
        return out;
      } catch (e) {
        if (!lost) await c.query("ROLLBACK").catch(() => undefined);
        throw e;
      } finally {
        c.off("error", onError);
        c.release(lost);
      }
    },
    close: () => pool.end(),
  };
}
