// Which Postgres failures count as "database unavailable" (503) and which stay errors (500 or their
// own mapping), what the logs get of them, and the outcome recorded by stores/postgres/db.ts.
import test from "ava";
import pg from "pg";
import { isDatabaseUnavailable, noteOutage, outageCause, outageOf, redactCredentials } from "./database-unavailable.js";
import { AppError } from "./app-error.js";

const sys = (code: string, syscall = "connect") => Object.assign(new Error(`${syscall} ${code} 127.0.0.1:5432`), { code, syscall, errno: -1 });
const sqlState = (code: string) => {
  const e = new pg.DatabaseError(`server said ${code}`, 0, "error");
  e.code = code;
  return e;
};

test("network failures of the connection are unavailable", (t) => {
  for (const code of ["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN", "ENOTFOUND"]) {
    t.true(isDatabaseUnavailable(sys(code)), code);
  }
  t.true(isDatabaseUnavailable(sys("ENOENT")), "a Unix socket with no server");
  t.false(isDatabaseUnavailable(sys("ENOENT", "open")), "a missing file is not");
  t.false(isDatabaseUnavailable(sys("EACCES", "open")));
});

test("node-postgres's connection failures are unavailable", (t) => {
  for (const message of [
    "Connection terminated",
    "Connection terminated unexpectedly",
    "Connection terminated due to connection timeout",
    "timeout exceeded when trying to connect",
    "timeout expired",
    "Client has encountered a connection error and is not queryable",
  ]) {
    t.true(isDatabaseUnavailable(new Error(message)), message);
  }
  t.false(isDatabaseUnavailable(new Error("Client was closed and is not queryable")), "our own use of a closed client is a bug");
  t.false(isDatabaseUnavailable(new Error("Query read timeout")));
});

test("SQLSTATE class 08, 57P01-03 and 53300 are unavailable; 08P01 and every other SQL error are not", (t) => {
  for (const code of ["08000", "08001", "08003", "08004", "08006", "08007", "57P01", "57P02", "57P03", "53300"]) t.true(isDatabaseUnavailable(sqlState(code)), code);
  for (const code of ["08P01", "23505", "23503", "42P01", "42601", "22P02", "57014", "40001", "40P01", "25P02", "25P03", "53100", "53200", "57P04", "57P05", "XX000"]) {
    t.false(isDatabaseUnavailable(sqlState(code)), code);
  }
});

test("wrapped failures are looked into (cause chains, AggregateError); anything else is not unavailable", (t) => {
  t.true(isDatabaseUnavailable(new Error("migration failed", { cause: new Error("x", { cause: sys("ECONNREFUSED") }) })));
  t.true(isDatabaseUnavailable(new AggregateError([sys("ECONNREFUSED"), sys("ECONNREFUSED")], "")), "every address of localhost refused");
  const loop: Error & { cause?: unknown } = new Error("loop");
  loop.cause = loop;
  t.false(isDatabaseUnavailable(loop));
  for (const e of [undefined, null, "ECONNREFUSED", 42, new Error("boom"), new AppError("conflict", "dup"), { code: 503 }]) t.false(isDatabaseUnavailable(e), String(e));
});

test("the recorded outcome: not_applied or unknown as noted (also through a wrapper), unknown when nothing was noted", (t) => {
  const refused = sys("ECONNREFUSED");
  noteOutage(refused, "not_applied");
  noteOutage(refused, "unknown"); // the first word stands
  t.is(outageOf(refused), "not_applied");
  t.is(outageOf(new Error("wrapped", { cause: refused })), "not_applied");
  t.is(outageOf(new Error("Connection terminated unexpectedly")), "unknown");
  t.is(outageOf(sqlState("23505")), undefined);
  t.is(outageOf(new Error("boom")), undefined);
});

test("what the logs get: code and message, the innermost cause, no password", (t) => {
  const inner = sys("ECONNREFUSED");
  t.deepEqual(outageCause(new Error("could not reach postgres://agentgov:s3cret@db:5432/agentgov", { cause: inner })), {
    message: "could not reach postgres://agentgov:[redacted]@db:5432/agentgov",
    cause: { code: "ECONNREFUSED", message: "connect ECONNREFUSED 127.0.0.1:5432" },
  });
  t.deepEqual(outageCause(sqlState("57P01")), { code: "57P01", message: "server said 57P01" });
  t.is(redactCredentials("host=db password=s3cret user=x"), "host=db password=[redacted] user=x");
  t.is(redactCredentials("postgresql://u:p%40ss@h/d and http://a:b@c"), "postgresql://u:[redacted]@h/d and http://a:[redacted]@c");
});
