// The sidecar's configuration: the spool's fdatasync window follows SPOOL_GATE unless it is set.
import test from "ava";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { DEFAULT_FSYNC_INTERVAL_MS, loadSidecarConfig } from "./env.js";

const KEY = { SIDECAR_KEY: "svc_ingest_" + "a".repeat(32) };

test("SPOOL_FSYNC_INTERVAL_MS: 100 ms with SPOOL_GATE=write (the default), 10 ms with fsync, as set when set", (t) => {
  t.is(loadSidecarConfig({ ...KEY }).SPOOL_GATE, "write");
  t.is(loadSidecarConfig({ ...KEY }).SPOOL_FSYNC_INTERVAL_MS, 100);
  t.is(loadSidecarConfig({ ...KEY, SPOOL_GATE: "fsync" }).SPOOL_FSYNC_INTERVAL_MS, 10);
  t.deepEqual(DEFAULT_FSYNC_INTERVAL_MS, { write: 100, fsync: 10 });
  t.is(loadSidecarConfig({ ...KEY, SPOOL_FSYNC_INTERVAL_MS: "0" }).SPOOL_FSYNC_INTERVAL_MS, 0);
  t.is(loadSidecarConfig({ ...KEY, SPOOL_GATE: "fsync", SPOOL_FSYNC_INTERVAL_MS: "250" }).SPOOL_FSYNC_INTERVAL_MS, 250);
  t.is(loadSidecarConfig({ ...KEY, SPOOL_FSYNC_INTERVAL_MS: "" }).SPOOL_FSYNC_INTERVAL_MS, 100, "empty = unset");
});

test("SPOOL_FSYNC_INTERVAL_MS out of range or not a number is refused with the variable's name", (t) => {
  for (const v of ["-1", "1001", "ten", "2.5"]) {
    const e = t.throws(() => loadSidecarConfig({ ...KEY, SPOOL_FSYNC_INTERVAL_MS: v }));
    t.regex(e!.message, /SPOOL_FSYNC_INTERVAL_MS/, v);
  }
});

test("OPENAI_STREAM_USAGE: budgeted unless set to pass or add; anything else is refused with the variable named", (t) => {
  t.is(loadSidecarConfig({ ...KEY }).OPENAI_STREAM_USAGE, "budgeted");
  t.is(loadSidecarConfig({ ...KEY, OPENAI_STREAM_USAGE: "add" }).OPENAI_STREAM_USAGE, "add");
  t.is(loadSidecarConfig({ ...KEY, OPENAI_STREAM_USAGE: "pass" }).OPENAI_STREAM_USAGE, "pass");
  const e = t.throws(() => loadSidecarConfig({ ...KEY, OPENAI_STREAM_USAGE: "true" }));
  t.regex(e!.message, /OPENAI_STREAM_USAGE/);
});

test("provider and control-plane URLs must be http(s): refused at start with the variable named", (t) => {
  t.is(loadSidecarConfig({ ...KEY, PROVIDER_OPENAI_URL: "http://127.0.0.1:9999" }).PROVIDER_OPENAI_URL, "http://127.0.0.1:9999");
  for (const [name, value] of [
    ["PROVIDER_OPENAI_URL", "ftp://127.0.0.1:18999"],
    ["PROVIDER_COHERE_URL", "javascript:alert(1)"],
    ["CONTROL_PLANE_GRPC_URL", "mailto:a@b"],
    // No URL at all: named too (the scheme check used to throw a bare "Invalid URL" out of the parse).
    ["PROVIDER_OPENAI_URL", "not-a-url"],
    ["CONTROL_PLANE_GRPC_URL", "nope"],
  ] as const) {
    const e = t.throws(() => loadSidecarConfig({ ...KEY, [name]: value }));
    t.regex(e!.message, new RegExp(name), value);
  }
});

test("numbers: a blank value counts as unset (the default, not 0); stray characters are refused with the variable named", (t) => {
  // " " used to read as 0: a random port, no response gate, no keep-alive.
  for (const blank of [" ", "  ", "\t", " \n"]) {
    const c = loadSidecarConfig({ ...KEY, SIDECAR_PORT: blank, SPOOL_COMMIT_WAIT_MS: blank, SSE_KEEPALIVE_MS: blank, SPOOL_FSYNC_INTERVAL_MS: blank });
    t.is(c.SIDECAR_PORT, 8181);
    t.is(c.SPOOL_COMMIT_WAIT_MS, 1000);
    t.is(c.SSE_KEEPALIVE_MS, 15_000);
    t.is(c.SPOOL_FSYNC_INTERVAL_MS, 100);
  }
  t.is(loadSidecarConfig({ ...KEY, SIDECAR_PORT: " 9000 " }).SIDECAR_PORT, 9000, "spaces around a number are fine");
  t.is(loadSidecarConfig({ ...KEY, SSE_KEEPALIVE_MS: "0" }).SSE_KEEPALIVE_MS, 0);
  t.is(loadSidecarConfig({ ...KEY }, { SIDECAR_PORT: 0 }).SIDECAR_PORT, 0, "overrides are numbers");
  for (const [name, v] of [
    ["SIDECAR_PORT", "0x50"],
    ["SIDECAR_PORT", "80px"],
    ["SIDECAR_PORT", "80 80"],
    ["SPOOL_COMMIT_WAIT_MS", "1e3"],
    ["SSE_KEEPALIVE_MS", "15s"],
    ["UPSTREAM_CONNECTIONS", "+256"],
    ["SPOOL_MAX_BYTES", "1_073_741_824"],
  ] as const) {
    const e = t.throws(() => loadSidecarConfig({ ...KEY, [name]: v }));
    t.regex(e!.message, new RegExp(`${name}: must be a whole number`), v);
  }
});

test("OTEL_EXPORTER_OTLP_ENDPOINT / _TRACES_ENDPOINT must be http(s) URLs: refused at start with the variable named", (t) => {
  t.is(loadSidecarConfig({ ...KEY, OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }).OTEL_EXPORTER_OTLP_ENDPOINT, "http://collector:4318");
  t.is(loadSidecarConfig({ ...KEY, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://otel.example/v1/traces" }).OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, "https://otel.example/v1/traces");
  for (const name of ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]) {
    // "collector:4318" parses as a URL with the scheme "collector:" (every export then failed with "fetch failed").
    for (const v of ["collector:4318", "ftp://collector:4318", "grpc://collector:4317", "not a url"]) {
      const e = t.throws(() => loadSidecarConfig({ ...KEY, [name]: v }));
      t.regex(e!.message, new RegExp(`${name}: must be an http or https URL`), v);
    }
  }
});

test("DATA_DIR: unset is .data of the project, the control plane's default, whatever the current directory", (t) => {
  const project = fileURLToPath(new URL("../../../", import.meta.url));
  t.is(loadSidecarConfig({ ...KEY }).DATA_DIR, join(project, ".data"));
  t.is(loadSidecarConfig({ ...KEY, DATA_DIR: "./spool" }).DATA_DIR, "./spool", "a set value is kept as given");
  const register = new URL("../../../bin/typescript/register.js", import.meta.url).href;
  const env = new URL("./env.ts", import.meta.url).href;
  const seen = execFileSync(process.execPath, ["--import", register, "--input-type=module", "-e", `const m = await import(${JSON.stringify(env)}); console.log(m.loadSidecarConfig(${JSON.stringify(KEY)}).DATA_DIR);`], {
    cwd: tmpdir(),
    encoding: "utf8",
  });
  t.is(seen.trim(), join(project, ".data"));
});
