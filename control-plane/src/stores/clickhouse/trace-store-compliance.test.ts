// The compliance report on every engine, checked against figures computed here from the raw traces:
// totals by status, refusals by reason, PII findings per type and source, each policy's evaluations
// and actions (under its latest name), injection scores, agents (most refused first) — within the
// window and tenant only, for one agent when asked, and unchanged by storing every trace again.

import test from "ava";
import { create, PiiDetectionSchema, PolicyEvaluationSchema, type Trace } from "@agentgov/proto";
import { enginesUnderTest, makeTrace, openTestStore, removeChdbDataDir, seededRandom, traceId } from "./test-engines.js";
import { INJECTION_ELEVATED, INJECTION_HIGH, type ComplianceReport } from "./types.js";

test.after.always(() => removeChdbDataDir());

const DAY = 86_400_000;
const PII = ["email", "ssn", "credit_card", "phone"] as const;
const POLICIES = [
  { id: "pol_pii_block", action: "block" },
  { id: "pol_email_redact", action: "redact" },
  { id: "pol_audit_log", action: "log" },
] as const;
const REASONS = ["policy_violation", "rate_limit_exceeded", "budget_exceeded", "agent_paused"] as const;
const AGENTS = ["agt_a", "agt_b", "agt_c", "agt_d"] as const;

function traces(n: number, tenantId: string, fromMs: number, toMs: number, seed: number): Trace[] {
  const rnd = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const out: Trace[] = [];
  for (let i = 0; i < n; i++) {
    const ms = fromMs + Math.floor(rnd() * (toMs - fromMs + 1));
    const r = rnd();
    const status = r < 0.7 ? "success" : r < 0.8 ? "error" : "blocked";
    const agent = pick(AGENTS);
    const findings = Array.from({ length: Math.floor(rnd() * 3) }, () =>
      create(PiiDetectionSchema, { entityType: pick(PII), source: rnd() < 0.6 ? "prompt" : "completion", start: 0, end: 4, score: 0.9 }),
    );
    const evaluations = POLICIES.filter(() => rnd() < 0.7).map((p) => {
      const fail = rnd() < 0.3;
      return create(PolicyEvaluationSchema, { policyId: p.id, policyName: `${p.id} v${Math.floor(ms / DAY) % 3}`, result: fail ? "fail" : "pass", actionTaken: fail ? p.action : "none" });
    });
    out.push(
      makeTrace({
        id: traceId(ms, rnd),
        tenantId,
        timestampMs: BigInt(ms),
        agentId: agent,
        agentName: `${agent} named ${Math.floor(ms / DAY) % 5}`,
        status,
        errorCode: status === "blocked" ? pick(REASONS) : status === "error" ? "upstream_unavailable" : "",
        injectionScore: Math.round(rnd() * 1000) / 1000,
        piiScanEnabled: true,
        piiDetections: findings,
        policyEvaluations: evaluations,
      }),
    );
  }
  return out;
}

function count<K>(map: Map<K, number>, key: K, by = 1): void {
  map.set(key, (map.get(key) ?? 0) + by);
}

/** The report computed here from the traces of the window. */
function expected(rows: Trace[]): ComplianceReport {
  const latest = <V>(m: Map<string, { ms: bigint; value: V }>, key: string, ms: bigint, value: V) => {
    const cur = m.get(key);
    if (!cur || ms > cur.ms) m.set(key, { ms, value });
  };
  const refusals = new Map<string, number>();
  const findings = new Map<string, number>();
  const piiTraces = new Map<string, number>();
  const policy = new Map<string, { evaluated: number; matched: number; blocked: number; redacted: number; logged: number }>();
  const policyName = new Map<string, { ms: bigint; value: string }>();
  const agent = new Map<string, { traces: number; blocked: number; withPii: number }>();
  const agentName = new Map<string, { ms: bigint; value: string }>();
  for (const t of rows) {
    if (t.status === "blocked") count(refusals, t.errorCode);
    const kinds = new Set<string>();
    for (const f of t.piiDetections) {
      count(findings, `${f.entityType}|${f.source}`);
      kinds.add(`${f.entityType}|${f.source}`);
    }
    for (const k of kinds) count(piiTraces, k);
    for (const e of t.policyEvaluations) {
      const p = policy.get(e.policyId) ?? { evaluated: 0, matched: 0, blocked: 0, redacted: 0, logged: 0 };
      p.evaluated++;
      if (e.result === "fail") p.matched++;
      if (e.actionTaken === "block") p.blocked++;
      if (e.actionTaken === "redact") p.redacted++;
      if (e.actionTaken === "log") p.logged++;
      policy.set(e.policyId, p);
      latest(policyName, e.policyId, t.timestampMs, e.policyName);
    }
    const a = agent.get(t.agentId) ?? { traces: 0, blocked: 0, withPii: 0 };
    a.traces++;
    if (t.status === "blocked") a.blocked++;
    if (t.piiDetections.length > 0) a.withPii++;
    agent.set(t.agentId, a);
    latest(agentName, t.agentId, t.timestampMs, t.agentName);
  }
  const scores = rows.map((t) => t.injectionScore);
  return {
    traces: {
      total: rows.length,
      success: rows.filter((t) => t.status === "success").length,
      error: rows.filter((t) => t.status === "error").length,
      blocked: rows.filter((t) => t.status === "blocked").length,
      withPii: rows.filter((t) => t.piiDetections.length > 0).length,
    },
    refusals: [...refusals].map(([reason, c]) => ({ reason, count: c })).sort((a, b) => b.count - a.count || (a.reason < b.reason ? -1 : 1)),
    pii: [...findings]
      .map(([k, c]) => {
        const [entityType, source] = k.split("|") as [string, string];
        return { entityType, source, findings: c, traces: piiTraces.get(k) ?? 0 };
      })
      .sort((a, b) => b.findings - a.findings || (a.entityType < b.entityType ? -1 : a.entityType > b.entityType ? 1 : a.source < b.source ? -1 : 1)),
    policies: [...policy]
      .map(([policyId, p]) => ({ policyId, policyName: policyName.get(policyId)!.value, ...p }))
      .sort((a, b) => b.matched - a.matched || (a.policyId < b.policyId ? -1 : 1)),
    injection: { elevated: scores.filter((s) => s >= INJECTION_ELEVATED).length, high: scores.filter((s) => s >= INJECTION_HIGH).length, maxScore: scores.length === 0 ? 0 : Math.max(...scores) },
    agents: [...agent]
      .map(([agentId, a]) => ({ agentId, agentName: agentName.get(agentId)!.value, ...a }))
      .sort((a, b) => b.blocked - a.blocked || b.withPii - a.withPii || b.traces - a.traces || (a.agentId < b.agentId ? -1 : 1)),
    truncated: { policies: false, agents: false },
  };
}

