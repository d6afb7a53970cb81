// The control plane's configuration: bounds that protect data, and e-mail addresses as organisations have them.
import test from "ava";
import { loadControlPlaneConfig } from "./env.js";

test("TRACE_RETENTION_DAYS: at most 20,000 (a TTL past ClickHouse's DateTime range would expire every trace at once)", (t) => {
  t.is(loadControlPlaneConfig({}).TRACE_RETENTION_DAYS, 30);
  t.is(loadControlPlaneConfig({ TRACE_RETENTION_DAYS: "20000" }).TRACE_RETENTION_DAYS, 20_000);
  for (const v of ["20001", "36500", "0", "-1", "ten"]) {
    const e = t.throws(() => loadControlPlaneConfig({ TRACE_RETENTION_DAYS: v }));
    t.regex(e!.message, /TRACE_RETENTION_DAYS/, v);
  }
});

test("BOOTSTRAP_ADMIN_EMAIL: the default admin@localhost and single-label domains are accepted when set; non-addresses are not", (t) => {
  t.is(loadControlPlaneConfig({}).BOOTSTRAP_ADMIN_EMAIL, "admin@localhost");
  for (const v of ["admin@localhost", "ops@corp", "Jane.Doe@example.com"]) t.is(loadControlPlaneConfig({ BOOTSTRAP_ADMIN_EMAIL: v }).BOOTSTRAP_ADMIN_EMAIL, v);
  for (const v of ["notanemail", "a b@c", "@corp", "ops@"]) {
    const e = t.throws(() => loadControlPlaneConfig({ BOOTSTRAP_ADMIN_EMAIL: v }));
    t.regex(e!.message, /BOOTSTRAP_ADMIN_EMAIL/, v);
  }
});

test("URLs: only the schemes the programs speak, refused at start with the variable named and no secret echoed", (t) => {
  t.is(loadControlPlaneConfig({ DATABASE_URL: "postgresql://u:p@db:5432/x" }).DATABASE_URL, "postgresql://u:p@db:5432/x");
  t.is(loadControlPlaneConfig({ CLICKHOUSE_URL: "https://ch:8443" }).CLICKHOUSE_URL, "https://ch:8443");
  for (const [name, value] of [
    ["DATABASE_URL", "mysql://x:1/y"],
    ["CLICKHOUSE_URL", "clickhouse://default:ChPwSecret99@127.0.0.1:9000"],
    ["CLICKHOUSE_URL", "localhost:8123"],
    // No URL at all: named too (the scheme check used to throw a bare "Invalid URL" out of the parse).
    ["DATABASE_URL", "notaurl"],
    ["CLICKHOUSE_URL", "not a url"],
  ] as const) {
    const e = t.throws(() => loadControlPlaneConfig({ [name]: value }));
    t.regex(e!.message, new RegExp(name), value);
    t.false(e!.message.includes("ChPwSecret99"), "the password is not echoed");
  }
});
