// Which Postgres failures mean "the database is unavailable" (retry later) rather than a fault of the
// request or of our code, and what is known of the statement such a failure cut off. The REST error
// handler (http/middleware/errors.ts) answers them 503 `service_unavailable` with Retry-After when the
// request cannot have changed anything, which is what the SDK's retries of every method rely on.

/** Network failures of the connection to Postgres (refused, reset, timed out, unreachable). */
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "ENETDOWN", "EAI_AGAIN", "ENOTFOUND", "ECONNABORTED"]);

/**
 * SQLSTATEs of an unavailable server: 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03
 * cannot_connect_now (starting up, shutting down, in recovery), 53300 too_many_connections. Class 08
 * (connection exception) is tested apart, less 08P01 protocol_violation: that one is a malformed
 * message (e.g. more bind parameters than the protocol carries), a bug that a retry repeats.
 */
const UNAVAILABLE_SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300"]);

/**
 * node-postgres's own words for a connection that is gone or never came: "Connection terminated"
 * (…unexpectedly, …due to connection timeout), pg-pool's wait for a connection timing out, the
 * client's connect timeout, and a client whose connection already failed.
 */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated\b/,
  /^timeout exceeded when trying to connect$/,
  /^timeout expired$/,
  /^Client has encountered a connection error and is not queryable$/,
];

function isSqlState(code: string): boolean {
  return /^[0-9A-Z]{5}$/.test(code);
}

function oneUnavailable(e: object): boolean {
  const { code, syscall, message } = e as { code?: unknown; syscall?: unknown; message?: unknown };
  if (typeof code === "string") {
    if (NETWORK_CODES.has(code)) return true;
    // A Unix-socket path with no server behind it.
    if (code === "ENOENT" && syscall === "connect") return true;
    if (isSqlState(code)) return UNAVAILABLE_SQLSTATES.has(code) || (code.startsWith("08") && code !== "08P01");
  }
  return typeof message === "string" && UNAVAILABLE_MESSAGES.some((re) => re.test(message));
}

/**
 * True when `e` (or an error it wraps: `cause`, an AggregateError's `errors`, as Node gives when every
 * address of a host refused) says Postgres cannot be reached or is not serving. A SQL error (a
 * constraint, a syntax error, a statement timeout, a serialization failure) is not: it stays a 500
 * or whatever its caller maps it to.
 */
export function isDatabaseUnavailable(e: unknown): boolean {
  const seen = new Set<object>();
  const walk = (x: unknown, depth: number): boolean => {
    if (typeof x !== "object" || x === null || seen.has(x) || depth > 8) return false;
    seen.add(x);
    if (oneUnavailable(x)) return true;
    const { cause, errors } = x as { cause?: unknown; errors?: unknown };
    if (Array.isArray(errors) && errors.some((inner) => walk(inner, depth + 1))) return true;
    return walk(cause, depth + 1);
  };
  return walk(e, 0);
}

/**
 * What an unavailable database left of the statement it cut off: `not_applied` when nothing can have
 * been written (no connection was had, or the transaction ended before COMMIT was sent and Postgres
 * rolled it back), `unknown` when the connection was lost while a statement or COMMIT was under way.
 */
export type OutageOutcome = "not_applied" | "unknown";

const outcomes = new WeakMap<object, OutageOutcome>();

/** Records what an unavailable-database failure left behind (stores/postgres/db.ts calls it). */
export function noteOutage(e: unknown, outcome: OutageOutcome): void {
  if (typeof e !== "object" || e === null) return;
  // The first word stands: a failure seen again further out (a transaction's caller) knows no better.
  if (!outcomes.has(e)) outcomes.set(e, outcome);
}

/**
 * The outcome recorded for `e` (or an error it wraps) when it is an unavailable-database failure;
 * `unknown` for one that did not pass through our Postgres access (nothing recorded); undefined
 * when `e` is no such failure.
 */
export function outageOf(e: unknown): OutageOutcome | undefined {
  if (!isDatabaseUnavailable(e)) return undefined;
  for (let x: unknown = e, depth = 0; typeof x === "object" && x !== null && depth <= 8; x = (x as { cause?: unknown }).cause, depth++) {
    const o = outcomes.get(x);
    if (o) return o;
  }
  return "unknown";
}

/**
 * The cause of an unavailable-database failure as logged: its code and message (the innermost
 * error's too), with any user:password of a connection string cut out. Never the error object itself,
 * whose fields a logger would print whole.
 */
export function outageCause(e: unknown): { code?: string; message: string; cause?: { code?: string; message: string } } {
  const describe = (x: unknown) => {
    const { code, message } = (typeof x === "object" && x !== null ? x : {}) as { code?: unknown; message?: unknown };
    return { ...(typeof code === "string" ? { code } : {}), message: redactCredentials(typeof message === "string" ? message : String(x)) };
  };
  let inner: unknown = e;
  for (let depth = 0; depth < 8; depth++) {
    const next = (inner as { cause?: unknown; errors?: unknown[] } | null)?.cause ?? (inner as { errors?: unknown[] } | null)?.errors?.[0];
    if (typeof next !== "object" || next === null) break;
    inner = next;
  }
  return inner === e ? describe(e) : { ...describe(e), cause: describe(inner) };
}

/** `scheme://user:secret@host` → `scheme://user:[redacted]@host`, and `password=…` key-value settings. */
export function redactCredentials(text: string): string {
  return text.replace(/(\/\/[^:/@\s]*):[^@\s]*@/g, "$1:[redacted]@").replace(/(password\s*=\s*)('[^']*'|\S+)/gi, "$1[redacted]");
}
