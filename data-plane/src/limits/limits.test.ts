// Rate-limit window edges (exact times) and the budget ledger's accounting: reservations under
// concurrency, the in-flight allowance, local spend retired exactly once against the figure an
// acknowledgement carries (whichever of acknowledgement and Sync update comes first), restore after restart.
import test from "ava";
import { RateLimiter, WINDOW_MS } from "./rate-limiter.js";
import { BudgetLedger } from "./budget.js";

test("rate limit: a sliding 60 s window, edges exact, Retry-After to the oldest hit's exit", (t) => {
  const rl = new RateLimiter();
  const t0 = 1_000_000;
  t.is(rl.take("a", 3, t0), 0);
  t.is(rl.take("a", 3, t0 + 10_000), 0);
  t.is(rl.take("a", 3, t0 + 20_000), 0);
  t.is(rl.take("a", 3, t0 + 20_001), 40, "full: the first hit leaves at t0+60 s, 39.999 s later → 40");
  t.is(rl.take("a", 3, t0 + WINDOW_MS - 1), 1, "1 ms before the first hit leaves: still full, Retry-After ≥ 1");
  t.is(rl.take("a", 3, t0 + WINDOW_MS), 0, "exactly 60 s later the first hit is out of the window");
  t.is(rl.take("a", 3, t0 + WINDOW_MS + 1), 10, "full again until t0+10 s+60 s");
  t.is(rl.take("b", 3, t0 + 20_001), 0, "per agent");
  t.is(rl.count("a", t0 + WINDOW_MS), 3);
});

test("rate limit: refused requests are not counted; no limit means no limit", (t) => {
  const rl = new RateLimiter();
  t.is(rl.take("a", 1, 0), 0);
  for (let i = 1; i < 100; i++) t.true(rl.take("a", 1, i * 100) > 0);
  t.is(rl.take("a", 1, WINDOW_MS), 0, "refusals did not extend the window");
  for (let i = 0; i < 1000; i++) t.is(rl.take("free", 0, i), 0);
});

test("rate limit: a lowered limit counts what is already in the window", (t) => {
  const rl = new RateLimiter();
  for (let i = 0; i < 10; i++) t.is(rl.take("a", 10, i * 1000), 0);
  // limit now 5: the 5th-newest hit (t=5 s) must leave before another is admitted
  t.is(rl.take("a", 5, 10_000), 55);
  t.is(rl.take("a", 5, 65_000), 0);
});

function newLedger() {
  const figures = new Map<string, number>();
  const view = { controlPlaneSpend: (agent: string, day: string) => figures.get(`${agent}|${day}`) ?? 0 };
  const ledger = new BudgetLedger(view);
  /** A figure arriving over Sync: the state is replaced, then the ledger hears of it (as main.ts does). */
  const sync = (agent: string, day: string, v: number) => {
    figures.set(`${agent}|${day}`, v);
    ledger.onControlPlaneSpend(agent, day, 0, v);
  };
  return { ledger, sync };
}

const D = "2026-11-21";

test("budget: 50 concurrent reservations of 1/10 of the budget admit 10", (t) => {
  const { ledger } = newLedger();
  let admitted = 0;
  for (let i = 0; i < 50; i++) if (ledger.tryReserve("a", D, 1.0, 0.1)) admitted++;
  t.is(admitted, 10);
  t.is(ledger.inFlight("a", D), 10);
});

test("budget: the in-flight allowance admits one request that does not fit, only when nothing else is in flight", (t) => {
  const { ledger } = newLedger();
  t.true(ledger.tryReserve("a", D, 0.01, 0.04), "a budget smaller than one request's maximum is still usable");
  t.false(ledger.tryReserve("a", D, 0.01, 0.04), "but only one such request at a time");
  ledger.settle("a", D, 0.04, 0.003, "trc_1");
  t.true(ledger.tryReserve("a", D, 0.01, 0.04));
  ledger.settle("a", D, 0.04, 0.008, "trc_2");
  t.false(ledger.tryReserve("a", D, 0.01, 0.04), "spend 0.011 ≥ limit: refused");
  t.true(ledger.spent("a", D) > 0.01 && ledger.spent("a", D) < 0.0111);
});

test("budget: an acknowledgement retires local spend against the figure it carries; Sync catching up counts it once", (t) => {
  const { ledger, sync } = newLedger();
  t.true(ledger.tryReserve("a", D, 1, 0.1));
  ledger.settle("a", D, 0.1, 0.05, "trc_1");
  t.is(ledger.spent("a", D), 0.05);
  ledger.acknowledged(["trc_1"], [{ agentId: "a", day: D, spentUsd: 0.05 }]);
  t.is(ledger.spent("a", D), 0.05, "acknowledged: counted by the figure that came with it, not locally");
  t.is(ledger.stats().localEntries, 0);
  sync("a", D, 0.05);
  t.is(ledger.spent("a", D), 0.05, "counted once, by the control plane");
  sync("a", D, 0.05);
  t.is(ledger.spent("a", D), 0.05);
});

