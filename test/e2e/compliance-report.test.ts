// GET /api/compliance/report through a real stack: calls proxied by a sidecar (passed, redacted,
// blocked by a policy, refused by the rate limit) show up in the report as counts by status and reason,
// PII per type and source, each policy's evaluations and actions, and the agents with their current
// names; the window and agent filters apply; bad windows are 400 in group B's shape and the report
// needs compliance:read (permissions.test.ts covers the scope matrix).
import test from "ava";
import { startProxyWorld, type ProxyWorld } from "./proxy-helpers.js";
import { createPolicy, send } from "./policy-helpers.js";
import type { ComplianceReport } from "../../control-plane/src/stores/clickhouse/index.js";

/** The store's report with the window it covers, as the route answers it. */
type Report = ComplianceReport & { startDate: string; endDate: string; agentId: string | null };

let w: ProxyWorld;
test.before(async () => {
  w = await startProxyWorld();
});
test.after.always(async () => {
  await w?.stop();
});

const report = (query = "") => w.stack.api.get<{ data: Report }>(`/api/compliance/report${query}`);

test.serial("the report counts what the sidecar did: passed, redacted, blocked by policy and by rate limit, PII per type and source, per policy, per agent", async (t) => {
  const start = new Date(Date.now() - 1000).toISOString();
  const a = await w.agent("compliance-a", "rate_limit: 4\n");
  const b = await w.agent("compliance-b");
  const redact = await createPolicy(w, { name: "redact emails", action: "redact", priority: 1, conditions: { direction: "inbound", pii_types: ["email"] }, agents: [a, b] });
  const block = await createPolicy(w, { name: "block ssn", action: "block", priority: 2, conditions: { direction: "inbound", pii_types: ["ssn"] }, agents: [a] });

  const ids: string[] = [];
  const call = async (agent: string, prompt: string, status: number) => {
    const r = await send(w, "openai", agent, prompt);
    t.is(r.status, status, prompt);
    ids.push(String(r.headers.get("x-service-trace-id")));
  };
  await call(a, "mail jane.doe@example.com the plan", 200);
  await call(a, "my SSN is 536-22-8726", 403);
  await call(a, "hello there", 200);
  await call(a, "and again", 200);
  await call(a, "one too many", 429);
  await call(b, "write to ops@example.org and bob@example.net", 200);
  // Every trace stored (the rate-limit refusal is traced too).
  for (const id of ids) await w.trace(id);

  const r = await report(`?startDate=${encodeURIComponent(start)}`);
  t.is(r.status, 200);
  const d = r.body.data;
  t.deepEqual(d.traces, { total: 6, success: 4, error: 0, blocked: 2, withPii: 3 });
  t.deepEqual(d.refusals, [
    { reason: "policy_violation", count: 1 },
    { reason: "rate_limit_exceeded", count: 1 },
  ]);
  t.deepEqual(d.pii, [
    { entityType: "email", source: "prompt", findings: 3, traces: 2 },
    { entityType: "ssn", source: "prompt", findings: 1, traces: 1 },
  ]);
  const byId = new Map(d.policies.map((p) => [p.policyId, p]));
  // The rate-limit refusal came before the policies: 4 of a's 5 calls and b's 1 evaluated the redaction.
  t.deepEqual(byId.get(redact), { policyId: redact, policyName: "redact emails", evaluated: 5, matched: 2, blocked: 0, redacted: 2, logged: 0 });
  t.deepEqual(byId.get(block), { policyId: block, policyName: "block ssn", evaluated: 4, matched: 1, blocked: 1, redacted: 0, logged: 0 });
  t.deepEqual(
    d.agents.map((x) => [x.agentName, x.traces, x.blocked, x.withPii]),
    [
      ["compliance-a", 5, 2, 2],
      ["compliance-b", 1, 0, 1],
    ],
  );
  t.is(d.agentId, null);
  t.deepEqual(d.truncated, { policies: false, agents: false });

  // One agent; a window that ends before the calls.
  const onlyB = await report(`?startDate=${encodeURIComponent(start)}&agentId=${b}`);
  t.deepEqual(onlyB.body.data.traces, { total: 1, success: 1, error: 0, blocked: 0, withPii: 1 });
  t.is(onlyB.body.data.agentId, b);
  const before = await report(`?startDate=2020-01-01&endDate=2020-01-31`);
  t.is(before.status, 200);
  t.is(before.body.data.traces.total, 0);
  t.deepEqual(before.body.data.pii, []);
  t.is(before.body.data.endDate, "2020-01-31T23:59:59.999Z", "a date alone ends at the end of that UTC day");
});

test.serial("bad windows are 400 in group B's shape; the default window is the last 30 days", async (t) => {
  const future = await w.stack.api.get<{ error: string }>(`/api/compliance/report?startDate=2999-01-01`);
  t.is(future.status, 400);
  t.regex(future.body.error, /after now/, "without endDate the window ends now");
  for (const q of ["?startDate=2026-02-01&endDate=2026-01-01", "?startDate=2025-01-01&endDate=2025-06-01", "?startDate=yesterday", "?endDate=2026-13-01", `?agentId=${"x".repeat(201)}`]) {
    const r = await w.stack.api.get<{ error: unknown }>(`/api/compliance/report${q}`);
    t.is(r.status, 400, q);
    t.is(typeof r.body.error, "string", q);
  }
  const r = await report();
  t.is(r.status, 200);
  const span = Date.parse(r.body.data.endDate) - Date.parse(r.body.data.startDate);
  t.is(span, 30 * 86_400_000);
});
