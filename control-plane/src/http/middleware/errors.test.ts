// Postgres unavailable → 503 `service_unavailable` with Retry-After, in each REST group's error shape,
// on real Postgres (QA, session 25: with the embedded Postgres killed every REST call answered 500).
// A request that may have changed something before the database went away answers 500 instead: the
// SDK retries a 503 for every method. Other SQL errors map as before. No store is mocked: the
// database is a real one, cut off through a TCP relay, or a port with nothing listening.
import test from "ava";
import { startControlPlaneBehindRelay } from "../../../../test/harness/control-plane-behind-relay.js";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import Koa from "koa";
import Router from "@koa/router";
import { createTestDatabase, uniqueName } from "../../../../test/harness/databases.js";
import { freePort } from "../../../../test/harness/cuttable-relay.js";
import { openDb, type Db } from "../../stores/postgres/db.js";
import { ServerEngine } from "../../stores/clickhouse/engine-server.js";
import { sql } from "../../stores/clickhouse/sql-literal.js";
import type { AppState } from "../state.js";
import { requestId } from "./request-id.js";
import { DATABASE_RETRY_AFTER_SECONDS, errorHandler } from "./errors.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Logged {
  level: "warn" | "error";
  obj: Record<string, unknown>;
  msg: string | undefined;
}

function capturingLogger() {
  const lines: Logged[] = [];
  return {
    lines,
    warn: (obj: object, msg?: string) => lines.push({ level: "warn", obj: obj as Record<string, unknown>, msg }),
    error: (obj: object, msg?: string) => lines.push({ level: "error", obj: obj as Record<string, unknown>, msg }),
  };
}

// ---- the error middleware with routes on real databases ----------------------------------------

const SECRET = "Pa55w0rd-never-logged";
let liveUrl: string;
let live: Db;
let dead: Db;
let deadPort: number;
let server: HttpServer;
let base: string;
const log = capturingLogger();

/** What the routes below run; each test sets it. */
let handler: (ctx: Koa.ParameterizedContext<AppState>) => Promise<void>;