test("budget: … and when the Sync figure arrives before the acknowledgement", (t) => {
  const { ledger, sync } = newLedger();
  ledger.tryReserve("a", D, 1, 0.1);
  ledger.settle("a", D, 0.1, 0.05, "trc_1");
  sync("a", D, 0.05);
  t.is(ledger.spent("a", D), 0.1, "briefly counted twice (figure + local): conservative");
  ledger.acknowledged(["trc_1"], [{ agentId: "a", day: D, spentUsd: 0.05 }]);
  t.is(ledger.spent("a", D), 0.05);
});

test("budget: several traces settled at one figure are not all retired by the growth one of them caused", (t) => {
  // Session 25's QA reproduction: four calls of 1 settle while the figure is 0; the control plane
  // stores the first alone (figure 1), then the other three (figure 4). The old ledger retired all
  // three at the second acknowledgement because the Sync figure it held (1) had grown by ≥ each one's
  // cost since they settled, and counted 1 until Sync delivered 4.
  const { ledger, sync } = newLedger();
  for (const id of ["t0", "t1", "t2", "t3"]) ledger.settle("a", D, 2, 1, id);
  t.is(ledger.spent("a", D), 4);
  ledger.acknowledged(["t0"], [{ agentId: "a", day: D, spentUsd: 1 }]);
  t.is(ledger.spent("a", D), 4);
  sync("a", D, 1);
  t.is(ledger.spent("a", D), 4);
  ledger.acknowledged(["t1", "t2", "t3"], [{ agentId: "a", day: D, spentUsd: 4 }]);
  t.is(ledger.spent("a", D), 4, "the acknowledgement's figure counts them before Sync delivers it");
  t.false(ledger.tryReserve("a", D, 4, 0.01), "the budget of 4 is spent");
  sync("a", D, 4);
  t.is(ledger.spent("a", D), 4);
});

test("budget: an older figure (Sync or acknowledgement) never lowers the one held", (t) => {
  const { ledger, sync } = newLedger();
  ledger.settle("a", D, 0, 2, "t1");
  ledger.acknowledged(["t1"], [{ agentId: "a", day: D, spentUsd: 3 }]); // 1 spent elsewhere too
  sync("a", D, 1); // a Sync figure computed before the batch
  t.is(ledger.spent("a", D), 3);
  ledger.acknowledged([], [{ agentId: "a", day: D, spentUsd: 2.5 }]); // another replica's older read
  t.is(ledger.spent("a", D), 3);
  ledger.acknowledged([], [{ agentId: "a", day: D, spentUsd: Number.NaN }, { agentId: "a", day: D, spentUsd: -1 }]);
  t.is(ledger.spent("a", D), 3);
  sync("a", D, 3.5);
  t.is(ledger.spent("a", D), 3.5);
});

test("budget: random interleavings of settlements, batched acknowledgements and late Sync figures never count less than was spent", (t) => {
  // One sidecar and "the others" (spend only the control plane sees). The control plane stores this
  // sidecar's traces in batches, in settle order, acknowledging each with the figure it computed; Sync
  // delivers a figure some steps after it was computed. The ledger must never count less than the
  // spend it knows of (its own settlements plus the figure it was given), and must end exact.
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (let round = 0; round < 300; round++) {
    const { ledger, sync } = newLedger();
    let stored = 0; // the control plane's figure (all stored spend)
    let mine = 0; // this sidecar's settled spend
    let othersSeen = 0; // spend of others included in a figure the sidecar was given
    let othersStored = 0;
    const unshipped: { id: string; cost: number }[] = [];
    const syncQueue: { figure: number; others: number }[] = [];
    let n = 0;
    for (let step = 0; step < 60; step++) {
      const r = rand();
      if (r < 0.35) {
        const cost = Math.round(rand() * 100) / 100 + 0.01;
        const id = `t${n++}`;
        ledger.settle("a", D, 0, cost, id);
        mine += cost;
        unshipped.push({ id, cost });
      } else if (r < 0.45) {
        const cost = Math.round(rand() * 100) / 100;
        stored += cost;
        othersStored += cost;
        syncQueue.push({ figure: stored, others: othersStored });
      } else if (r < 0.7 && unshipped.length > 0) {
        const batch = unshipped.splice(0, 1 + Math.floor(rand() * unshipped.length));
        for (const b of batch) stored += b.cost;
        syncQueue.push({ figure: stored, others: othersStored });
        ledger.acknowledged(batch.map((b) => b.id), [{ agentId: "a", day: D, spentUsd: stored }]);
        othersSeen = Math.max(othersSeen, othersStored);
      } else if (syncQueue.length > 0) {
        const f = syncQueue.splice(0, 1 + Math.floor(rand() * syncQueue.length)).at(-1)!;
        sync("a", D, f.figure);
        othersSeen = Math.max(othersSeen, f.others);
      }
      t.true(ledger.spent("a", D) >= mine + othersSeen - 1e-9, `round ${round} step ${step}: ${ledger.spent("a", D)} < ${mine + othersSeen}`);
    }
    const batch = unshipped.splice(0);
    for (const b of batch) stored += b.cost;
    ledger.acknowledged(batch.map((b) => b.id), [{ agentId: "a", day: D, spentUsd: stored }]);
    sync("a", D, stored);
    t.true(Math.abs(ledger.spent("a", D) - stored) < 1e-9, `round ${round}: ends exact`);
    t.is(ledger.stats().localEntries, 0);
  }
});

