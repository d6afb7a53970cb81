// Prometheus /metrics on the control plane and the sidecar, fed by real traffic: REST routes and
// statuses, REST rate-limit rejections, gRPC streams (connected sidecars), Sync messages, ingest batch
// sizes and lag; proxied requests by outcome, overhead, upstream latency, policy decisions, PII
// findings, rate-limit and budget rejections, the spool gauges. /healthz and /readyz on both.
import test from "ava";
import { startStack, eventually, type Stack } from "../harness/stack.js";
import { startFakeProviders, type FakeProviders } from "../fakes/providers/index.js";
import { metricValue, scrape } from "../harness/prometheus.js";
import type { Sidecar } from "@agentgov/data-plane";

let stack: Stack;
let fakes: FakeProviders;
let sidecar: Sidecar;
const agents: Record<string, string> = {};

async function agent(name: string, configYaml: string): Promise<string> {
  const r = await stack.api.post<{ data: { id: string } }>("/api/agents", { name, modelProvider: "openai", modelName: "gpt-4o-mini", configYaml });
  if (r.status !== 201) throw new Error(`agent ${name}: ${JSON.stringify(r.body)}`);
  return r.body.data.id;
}

function chat(agentId: string, content: string, headers: Record<string, string> = {}) {
  return fetch(`${sidecar.url}/v1/proxy/openai/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-provider", "x-service-key": stack.adminKey, "x-service-agent": agentId, ...headers },
    body: JSON.stringify({ model: "gpt-4o-mini", max_tokens: 50, messages: [{ role: "user", content }] }),
  });
}

test.before(async () => {
  fakes = await startFakeProviders();
  stack = await startStack({ API_RATE_LIMIT_PER_MINUTE: "60" });
  agents.plain = await agent("metrics-plain", "pii_detection: true\n");
  agents.limited = await agent("metrics-limited", "rate_limit: 1\n");
  agents.broke = await agent("metrics-broke", "budget_limit_daily: 0.0000001\n");
  const policy = await stack.api.post("/v1/policies", { name: "block ssn", action: "block", priority: 1, conditions: { direction: "inbound", pii_types: ["ssn"] } });
  if (policy.status !== 201) throw new Error(`policy: ${JSON.stringify(policy.body)}`);
  sidecar = await stack.sidecar({ PROVIDER_OPENAI_URL: fakes.urls.openai });
  await eventually(async () => sidecar.state().agents.has(agents.broke!) && sidecar.state().policies.size > 0);
});
test.after.always(async () => {
  await stack?.stop();
  await fakes?.close();
});

test.serial("control plane: REST requests by route template and status, no key needed, text format", async (t) => {
  await stack.api.get("/v1/agents");
  await stack.api.get(`/v1/agents/${agents.plain}`);
  await stack.api.get("/v1/agents/agt_01HZZZZZZZZZZZZZZZZZZZZZZZ");
  await stack.api.withKey("svc_api_notakeyatallnotakeyatallnotakey00").get("/v1/agents");
  const { samples, contentType } = await scrape(stack.cp.restUrl);
  t.regex(contentType, /^text\/plain/);
  t.true(metricValue(samples, "agentgov_http_requests_total", { method: "GET", route: "/v1/agents", status: "200" }) >= 1);
  t.true(metricValue(samples, "agentgov_http_requests_total", { method: "GET", route: "/v1/agents/{agent_id}", status: "200" }) >= 1);
  t.true(metricValue(samples, "agentgov_http_requests_total", { method: "GET", route: "/v1/agents/{agent_id}", status: "404" }) >= 1);
  t.true(metricValue(samples, "agentgov_http_requests_total", { method: "GET", route: "/v1/agents", status: "401" }) >= 1);
  t.true(metricValue(samples, "agentgov_http_request_duration_seconds_count", { route: "/v1/agents" }) >= 2);
  // Ids never become label values.
  t.false(samples.some((s) => Object.values(s.labels).some((v) => /agt_[0-9A-Z]{26}/.test(v))));
  t.true(metricValue(samples, "process_cpu_seconds_total") > 0, "process metrics are exported too");
});

test.serial("control plane: REST rate-limit rejections are counted", async (t) => {
  const key = await stack.api.post<{ data: { key: string } }>("/api/keys", { name: "limited", scope: "api" });
  const api = stack.api.withKey(key.body.data.key);
  let limited = 0;
  for (let i = 0; i < 61 && limited === 0; i++) if ((await api.get("/v1/policies")).status === 429) limited++;
  t.is(limited, 1);
  const { samples } = await scrape(stack.cp.restUrl);
  t.true(metricValue(samples, "agentgov_http_rate_limited_total", { route: "/v1/policies" }) >= 1);
  t.true(metricValue(samples, "agentgov_http_requests_total", { route: "/v1/policies", status: "429" }) >= 1);
});

test.serial("sidecar: proxied outcomes, policy decisions, PII findings, limit rejections, overhead and upstream latency", async (t) => {
  fakes.script({ text: "Hello there.", usage: { inputTokens: 12, outputTokens: 3 } });
  t.is((await chat(agents.plain!, "Say hello")).status, 200);
  t.is((await chat(agents.plain!, "My SSN is 536-22-8726, please file my taxes")).status, 403);
  t.is((await chat(agents.limited!, "one")).status, 200);
  t.is((await chat(agents.limited!, "two")).status, 429);
  // A budget admits one request while its spend is below the limit; the next is refused.
  t.is((await chat(agents.broke!, "costly")).status, 200);
  const broke = await chat(agents.broke!, "costly again");
  t.is(broke.status, 429);
  t.is(((await broke.json()) as { error: { code: string } }).error.code, "budget_exceeded");
  await chat("agt_01HZZZZZZZZZZZZZZZZZZZZZZZ", "nobody");

  const samples = await eventually(async () => {
    const s = (await scrape(sidecar.url)).samples;
    return metricValue(s, "agentgov_sidecar_proxy_requests_total") >= 6 ? s : undefined;
  });
  t.is(metricValue(samples, "agentgov_sidecar_proxy_requests_total", { provider: "openai", outcome: "success" }), 3);
  t.is(metricValue(samples, "agentgov_sidecar_proxy_requests_total", { provider: "openai", outcome: "blocked", code: "policy_violation" }), 1);
  t.is(metricValue(samples, "agentgov_sidecar_limit_rejections_total", { reason: "rate_limit" }), 1);
  t.is(metricValue(samples, "agentgov_sidecar_limit_rejections_total", { reason: "budget" }), 1);
  t.true(metricValue(samples, "agentgov_sidecar_policy_decisions_total", { type: "policy", action: "block" }) >= 1);
  t.true(metricValue(samples, "agentgov_sidecar_policy_decisions_total", { type: "policy", action: "none" }) >= 1);
  t.is(metricValue(samples, "agentgov_sidecar_policy_decisions_total", { type: "rate_limit", action: "block" }), 1);
  t.is(metricValue(samples, "agentgov_sidecar_pii_findings_total", { entity_type: "ssn", source: "prompt" }), 1);
  t.is(metricValue(samples, "agentgov_sidecar_upstream_latency_seconds_count", { provider: "openai", status_class: "2xx" }), 3);
  t.is(metricValue(samples, "agentgov_sidecar_proxy_overhead_seconds_count", { provider: "openai" }), 6);
  t.is(metricValue(samples, "agentgov_sidecar_tokens_total", { provider: "openai", direction: "input" }), 36);
  // Every request is counted by route and status, the untraced 404 included.
  t.is(metricValue(samples, "agentgov_sidecar_http_requests_total", { route: "proxy", provider: "openai", status: "404" }), 1);
  t.is(metricValue(samples, "agentgov_sidecar_http_requests_total", { route: "proxy", provider: "openai", status: "200" }), 3);
  // Spool and Sync state (from the sidecar's status report) are on the same page.
  t.true(samples.some((s) => s.name === "agentgov_spool_depth"));
  t.true(samples.some((s) => s.name === "agentgov_spool_oldest_age_seconds"));
  t.is(metricValue(samples, "agentgov_sync_connected"), 1);
  t.true(metricValue(samples, "agentgov_sync_snapshot_version") > 0);
});

test.serial("control plane: connected sidecars, Sync messages, ingest batch sizes and lag", async (t) => {
  const samples = await eventually(async () => {
    const s = (await scrape(stack.cp.restUrl)).samples;
    return metricValue(s, "agentgov_ingest_traces_stored_total") >= 6 ? s : undefined;
  });
  t.is(metricValue(samples, "agentgov_grpc_open_streams", { service: "governance.v1.SyncService", method: "Watch" }), 1);
  t.true(metricValue(samples, "agentgov_sync_messages_total", { kind: "snapshot" }) >= 1);
  t.true(metricValue(samples, "agentgov_sync_version") > 0);
  t.true(metricValue(samples, "agentgov_ingest_upload_batch_traces_count") >= 1);
  t.true(metricValue(samples, "agentgov_ingest_upload_batch_traces_sum") >= 6);
  t.true(metricValue(samples, "agentgov_ingest_stored_batch_traces_count") >= 1);
  t.true(metricValue(samples, "agentgov_ingest_lag_seconds_count") >= 6);
  t.true(metricValue(samples, "agentgov_ingest_lag_seconds_sum") > 0);
});

test.serial("health: /healthz and /readyz on both; readiness fails while draining", async (t) => {
  for (const base of [stack.cp.restUrl, sidecar.url]) {
    t.is((await fetch(`${base}/healthz`)).status, 200);
    const ready = await fetch(`${base}/readyz`);
    t.is(ready.status, 200, base);
    t.is(((await ready.json()) as { status: string }).status, "ready");
  }
  const cpReady = (await (await fetch(`${stack.cp.restUrl}/readyz`)).json()) as Record<string, unknown>;
  t.like(cpReady, { postgres: true, clickhouse: true });
  stack.cp.ops.lifecycle.startDraining();
  sidecar.ops.startDraining();
  for (const base of [stack.cp.restUrl, sidecar.url]) {
    const r = await fetch(`${base}/readyz`);
    t.is(r.status, 503);
    t.is(((await r.json()) as { status: string }).status, "draining");
    t.is((await fetch(`${base}/healthz`)).status, 200, "still alive while draining");
  }
  // Draining answers ask clients to reconnect elsewhere.
  t.is((await fetch(`${stack.cp.restUrl}/openapi.json`)).headers.get("connection"), "close");
});
