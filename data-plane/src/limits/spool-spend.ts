// Ties the budget ledger to the trace spool: at start the spool's unacknowledged traces of today are
// counted again, so a sidecar restart within the day does not forget spend the control plane has not
// seen (acknowledgements then retire it: budget.ts).
import { fromBinary } from "@bufbuild/protobuf";
import { TraceSchema, type Trace } from "@agentgov/proto";
import type { TraceQueue } from "../trace/queue.js";
import { budgetCharge } from "../pricing/index.js";
import type { BudgetLedger, RestoredSpend } from "./budget.js";

/**
 * Counts the unacknowledged traces of the current UTC day as local spend; returns how many. Reads the
 * spool in at most ~16 pages (peek skips what was read by scanning from the oldest entry, so pages stay
 * few; each page holds at most 1/16 of the spool in memory).
 */
export async function restoreSpendFromSpool(queue: TraceQueue, budget: BudgetLedger, nowMs = Date.now()): Promise<number> {
  const today = new Date(nowMs).toISOString().slice(0, 10);
  const seen = new Set<string>();
  const restored: RestoredSpend[] = [];
  const PAGE = Math.max(1000, Math.ceil(queue.size() / 16));
  for (;;) {
    const page = await queue.peek(PAGE, seen);
    if (page.length === 0) break;
    for (const s of page) {
      seen.add(s.id);
      let t: Trace;
      try {
        t = fromBinary(TraceSchema, s.payload);
      } catch {
        continue; // passed the record CRC but is not a Trace: it cannot be counted (the control plane will reject it)
      }
      // What the call was charged (budgetCharge): its cost, or the provider's ceiling for an unpriced model.
      const cost = budgetCharge(t);
      if (cost <= 0) continue;
      const day = new Date(Number(t.timestampMs)).toISOString().slice(0, 10);
      if (day === today) restored.push({ traceId: s.id, agentId: t.agentId, day, cost });
    }
    if (page.length < PAGE) break;
  }
  budget.restore(restored);
  return restored.length;
}
