// Daily budgets (agent config `budget_limit_daily`, USD per UTC day) that hold under concurrency and
// across restarts (docs/decisions.md, "Budget accounting in the sidecar").
//
// spend(agent, day) = the control plane's figure for the day (from Sync; computed from the trace store
//                     after each ingest flush)
//                   + this sidecar's settled spend the figure does not include yet (per trace)
//                   + open reservations of requests in flight.
//
// A request reserves its maximum cost (input estimate + max output tokens × output price) before it is
// forwarded and settles to its real cost after. It is admitted when the reservation fits in what is
// left; or, when it does not fit but spend is still below the limit and no other request of the agent
// is in flight, as the one in-flight allowance (so a budget smaller than one request's maximum cost is
// still usable, and the overshoot is bounded by one request's real cost).
//
// Local spend is kept per trace id until the control plane's figure includes it. The control plane
// acknowledges a batch of traces only after it recomputed the day's figure with them, and the
// acknowledgement carries that figure (UploadResponse.spend): the ledger takes the higher of it and the
// figure Sync delivered (a day's figure only grows), and retires the acknowledged traces at once, so a
// trace is never counted by neither. (Guessing from the Sync figure's growth alone cannot tell which of
// several traces settled at the same figure a growth includes: session 25 measured +20 % overshoot.)
// At start, traces still in the spool (not acknowledged) are restored as local spend.

export interface BudgetView {
  controlPlaneSpend(agentId: string, day: string): number;
}

/** A day's figure the control plane computed with an acknowledged batch (UploadResponse.spend). */
export interface AckedSpend {
  agentId: string;
  day: string;
  spentUsd: number;
}

/** Requests admitted beyond what the budget has room for, per agent and sidecar (see tryReserve). */
export const IN_FLIGHT_ALLOWANCE = 1;

/** One admitted request's hold on the budget (see BudgetLedger.reserve). */
export interface Reservation {
  amount: number;
  /** The exact estimate, while `amount` is still the upper bound. */
  exact: (() => number) | null;
}

const finiteOr0 = (x: number): number => (Number.isFinite(x) ? x : 0);

/** Floating-point slack when comparing USD sums. */
const EPS = 1e-12;

interface LocalEntry {
  key: string;
  day: string;
  cost: number;
}

export interface RestoredSpend {
  traceId: string;
  agentId: string;
  day: string;
  cost: number;
}

export interface BudgetStats {
  /** Traces whose cost is counted locally (not yet in the control plane's figure). */
  localEntries: number;
  inFlight: number;
}

export class BudgetLedger {
  /** agent|day → settled local spend not yet in the control plane's figure. */
  private readonly local = new Map<string, number>();
  /** agent|day → open reservations (amount includes loose ones at their upper bound). */
  private readonly reserved = new Map<string, { amount: number; count: number; loose?: Set<Reservation> }>();
  private readonly entries = new Map<string, LocalEntry>();
  /** agent|day → the highest figure an acknowledgement carried. */
  private readonly ackedFigure = new Map<string, number>();
  /** agent|day → last control-plane figure seen over Sync. */
  private readonly lastFigure = new Map<string, number>();
  /** Settled spend without a trace id (callers that do not say): absorbed by figure increases. */
  private readonly anonymous = new Map<string, number>();
  private today = "";

  constructor(private readonly view: BudgetView) {}

  private key(agentId: string, day: string): string {
    return `${agentId}|${day}`;
  }

  private add(map: Map<string, number>, k: string, v: number): void {
    const next = (map.get(k) ?? 0) + v;
    if (next <= EPS) map.delete(k);
    else map.set(k, next);
  }

  /** The control plane's figure for the agent's day: what Sync delivered or an acknowledgement carried, the higher. */
  private figure(agentId: string, day: string, k: string): number {
    const acked = this.ackedFigure.get(k);
    const synced = this.view.controlPlaneSpend(agentId, day);
    return acked !== undefined && acked > synced ? acked : synced;
  }

  /** Spend counted for the agent's day: control plane + local + reserved. */
  spent(agentId: string, day: string): number {
    const k = this.key(agentId, day);
    return this.figure(agentId, day, k) + (this.local.get(k) ?? 0) + (this.anonymous.get(k) ?? 0) + (this.reserved.get(k)?.amount ?? 0);
  }

  /** Requests of the agent in flight (reserved, not settled) for the day. */
  inFlight(agentId: string, day: string): number {
    return this.reserved.get(this.key(agentId, day))?.count ?? 0;
  }

  /**
   * Reserves `estimate` for one request: admitted when spend + estimate fits in `limit`, or (the in-flight
   * allowance) when spend is below `limit` and nothing else of the agent is in flight. False = refuse.
   */
  tryReserve(agentId: string, day: string, limit: number, estimate: number): boolean {
    this.rollDay(day);
    const est = Math.max(0, Number.isFinite(estimate) ? estimate : 0);
    const spent = this.spent(agentId, day);
    if (spent >= limit - EPS) return false;
    const k = this.key(agentId, day);
    const r = this.reserved.get(k) ?? { amount: 0, count: 0 };
    if (spent + est > limit + EPS && r.count >= IN_FLIGHT_ALLOWANCE) return false;
    r.amount += est;
    r.count++;
    this.reserved.set(k, r);
    return true;
  }

