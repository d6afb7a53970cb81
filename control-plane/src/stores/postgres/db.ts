// Postgres access: a pooled client with a transaction helper. Plain SQL, parameters always bound.
import pg from "pg";
import { isDatabaseUnavailable, noteOutage } from "../../errors/database-unavailable.js";

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

/**
 * How long a statement waits for a connection (a new one to connect, or one of a full pool to come
 * free) before failing with "timeout exceeded when trying to connect" / "Connection terminated due to
 * connection timeout": a database that drops packets (a partition, a host gone) then answers 503
 * within seconds instead of holding every request for the kernel's connect timeout (~2 min).
 */
export const CONNECT_TIMEOUT_MS = 10_000;

let commits = 0;

/**
 * Transactions committed by this process so far (every Db). The REST error handler compares it before
 * and after a request that failed on an unavailable database: a request that may have committed its
 * change before failing must not answer 503, which clients retry for every method (the SDK does).
 */
export function committedTransactions(): number {
  return commits;
}

/** Records what an unavailable database left of the statement (errors/database-unavailable.ts). */
function outage(e: unknown, applied: boolean | "unknown"): unknown {
  if (isDatabaseUnavailable(e)) noteOutage(e, applied === false ? "not_applied" : "unknown");
  return e;
}

type QueryArgs = [text: string | pg.QueryConfig, values?: unknown[]];

/** A statement that writes nothing (our SELECTs call no function that writes). */
const READ_ONLY = /^\s*SELECT\b/i;

export function openDb(connectionString: string, max = 10, timeouts: SessionTimeouts = SESSION_TIMEOUTS, connectTimeoutMs = CONNECT_TIMEOUT_MS): Db {
  const pool = new pg.Pool({
    connectionString,
    max,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: connectTimeoutMs,
    idle_in_transaction_session_timeout: timeouts.idleInTransactionMs,
    statement_timeout: timeouts.statementMs,
  });
  pool.on("error", () => {
    /* an idle client died (Postgres stopped or restarted): pg-pool has removed it; the next use connects anew */
  });
  /** A pool connection; failing to get one changed nothing. */
  const connect = async (): Promise<pg.PoolClient> => {
    try {
      return await pool.connect();
    } catch (e) {
      throw outage(e, false);
    }
  };
  /**
   * pool.query, with the connection taken apart from the statement, so that a failure to connect
   * (nothing ran) is told from a connection lost under a running statement (it may have run). As in
   * pool.query, the client's "error" event is heard and fails the statement, and a client whose
   * statement failed is discarded rather than returned to the pool.
   */
  const query = async (...[text, values]: QueryArgs): Promise<pg.QueryResult> => {
    const c = await connect();
    return new Promise<pg.QueryResult>((resolve, reject) => {
      let released = false;
      const done = (e: Error | undefined, r?: pg.QueryResult) => {
        if (released) return;
        released = true;
        c.removeListener("error", done);
        c.release(e);
        if (!e) return resolve(r!);
        // node-postgres refuses a statement, without sending it, on a client whose connection failed;
        // a SELECT cut off wrote nothing either. Any other statement cut off may have been applied.
        reject(outage(e, /is not queryable$/.test(e.message) || READ_ONLY.test(typeof text === "string" ? text : text.text) ? false : "unknown"));
      };
      c.once("error", done);
      try {
        c.query(text as string, values).then((r) => done(undefined, r), done);
      } catch (e) {
        done(e as Error);
      }
    });
  };
  return {
    pool,
    query: query as Queryable["query"],
    async tx<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
      const c = await connect();
      // Postgres may end the session between two statements (idle_in_transaction_session_timeout): the
      // client then emits "error", which must not go unheard (the process would crash); the next query
      // fails, and the dead client is discarded rather than returned to the pool.
      let lost: Error | undefined;
      const onError = (e: Error) => (lost = e);
      c.on("error", onError);
      let committing = false;
      try {
        await c.query("BEGIN");
        const out = await fn(c);
        committing = true;
        await c.query("COMMIT");
        commits++;
        return out;
      } catch (e) {
        // Before COMMIT was sent, a lost connection rolled the transaction back; during it, nobody knows.
        outage(e, committing ? "unknown" : false);
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