test.before(async () => {
  liveUrl = await createTestDatabase();
  live = openDb(liveUrl, 4);
  await live.query("CREATE TABLE probe (id text PRIMARY KEY)");
  deadPort = await freePort();
  dead = openDb(`postgres://agentgov:${SECRET}@127.0.0.1:${deadPort}/agentgov`, 2);
  const app = new Koa<AppState>();
  app.silent = true;
  app.use(requestId());
  app.use(errorHandler(log));
  const router = new Router<AppState>();
  for (const path of ["/v1/probe", "/api/probe"]) {
    router.all(path, async (ctx) => {
      await handler(ctx);
      ctx.body ??= { ok: true };
    });
  }
  app.use(router.routes());
  server = createHttpServer(app.callback());
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", () => ok()));
  const addr = server.address();
  base = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`;
});

test.after.always(async () => {
  await new Promise((ok) => server?.close(ok));
  await live?.close();
  await dead?.close();
});

async function call(method: string, path: string) {
  const res = await fetch(`${base}${path}`, { method });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: JSON.parse(text) as Record<string, unknown> };
}

function assertUnavailable(t: import("ava").ExecutionContext, r: Awaited<ReturnType<typeof call>>, group: "A" | "B") {
  t.is(r.status, 503, r.text);
  t.is(r.headers.get("retry-after"), String(DATABASE_RETRY_AFTER_SECONDS));
  if (group === "A") {
    const e = r.body.error as Record<string, unknown>;
    t.deepEqual(Object.keys(e).sort(), ["code", "message", "request_id"]);
    t.is(e.code, "service_unavailable");
    t.is(e.request_id, r.headers.get("x-request-id"));
  } else {
    t.deepEqual(Object.keys(r.body), ["error"]);
    t.is(typeof r.body.error, "string");
  }
  // Nothing of the connection or of the error's internals in the answer.
  for (const leak of [SECRET, "ECONNREFUSED", String(deadPort), "127.0.0.1", "postgres://", "terminat"]) t.false(r.text.includes(leak), `answer holds ${leak}: ${r.text}`);
}

/** Runs `sql` on the live database while another session terminates it (SQLSTATE 57P01 admin_shutdown). */
async function terminatedWhileRunning(run: (marker: string) => Promise<unknown>): Promise<void> {
  const marker = uniqueName("m");
  const running = run(marker);
  running.catch(() => undefined);
  for (let i = 0; i < 200; i++) {
    const r = await live.query("SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE query LIKE $1 AND pid <> pg_backend_pid()", [`%${marker}%`]);
    if (r.rowCount) break;
    await sleep(10);
  }
  await running;
}

test.serial("Postgres refusing connections: reads and writes of both groups answer 503 with Retry-After, logged once each at warn without secrets", async (t) => {
  log.lines.length = 0;
  handler = async () => {
    await dead.query("SELECT 1");
  };
  assertUnavailable(t, await call("GET", "/v1/probe"), "A");
  assertUnavailable(t, await call("GET", "/api/probe"), "B");
  handler = async () => {
    await dead.tx(async (c) => c.query("INSERT INTO probe VALUES ('x')"));
  };
  assertUnavailable(t, await call("POST", "/v1/probe"), "A");
  assertUnavailable(t, await call("POST", "/api/probe"), "B");
  t.is(log.lines.length, 4, "one line per failed request");
  for (const l of log.lines) {
    t.is(l.level, "warn");
    t.is(l.msg, "database unavailable");
    t.is((l.obj.cause as { code?: string }).code, "ECONNREFUSED");
    t.truthy(l.obj.requestId);
    t.false(JSON.stringify(l.obj).includes(SECRET));
  }
});

test.serial("a session terminated by the server (57P01) answers 503: a read, and a write whose SELECT was cut or whose transaction had not reached COMMIT", async (t) => {
  handler = async () => {
    await terminatedWhileRunning((m) => live.query(`SELECT pg_sleep(5) /* ${m} */`));
  };
  assertUnavailable(t, await call("GET", "/v1/probe"), "A");
  // A write request whose SELECT (the key lookup, say) was cut off has written nothing.
  assertUnavailable(t, await call("POST", "/v1/probe"), "A");
  const id = uniqueName("row");
  handler = async () => {
    await terminatedWhileRunning((m) =>
      live.tx(async (c) => {
        await c.query("INSERT INTO probe VALUES ($1)", [id]);
        await c.query(`SELECT pg_sleep(5) /* ${m} */`);
      }),
    );
  };
  assertUnavailable(t, await call("POST", "/api/probe"), "B");
  t.is((await live.query("SELECT 1 FROM probe WHERE id = $1", [id])).rowCount, 0, "the transaction was rolled back: a retry is safe");
});

test.serial("a write that may have been applied answers 500 (not retried by the SDK), saying so", async (t) => {
  // A statement outside a transaction cut off mid-way: it may have run.
  handler = async () => {
    await terminatedWhileRunning((m) => live.query(`INSERT INTO probe SELECT $1 FROM pg_sleep(5) /* ${m} */`, [uniqueName("row")]));
  };
  for (const path of ["/v1/probe", "/api/probe"]) {
    const r = await call("POST", path);
    t.is(r.status, 500, r.text);
    t.is(r.headers.get("retry-after"), null);
    t.regex(r.text, /may or may not have been applied/);
  }
  // A transaction committed, then the database went away before the answer was ready.
  handler = async () => {
    await live.tx(async (c) => c.query("INSERT INTO probe VALUES ($1)", [uniqueName("row")]));
    await dead.query("SELECT 1");
  };
  const r = await call("POST", "/v1/probe");
  t.is(r.status, 500, r.text);
  t.is((r.body.error as { code: string }).code, "internal_error");
  // The same read failure on a GET changes nothing: 503.
  handler = async () => {
    await dead.query("SELECT 1");
  };
  assertUnavailable(t, await call("GET", "/v1/probe"), "A");
});

test.serial("other SQL errors map as before: a constraint violation or a bad statement is a 500 internal_error, logged as unhandled", async (t) => {
  log.lines.length = 0;
  const id = uniqueName("row");
  await live.query("INSERT INTO probe VALUES ($1)", [id]);
  handler = async () => {
    await live.tx(async (c) => c.query("INSERT INTO probe VALUES ($1)", [id])); // 23505
  };
  let r = await call("POST", "/v1/probe");
  t.is(r.status, 500);
  t.deepEqual(r.body, { error: { code: "internal_error", message: "internal error; quote the request id when asking for support", request_id: r.headers.get("x-request-id") } });
  handler = async () => {
    await live.query("SELECT * FROM no_such_table"); // 42P01
  };
  r = await call("GET", "/api/probe");
  t.is(r.status, 500);
  t.deepEqual(r.body, { error: "internal error; quote the request id when asking for support" });
  t.is(r.headers.get("retry-after"), null);
  t.deepEqual(
    log.lines.map((l) => [l.level, l.msg]),
    [
      ["error", "unhandled error"],
      ["error", "unhandled error"],
    ],
  );
});

test.serial("a ClickHouse server that cannot be reached answers 503 with Retry-After 5, also where a route did not map it", async (t) => {
  const engine = new ServerEngine({ url: `http://127.0.0.1:${deadPort}`, requestTimeoutMs: 5000 });
  try {
    handler = async () => {
      await engine.query(sql`SELECT 1`);
    };
    const r = await call("GET", "/v1/probe");
    t.is(r.status, 503, r.text);
    t.is(r.headers.get("retry-after"), "5");
    t.is((r.body.error as { code: string }).code, "service_unavailable");
    t.false(r.text.includes(String(deadPort)));
  } finally {
    await engine.close();
  }
});

