// Hostile strings through every filter of GET /v1/traces, GET /api/traces and GET /api/traces/stats,
// and through the trace id of both detail reads: quotes, backslashes, NUL and control bytes, unicode,
// injection attempts (`') OR 1=1 --`), malformed percent-encoding, plus seeded random strings over the
// same alphabet. Every answer is 200, 400 or (detail reads) 404 — never 500 — and a 200 holds exactly
// the rows whose value equals the filter: traces were stored whose agent id and environment ARE the
// hostile strings, so a broken escape shows up as missing or extra rows, not only as an error. A value
// holding NUL is refused with 400 like on every REST route (what Postgres cannot store is no valid input).
import test from "ava";
import type { Trace } from "@agentgov/proto";
import { HOSTILE_STRINGS, fuzzStrings } from "../../control-plane/src/stores/clickhouse/hostile-strings.js";
import { isStorableText } from "../../control-plane/src/domain/storable-text.js";
import { startStack, type Stack } from "../harness/stack.js";
import { MINUTE, makeTrace } from "./traces-helpers.js";

let stack: Stack;
const T = Date.now() - 1000;
const INJECTION = "') OR 1=1 --";
const hasLoneSurrogate = (s: string) => /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
/** Strings a URL can carry (percent-encoding needs well-formed UTF-16) and our filters accept (1–200 chars). */
const VALUES = [...new Set([...HOSTILE_STRINGS, INJECTION, "x".repeat(200), "x".repeat(201), ...fuzzStrings(40, 7)])].filter(
  (s) => !hasLoneSurrogate(s) && s.length <= 1000,
);
/** Raw query text that is not valid percent-encoded UTF-8, sent as is. */
const RAW = ["%", "%zz", "%ED%A0%80", "%FF%FE", "%C0%AF", "%00", "%27%20OR%201%3D1%20--", "a%2", "%E2%80%A8"];
const stored = new Map<string, Trace>(); // agentId (= environment) → its one trace
let normal: Trace;

test.before(async () => {
  stack = await startStack({ API_RATE_LIMIT_PER_MINUTE: "1000000" });
  const tenantId = stack.cp.tenantId;
  const traces: Trace[] = [];
  VALUES.filter((s) => s.length >= 1 && s.length <= 200).forEach((s, i) => {
    const t = makeTrace({ tenantId, agentId: s, environment: s, atMs: T - 30 * MINUTE + i * 1000, costUsd: 0.001, injectionScore: 0.5, pii: i % 2 === 0 });
    stored.set(s, t);
    traces.push(t);
  });
  normal = makeTrace({ tenantId, agentId: "agt_01JD3Z6Q4W8X9Y0Z1A2B3C4D5E", atMs: T - 5 * MINUTE });
  traces.push(normal);
  await stack.cp.traces.insert(traces);
});
test.after.always(async () => {
  await stack?.stop();
});

type Body = { data?: { id: string }[]; total?: number; summary?: { totalTraces: number }; error?: unknown };

async function get(path: string): Promise<{ status: number; body: Body }> {
  return stack.api.get<Body>(path);
}

const enc = encodeURIComponent;
const expectedIds = (v: string) => (stored.has(v) ? [stored.get(v)!.id] : []);

test("GET /v1/traces: hostile values in every parameter give 200 or 400, and agent_id matches exactly", async (t) => {
  const since = enc(new Date(T - 50 * MINUTE).toISOString());
  for (const v of VALUES) {
    const a = await get(`/v1/traces?since=${since}&limit=200&agent_id=${enc(v)}`);
    t.true(a.status === 200 || a.status === 400, `agent_id ${JSON.stringify(v.slice(0, 40))} → ${a.status}`);
    if (a.status === 200) t.deepEqual(a.body.data!.map((x) => x.id), expectedIds(v), `agent_id ${JSON.stringify(v.slice(0, 40))}`);
    else t.true(v.length === 0 || v.length > 200 || !isStorableText(v), `agent_id ${JSON.stringify(v.slice(0, 40))} refused`);
    if (!isStorableText(v)) t.is(a.status, 400, `agent_id ${JSON.stringify(v.slice(0, 40))} holds NUL`);
    for (const p of ["since", "until", "status", "has_pii", "limit", "cursor"]) {
      const r = await get(`/v1/traces?${p}=${enc(v)}`);
      t.true(r.status === 200 || r.status === 400, `${p}=${JSON.stringify(v.slice(0, 40))} → ${r.status}`);
    }
  }
  for (const raw of RAW) {
    for (const p of ["agent_id", "since", "until", "status", "has_pii", "limit", "cursor"]) {
      const r = await get(`/v1/traces?since=${since}&${p}=${raw}`);
      t.true(r.status === 200 || r.status === 400, `${p}=${raw} → ${r.status}`);
      if (r.status === 200 && p === "agent_id") t.true(r.body.data!.length <= 1, `${p}=${raw}: at most the one trace of that agent id`);
    }
  }
});