  /**
   * Like tryReserve, without computing the exact estimate unless the decision needs it: a request whose
   * `upper` bound (≥ its exact estimate) fits is admitted holding `upper` ("loose"); otherwise every
   * loose reservation of the agent is first replaced by its exact estimate, then this one is decided on
   * its own exact estimate. So admissions are exactly tryReserve's with exact estimates (a loose
   * reservation only ever holds more), while the exact figure (a tokenizer pass over the prompt) is
   * computed only near the limit. Returns the reservation to settle with settleReservation, or null.
   */
  reserve(agentId: string, day: string, limit: number, upper: number, exact: () => number): Reservation | null {
    this.rollDay(day);
    const up = Math.max(0, Number.isFinite(upper) ? upper : 0);
    const k = this.key(agentId, day);
    if (this.spent(agentId, day) + up <= limit + EPS) {
      const r = this.reserved.get(k) ?? { amount: 0, count: 0 };
      const res: Reservation = { amount: up, exact };
      r.amount += up;
      r.count++;
      (r.loose ??= new Set()).add(res);
      this.reserved.set(k, r);
      return res;
    }
    this.tighten(k);
    const est = Math.max(0, finiteOr0(exact()));
    if (!this.tryReserve(agentId, day, limit, est)) return null;
    return { amount: est, exact: null };
  }

  /** Replaces the agent's loose reservations by their exact estimates. */
  private tighten(k: string): void {
    const r = this.reserved.get(k);
    if (!r?.loose) return;
    for (const res of r.loose) {
      const est = Math.max(0, finiteOr0(res.exact?.() ?? res.amount));
      r.amount = Math.max(0, r.amount - res.amount + est);
      res.amount = est;
      res.exact = null;
    }
    r.loose.clear();
  }

  /** settle() for a reservation made by reserve(). */
  settleReservation(agentId: string, day: string, res: Reservation, actual: number, traceId?: string): void {
    this.reserved.get(this.key(agentId, day))?.loose?.delete(res);
    this.settle(agentId, day, res.amount, actual, traceId);
  }

  /** The request ended: its reservation is released and its real cost counted until the control plane has it. */
  settle(agentId: string, day: string, estimate: number, actual: number, traceId?: string): void {
    const k = this.key(agentId, day);
    const r = this.reserved.get(k);
    if (r) {
      r.amount = Math.max(0, r.amount - Math.max(0, estimate));
      r.count = Math.max(0, r.count - 1);
      if (r.count === 0) this.reserved.delete(k);
    }
    const cost = Math.max(0, Number.isFinite(actual) ? actual : 0);
    if (cost <= 0) return;
    if (traceId === undefined) {
      this.add(this.anonymous, k, cost);
      return;
    }
    this.addEntry(traceId, agentId, day, cost);
  }

  private addEntry(traceId: string, agentId: string, day: string, cost: number): void {
    if (this.entries.has(traceId)) return;
    const k = this.key(agentId, day);
    this.entries.set(traceId, { key: k, day, cost });
    this.add(this.local, k, cost);
  }

  /** Traces still in the spool at start (not acknowledged): their cost is not in the control plane's figure. */
  restore(list: readonly RestoredSpend[]): void {
    for (const s of list) if (s.cost > 0) this.addEntry(s.traceId, s.agentId, s.day, s.cost);
  }

  /**
   * The control plane acknowledged (or rejected for good) these traces; `spend` = the figures it computed
   * with them (each agent and day the batch charged, as the control plane's UTC day saw it). They are
   * retired now: an acknowledged trace is in the figure that came with it (a trace of a day the control
   * plane no longer computes, and a rejected one, will never be in any figure).
   */
  acknowledged(traceIds: readonly string[], spend: readonly AckedSpend[] = []): void {
    for (const s of spend) {
      if (!Number.isFinite(s.spentUsd) || s.spentUsd < 0 || s.day < this.today) continue;
      const k = this.key(s.agentId, s.day);
      if (s.spentUsd > (this.ackedFigure.get(k) ?? 0)) this.ackedFigure.set(k, s.spentUsd);
    }
    for (const id of traceIds) {
      const e = this.entries.get(id);
      if (e) this.retire(id, e);
    }
  }

  /** A control-plane figure arrived over Sync (`previous` is ignored: the ledger remembers what it saw). */
  onControlPlaneSpend(agentId: string, day: string, _previous: number, next: number): void {
    const k = this.key(agentId, day);
    const before = this.lastFigure.get(k) ?? 0;
    this.lastFigure.set(k, next);
    if (next <= before + EPS) return;
    // Spend settled without a trace id cannot be matched to an acknowledgement: an increase absorbs it.
    this.add(this.anonymous, k, -(next - before));
    if ((this.anonymous.get(k) ?? 0) < 0) this.anonymous.delete(k);
  }

  private retire(id: string, e: LocalEntry): void {
    this.entries.delete(id);
    this.add(this.local, e.key, -e.cost);
  }

  /** Forgets local spend of past days (they no longer count against any budget). */
  private rollDay(day: string): void {
    if (day === this.today) return;
    this.today = day;
    for (const [id, e] of this.entries) if (e.day < day) this.retire(id, e);
    for (const map of [this.local, this.anonymous, this.lastFigure, this.ackedFigure]) for (const k of map.keys()) if (k.slice(k.lastIndexOf("|") + 1) < day) map.delete(k);
  }

  stats(): BudgetStats {
    let inFlight = 0;
    for (const r of this.reserved.values()) inFlight += r.count;
    return { localEntries: this.entries.size, inFlight };
  }
}
