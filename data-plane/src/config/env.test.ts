// The sidecar's configuration: the spool's fdatasync window follows SPOOL_GATE unless it is set.
import test from "ava";
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
