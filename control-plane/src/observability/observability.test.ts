// Logger redaction (credentials always, prompt text unless LOG_SENSITIVE), the same lists in both
// packages, and route templates for metric labels.
import test from "ava";
import { Writable } from "node:stream";
import { createServiceLogger, CONTENT_PATHS, CREDENTIAL_PATHS } from "./logger.js";
import * as sidecarLogger from "../../../data-plane/src/observability/logger.js";
import { routeMatcher, UNMATCHED_ROUTE } from "./http-metrics.js";

function capture(logSensitive: boolean) {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  const log = createServiceLogger({ service: "t", level: "debug", logSensitive, destination });
  return { log, text: () => lines.join("") };
}

test("credentials and prompt text are censored under the usual field names", (t) => {
  const { log, text } = capture(false);
  log.info({ apiKey: "svc_api_SECRET1", req: { headers: { authorization: "Bearer SECRET2", "x-service-key": "SECRET3" } }, body: { prompt: "SECRET4", messages: [{ content: "SECRET5" }] }, config: { SIDECAR_KEY: "SECRET6", DATABASE_URL: "postgres://u:SECRET7@h/db" }, requestId: "req_1" }, "x");
  log.info({ trace: { inputExtras: "SECRET8", input_extras: "SECRET9" } }, "tool definitions");
  const out = text();
  for (let i = 1; i <= 9; i++) t.false(out.includes(`SECRET${i}`), `SECRET${i}`);
  t.true(out.includes('"requestId":"req_1"'));
  t.true(out.includes("[redacted]"));
});

test("LOG_SENSITIVE lifts the redaction of prompt text only", (t) => {
  const { log, text } = capture(true);
  log.debug({ prompt: "visible prompt", apiKey: "svc_api_HIDDEN" }, "x");
  t.true(text().includes("visible prompt"));
  t.false(text().includes("HIDDEN"));
});

test("the control plane and the sidecar redact the same fields", (t) => {
  t.deepEqual(sidecarLogger.CREDENTIAL_PATHS, CREDENTIAL_PATHS);
  t.deepEqual(sidecarLogger.CONTENT_PATHS, CONTENT_PATHS);
});

test("route templates: literal paths win over parameters; unknown paths are one label", (t) => {
  const route = routeMatcher(["/api/traces/{id}", "/api/traces/stats", "/v1/agents/{agent_id}", "/healthz"]);
  t.is(route("/api/traces/stats"), "/api/traces/stats");
  t.is(route("/api/traces/trc_01ABC"), "/api/traces/{id}");
  t.is(route("/v1/agents/agt_1"), "/v1/agents/{agent_id}");
  t.is(route("/v1/agents/agt_1/extra"), UNMATCHED_ROUTE);
  t.is(route("/wp-admin.php"), UNMATCHED_ROUTE);
});