// ---- a whole control plane whose Postgres goes away and comes back ------------------------------

test.serial("a control plane cut off from Postgres answers 503 on REST reads and writes, and serves again once it is back", async (t) => {
  t.timeout(90_000);
  const h = await startControlPlaneBehindRelay();
  const { cp, relay, adminKey } = h;
  try {
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${cp!.restUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${adminKey}`, ...(body ? { "content-type": "application/json" } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, text, body: JSON.parse(text) as Record<string, unknown> };
    };
    t.is((await api("POST", "/api/agents", { name: "before" })).status, 201);
    t.is((await api("GET", "/v1/agents")).status, 200);

    await relay.down();
    for (const [method, path, body, group] of [
      ["GET", "/v1/agents", undefined, "A"],
      ["GET", "/api/agents", undefined, "B"],
      ["POST", "/api/agents", { name: "during" }, "B"],
      ["PATCH", "/v1/agents/agt_01JD3Z6Q4W8X9Y0Z1A2B3C4D5E", { status: "paused" }, "A"],
    ] as const) {
      const r = await api(method, path, body);
      t.is(r.status, 503, `${method} ${path}: ${r.text}`);
      t.is(r.headers.get("retry-after"), String(DATABASE_RETRY_AFTER_SECONDS));
      if (group === "A") t.is((r.body.error as { code: string }).code, "service_unavailable");
      else t.deepEqual(Object.keys(r.body), ["error"]);
    }
    t.is((await fetch(`${cp.restUrl}/healthz`)).status, 200, "liveness stays");
    t.is((await fetch(`${cp.restUrl}/readyz`)).status, 503, "readiness fails");

    await relay.up();
    // The pool connects anew: the next requests are served.
    let created = 0;
    for (let i = 0; i < 100 && created !== 201; i++) {
      created = (await api("POST", "/api/agents", { name: "after" })).status;
      if (created !== 201) await sleep(100);
    }
    t.is(created, 201);
    const list = await api("GET", "/api/agents");
    t.is(list.status, 200);
    t.deepEqual((list.body.data as { name: string }[]).map((a) => a.name).sort(), ["after", "before"], "the 503 write was not applied");
    // A duplicate name is still the 409 it was.
    t.is((await api("POST", "/api/agents", { name: "after" })).status, 409);
  } finally {
    await h.stop();
  }
});