test("GET /api/traces: hostile values in every parameter give 200 or 400; agentId and environment match exactly", async (t) => {
  let matched = 0;
  for (const v of VALUES) {
    for (const p of ["agentId", "environment"]) {
      const r = await get(`/api/traces?limit=500&${p}=${enc(v)}`);
      t.true(r.status === 200 || r.status === 400, `${p} ${JSON.stringify(v.slice(0, 40))} → ${r.status}`);
      if (r.status === 200) {
        t.deepEqual(r.body.data!.map((x) => x.id), expectedIds(v), `${p} ${JSON.stringify(v.slice(0, 40))}`);
        t.is(r.body.total, expectedIds(v).length);
        if (r.body.data!.length === 1) matched++;
      } else t.true(v.length === 0 || v.length > 200 || !isStorableText(v));
    }
    for (const p of ["limit", "offset", "status", "startDate", "endDate", "minCostUsd", "maxCostUsd", "minInjectionScore"]) {
      const r = await get(`/api/traces?${p}=${enc(v)}`);
      t.true(r.status === 200 || r.status === 400, `${p}=${JSON.stringify(v.slice(0, 40))} → ${r.status}`);
    }
    // Combined with other filters, the hostile value still selects exactly its row.
    const both = await get(`/api/traces?agentId=${enc(v)}&environment=${enc(v)}&minCostUsd=0.001&minInjectionScore=0.5&status=success`);
    if (both.status === 200) t.deepEqual(both.body.data!.map((x) => x.id), expectedIds(v));
  }
  const findable = [...stored.keys()].filter(isStorableText).length;
  t.is(matched, 2 * findable, "every stored hostile agent id and environment a filter may carry was found by it");
  for (const raw of RAW) {
    for (const p of ["agentId", "environment", "limit", "offset", "status", "startDate", "endDate", "minCostUsd", "maxCostUsd", "minInjectionScore"]) {
      const r = await get(`/api/traces?${p}=${raw}`);
      t.true(r.status === 200 || r.status === 400, `${p}=${raw} → ${r.status}`);
      if (r.status === 200 && (p === "agentId" || p === "environment")) t.true(r.body.total! <= 1, `${p}=${raw}`);
    }
  }
});

test("GET /api/traces/stats: hostile agentId counts exactly its traces; hostile period and groupBy are 400", async (t) => {
  for (const v of VALUES) {
    const r = await get(`/api/traces/stats?period=1h&agentId=${enc(v)}`);
    t.true(r.status === 200 || r.status === 400, `agentId ${JSON.stringify(v.slice(0, 40))} → ${r.status}`);
    if (r.status === 200) t.is(r.body.summary!.totalTraces, expectedIds(v).length, `agentId ${JSON.stringify(v.slice(0, 40))}`);
    for (const p of ["period", "groupBy"]) {
      const q = await get(`/api/traces/stats?${p}=${enc(v)}`);
      t.true(q.status === 200 || q.status === 400, `${p}=${JSON.stringify(v.slice(0, 40))} → ${q.status}`);
    }
  }
  for (const raw of RAW) {
    for (const p of ["agentId", "period", "groupBy"]) t.true([200, 400].includes((await get(`/api/traces/stats?${p}=${raw}`)).status), `${p}=${raw}`);
  }
  // Groups keep hostile agent ids apart, each with its one trace.
  const g = await get("/api/traces/stats?period=1h&groupBy=agent");
  t.is(g.status, 200);
  const groups = (g.body as unknown as { groups: { agentId: string; traceCount: number }[] }).groups;
  t.is(groups.length, stored.size + 1);
  for (const [agentId] of stored) t.is(groups.find((x) => x.agentId === agentId)?.traceCount, 1, JSON.stringify(agentId.slice(0, 40)));
});

test("detail reads: a hostile trace id is 404 (or 400), never 500; a real id still reads", async (t) => {
  for (const v of [...VALUES.filter((s) => s.length > 0 && s.length <= 200), `${normal.id}' OR '1'='1`, `${normal.id}\\`]) {
    for (const base of ["/v1/traces/", "/api/traces/"]) {
      const r = await get(`${base}${enc(v)}`);
      t.true(r.status === 404 || r.status === 400, `${base}${JSON.stringify(v.slice(0, 40))} → ${r.status}`);
    }
  }
  for (const raw of RAW) {
    for (const base of ["/v1/traces/", "/api/traces/"]) t.true([400, 404].includes((await get(`${base}${raw}`)).status), `${base}${raw}`);
  }
  t.is((await get(`/v1/traces/${normal.id}`)).status, 200);
  t.is((await get(`/api/traces/${normal.id}`)).status, 200);
});