for (const kind of enginesUnderTest()) {
  test(`${kind}: the compliance report matches the raw traces of its window and tenant, for one agent too, and storing every trace again changes nothing`, async (t) => {
    const ts = await openTestStore(kind);
    try {
      const now = Date.now();
      const inside = traces(1500, "ten", now - 20 * DAY, now - DAY, 7);
      const before = traces(200, "ten", now - 60 * DAY, now - 21 * DAY, 8);
      const other = traces(200, "other", now - 20 * DAY, now - DAY, 9);
      await ts.store.insert([...inside, ...before, ...other]);
      await ts.store.insert(inside); // stored again: counts once
      const since = new Date(now - 20 * DAY);
      const until = new Date(now - DAY);
      const report = await ts.store.compliance("ten", { since, until });
      t.deepEqual(report, expected(inside));
      t.true(report.refusals.length >= 3 && report.pii.length >= 6 && report.policies.length === 3, "the data exercises every part");

      const one = await ts.store.compliance("ten", { since, until, agentId: "agt_b" });
      t.deepEqual(one, expected(inside.filter((x) => x.agentId === "agt_b")));

      const empty = await ts.store.compliance("nobody", { since, until });
      t.deepEqual(empty, expected([]));
    } finally {
      await ts.dispose();
    }
  });

  test(`${kind}: a policy evaluated twice in one trace counts once; a foreign score outside 0..1 is clamped; long lists are cut with a flag`, async (t) => {
    const ts = await openTestStore(kind);
    try {
      const now = Date.now();
      const twice = makeTrace({
        tenantId: "ten",
        timestampMs: BigInt(now - 1000),
        injectionScore: 1.5,
        policyEvaluations: [
          create(PolicyEvaluationSchema, { policyId: "pol_x", policyName: "x", result: "pass", actionTaken: "none" }),
          create(PolicyEvaluationSchema, { policyId: "pol_x", policyName: "x", result: "fail", actionTaken: "redact" }),
          create(PolicyEvaluationSchema, { policyId: "pol_x", policyName: "x", result: "fail", actionTaken: "redact" }),
        ],
        piiDetections: [0, 1, 2].map(() => create(PiiDetectionSchema, { entityType: "email", source: "prompt", start: 0, end: 4, score: 0.9 })),
      });
      const many = Array.from({ length: 1001 }, (_, i) => makeTrace({ tenantId: "ten", timestampMs: BigInt(now - 2000 - i), agentId: `agt_${String(i).padStart(4, "0")}` }));
      await ts.store.insert([twice, ...many]);
      const r = await ts.store.compliance("ten", { since: new Date(now - 60_000), until: new Date(now) });
      t.deepEqual(r.policies, [{ policyId: "pol_x", policyName: "x", evaluated: 1, matched: 1, blocked: 0, redacted: 1, logged: 0 }]);
      t.deepEqual(r.pii, [{ entityType: "email", source: "prompt", findings: 3, traces: 1 }]);
      t.is(r.injection.maxScore, 1);
      t.is(r.injection.high, 1);
      t.is(r.agents.length, 1000);
      t.deepEqual(r.truncated, { policies: false, agents: true });
      t.is(r.traces.total, 1002);
    } finally {
      await ts.dispose();
    }
  });
}
