// Spend restored from a real on-disk spool at start (the spool ships encoded traces; restore decodes
// them): today's unacknowledged costs count, other days, zero costs and undecodable records do not.
import test from "ava";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { TraceSchema } from "@agentgov/proto";
import { DurableSpool, type SpoolLog } from "../trace/spool.js";
import { encodeRecord } from "../trace/spool-format.js";
import { BudgetLedger } from "./budget.js";
import { restoreSpendFromSpool } from "./spool-spend.js";
import { budgetCharge } from "../pricing/index.js";

const log: SpoolLog = { info: () => undefined, warn: () => undefined, error: () => undefined };
const NOW = Date.parse("2026-11-21T12:00:00Z");
const D = "2026-11-21";

const trace = (i: number, agentId: string, costUsd: number, atMs: number) =>
  create(TraceSchema, { id: `trc_${String(i).padStart(26, "0")}`, tenantId: "ten_1", agentId, status: "success", timestampMs: BigInt(atMs), costUsd });

test("restoreSpendFromSpool counts today's unacknowledged spend from the spooled bytes and skips what does not decode", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), "agentgov-spool-spend-"));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // A record that checks out (CRC, id and timestamp readable) but is not a decodable Trace: a
  // length-delimited field 2 whose length runs past the end, after id (1) and timestamp_ms (10).
  const good = toBinary(TraceSchema, trace(999, "a", 5, NOW - 1000));
  const broken = Buffer.concat([good, Buffer.from([0x12, 0x7f, 0x41])]);
  writeFileSync(join(dir, "seg-000000000001.log"), encodeRecord(broken));

  const s = await DurableSpool.open({ dir, log, cacheBytes: 0 });
  t.is(s.size(), 1, "the undecodable record is replayed (only its id and timestamp are read at replay)");
  await Promise.all([
    trace(1, "a", 0.25, NOW - 60_000),
    trace(2, "a", 0.5, NOW - 30_000),
    trace(3, "b", 1, NOW - 1000),
    trace(4, "a", 0, NOW - 1000), // no cost
    trace(5, "a", 7, NOW - 86_400_000), // yesterday
    // a model the price table does not know: cost 0, charged at the provider's ceiling
    create(TraceSchema, { ...trace(6, "c", 0, NOW - 1000), provider: "openai", priceMissing: true, inputTokens: 1000, outputTokens: 100 }),
  ].map((x) => s.append(x)));

  const views = new Map<string, number>();
  const ledger = new BudgetLedger({ controlPlaneSpend: (agent, day) => views.get(`${agent}|${day}`) ?? 0 });
  t.is(await restoreSpendFromSpool(s, ledger, NOW), 4);
  t.is(ledger.spent("a", D), 0.75);
  t.is(ledger.spent("b", D), 1);
  const ceiling = budgetCharge({ provider: "openai", costUsd: 0, priceMissing: true, inputTokens: 1000, outputTokens: 100 });
  t.true(ceiling > 0);
  t.is(ledger.spent("c", D), ceiling);
  t.is(ledger.stats().localEntries, 4);

  // An acknowledgement with the figure the control plane computed retires the restored spend.
  await s.remove([trace(3, "b", 1, 0).id]);
  ledger.acknowledged([trace(3, "b", 1, 0).id], [{ agentId: "b", day: D, spentUsd: 1 }]);
  t.is(s.size(), 6);
  t.is(ledger.spent("b", D), 1, "the control plane's figure now holds it; not counted twice");
  t.is(ledger.stats().localEntries, 3);
  await s.close();
});
