// The compliance report (GET /api/compliance/report): what governance did over a window, from the
// traces themselves. Every query reads FROM … FINAL, so a trace stored twice counts once; the repeated
// findings and evaluations are the parallel Array columns, unrolled with ARRAY JOIN (ClickHouse 18.16
// and chDB alike). The five queries run at once; each is one scan of the window's partitions.

import { num, str } from "./json-values.js";
import { type SqlFragment, sql, sqlJoin } from "./sql-literal.js";
import { checkString, rangeConditions, type StoreContext, tenantCondition } from "./store-context.js";
import { dateMs } from "./time.js";
import { INJECTION_ELEVATED, INJECTION_HIGH, type ComplianceQuery, type ComplianceReport } from "./types.js";

/** Rows of one agent or policy past this many are left out (most refused / most matched first). */
export const COMPLIANCE_MAX_ROWS = 1000;

export async function complianceReport(ctx: StoreContext, tenantId: string, q: ComplianceQuery): Promise<ComplianceReport> {
  const filters: SqlFragment[] = [tenantCondition(tenantId), ...rangeConditions({ fromMs: dateMs(q.since, "since"), toMs: dateMs(q.until, "until") })];
  if (q.agentId !== undefined) filters.push(sql`agent_id = ${checkString(q.agentId, "agentId")}`);
  const where = sqlJoin(filters, " AND ");
  const from = sql`FROM ${ctx.table} FINAL`;
  const [totals, refusals, pii, policies, agents] = await Promise.all([
    ctx.engine.query(
      sql`SELECT count() AS n, countIf(status = 'success') AS success, countIf(status = 'error') AS error,
        countIf(status = 'blocked') AS blocked, countIf(has_pii = 1) AS with_pii,
        countIf(injection_score >= ${INJECTION_ELEVATED}) AS elevated, countIf(injection_score >= ${INJECTION_HIGH}) AS high,
        max(injection_score) AS max_score
      ${from} WHERE ${where}`,
    ),
    ctx.engine.query(
      sql`SELECT error_code AS reason, count() AS c ${from} WHERE ${where} AND status = 'blocked'
      GROUP BY error_code ORDER BY c DESC, reason ASC`,
    ),
    // A trace counts once per (type, source) and once per policy (and per result, per action): the first
    // occurrence in its arrays, marked by arrayEnumerateUniq (cheaper than distinct counts of trace ids).
    ctx.engine.query(
      sql`SELECT entity AS entity_type, source, count() AS findings, countIf(first = 1) AS traces
      ${from} ARRAY JOIN pii_entity_types AS entity, pii_sources AS source, arrayEnumerateUniq(pii_entity_types, pii_sources) AS first
      WHERE ${where}
      GROUP BY entity, source ORDER BY findings DESC, entity_type ASC, source ASC`,
    ),
    ctx.engine.query(
      sql`SELECT pid AS policy_id, argMax(pname, timestamp_ms) AS policy_name, countIf(k = 1) AS evaluated,
        countIf(kr = 1 AND result = 'fail') AS matched, countIf(ka = 1 AND action = 'block') AS blocked,
        countIf(ka = 1 AND action = 'redact') AS redacted, countIf(ka = 1 AND action = 'log') AS logged
      ${from} ARRAY JOIN policy_ids AS pid, policy_names AS pname, policy_results AS result, policy_actions AS action,
        arrayEnumerateUniq(policy_ids) AS k, arrayEnumerateUniq(policy_ids, policy_results) AS kr, arrayEnumerateUniq(policy_ids, policy_actions) AS ka
      WHERE ${where}
      GROUP BY pid ORDER BY matched DESC, policy_id ASC LIMIT ${COMPLIANCE_MAX_ROWS + 1}`,
    ),
    ctx.engine.query(
      sql`SELECT agent_id, argMax(agent_name, timestamp_ms) AS agent_name, count() AS n,
        countIf(status = 'blocked') AS blocked, countIf(has_pii = 1) AS with_pii
      ${from} WHERE ${where}
      GROUP BY agent_id ORDER BY blocked DESC, with_pii DESC, n DESC, agent_id ASC LIMIT ${COMPLIANCE_MAX_ROWS + 1}`,
    ),
  ]);
  const t = totals[0] ?? {};
  const n = num(t["n"]);
  return {
    traces: { total: n, success: num(t["success"]), error: num(t["error"]), blocked: num(t["blocked"]), withPii: num(t["with_pii"]) },
    refusals: refusals.map((r) => ({ reason: str(r["reason"]), count: num(r["c"]) })),
    pii: pii.map((r) => ({ entityType: str(r["entity_type"]), source: str(r["source"]), findings: num(r["findings"]), traces: num(r["traces"]) })),
    policies: policies.slice(0, COMPLIANCE_MAX_ROWS).map((r) => ({
      policyId: str(r["policy_id"]),
      policyName: str(r["policy_name"]),
      evaluated: num(r["evaluated"]),
      matched: num(r["matched"]),
      blocked: num(r["blocked"]),
      redacted: num(r["redacted"]),
      logged: num(r["logged"]),
    })),
    // max() over no rows is 0 on both engines; said so explicitly. Ingest takes any finite score from a
    // foreign sidecar: clamped to 0..1 as the trace views do.
    injection: { elevated: num(t["elevated"]), high: num(t["high"]), maxScore: n === 0 ? 0 : Math.min(1, Math.max(0, num(t["max_score"]))) },
    truncated: { policies: policies.length > COMPLIANCE_MAX_ROWS, agents: agents.length > COMPLIANCE_MAX_ROWS },
    agents: agents.slice(0, COMPLIANCE_MAX_ROWS).map((r) => ({ agentId: str(r["agent_id"]), agentName: str(r["agent_name"]), traces: num(r["n"]), blocked: num(r["blocked"]), withPii: num(r["with_pii"]) })),
  };
}