test("budget: another sidecar's spend does not retire this sidecar's unacknowledged spend", (t) => {
  const { ledger, sync } = newLedger();
  ledger.tryReserve("a", D, 1, 0.1);
  ledger.settle("a", D, 0.1, 0.05, "trc_mine");
  sync("a", D, 0.2); // someone else spent 0.2
  t.is(ledger.spent("a", D), 0.25);
});

test("budget: restored spool spend counts until acknowledged; past days are forgotten", (t) => {
  const { ledger, sync } = newLedger();
  ledger.restore([
    { traceId: "trc_1", agentId: "a", day: D, cost: 0.3 },
    { traceId: "trc_2", agentId: "a", day: D, cost: 0.2 },
  ]);
  t.is(ledger.spent("a", D), 0.5);
  ledger.acknowledged(["trc_1", "trc_2"], [{ agentId: "a", day: D, spentUsd: 0.5 }]);
  t.is(ledger.spent("a", D), 0.5);
  sync("a", D, 0.5);
  t.is(ledger.spent("a", D), 0.5);
  ledger.settle("a", "2026-11-22", 0, 0.1, "trc_3");
  t.true(ledger.tryReserve("a", "2026-11-22", 1, 0.1));
  t.is(Math.round(ledger.spent("a", "2026-11-22") * 1e9) / 1e9, 0.2);
  t.is(ledger.stats().localEntries, 1);
});

test("budget: reserve() with upper bounds admits exactly what tryReserve() with exact estimates admits, tokenizing only near the limit", (t) => {
  // Random interleavings of reservations and settlements; every request has an exact estimate and an
  // upper bound of 1×…3× it. Two ledgers see the same sequence: decisions must be identical.
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let round = 0; round < 200; round++) {
    const exactLedger = newLedger().ledger;
    const lazyLedger = newLedger().ledger;
    const limit = 0.2 + rnd() * 2;
    const open: { exact: number; res: ReturnType<BudgetLedger["reserve"]> & object }[] = [];
    let exactCalls = 0;
    let requests = 0;
    for (let step = 0; step < 60; step++) {
      if (open.length > 0 && rnd() < 0.35) {
        const [o] = open.splice(Math.floor(rnd() * open.length), 1);
        const actual = o!.exact * rnd();
        exactLedger.settle("a", D, o!.exact, actual);
        lazyLedger.settleReservation("a", D, o!.res, actual);
        continue;
      }
      requests++;
      const exact = 0.01 + rnd() * 0.3;
      const upper = exact * (1 + rnd() * 2);
      const want = exactLedger.tryReserve("a", D, limit, exact);
      const res = lazyLedger.reserve("a", D, limit, upper, () => {
        exactCalls++;
        return exact;
      });
      t.is(res !== null, want, `round ${round} step ${step}`);
      if (res && want) open.push({ exact, res });
      t.true(lazyLedger.spent("a", D) - exactLedger.spent("a", D) >= -1e-9, "a loose reservation never holds less");
    }
    t.true(exactCalls <= requests * 2, "an exact estimate is computed at most once for a decision and once to tighten");
  }
  // Far from the limit nothing is tokenized.
  const { ledger } = newLedger();
  let calls = 0;
  for (let i = 0; i < 20; i++) t.truthy(ledger.reserve("a", D, 100, 0.5, () => ++calls * 0 + 0.1));
  t.is(calls, 0);
  t.is(ledger.inFlight("a", D), 20);
});
