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
// Local spend is kept per trace id until the control plane's figure includes it: the trace store
// acknowledges a trace only after the figure was recomputed with it, so an acknowledged trace is
// retired at once when the figure the sidecar holds already grew by its cost since it was settled,
// else at the next increase of the figure (Sync delivers that change right after the acknowledgement).
// At start, traces still in the spool (not acknowledged) are restored as local spend.

export interface BudgetView {
  controlPlaneSpend(agentId: string, day: string): number;
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
  /** The control plane's figure when this spend was settled (it did not include it then). */
  cpAtSettle: number;
  /** The figure when the trace store acknowledged the trace (-1 = not acknowledged yet). */
  cpAtAck: number;
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
  /** agent|day → acknowledged trace ids waiting for the figure to grow. */
  private readonly waiting = new Map<string, Set<string>>();
  /** agent|day → last control-plane figure seen. */
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

  /** Spend counted for the agent's day: control plane + local + reserved. */
  spent(agentId: string, day: string): number {
    const k = this.key(agentId, day);
    return this.view.controlPlaneSpend(agentId, day) + (this.local.get(k) ?? 0) + (this.anonymous.get(k) ?? 0) + (this.reserved.get(k)?.amount ?? 0);
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
    this.entries.set(traceId, { key: k, day, cost, cpAtSettle: this.view.controlPlaneSpend(agentId, day), cpAtAck: -1 });
    this.add(this.local, k, cost);
  }

  /** Traces still in the spool at start (not acknowledged): their cost is not in the control plane's figure. */
  restore(list: readonly RestoredSpend[]): void {
    for (const s of list) if (s.cost > 0) this.addEntry(s.traceId, s.agentId, s.day, s.cost);
  }

  /** The trace store acknowledged (or rejected for good) these traces. */
  acknowledged(traceIds: readonly string[]): void {
    for (const id of traceIds) {
      const e = this.entries.get(id);
      if (!e || e.cpAtAck >= 0) continue;
      const [agentId] = e.key.split("|") as [string];
      const figure = this.view.controlPlaneSpend(agentId, e.day);
      if (figure + EPS >= e.cpAtSettle + e.cost) {
        this.retire(id, e); // the figure already grew by at least this cost: it includes it
        continue;
      }
      e.cpAtAck = figure;
      let set = this.waiting.get(e.key);
      if (!set) this.waiting.set(e.key, (set = new Set()));
      set.add(id);
    }
  }

  /** A control-plane figure arrived over Sync (`previous` is ignored: the ledger remembers what it saw). */
  onControlPlaneSpend(agentId: string, day: string, _previous: number, next: number): void {
    const k = this.key(agentId, day);
    const before = this.lastFigure.get(k) ?? 0;
    this.lastFigure.set(k, next);
    if (next <= before + EPS) return;
    this.add(this.anonymous, k, -(next - before));
    if ((this.anonymous.get(k) ?? 0) < 0) this.anonymous.delete(k);
    const set = this.waiting.get(k);
    if (!set) return;
    for (const id of [...set]) {
      const e = this.entries.get(id);
      if (!e || next > e.cpAtAck + EPS) {
        set.delete(id);
        if (e) this.retire(id, e);
      }
    }
    if (set.size === 0) this.waiting.delete(k);
  }

  private retire(id: string, e: LocalEntry): void {
    this.entries.delete(id);
    this.add(this.local, e.key, -e.cost);
    this.waiting.get(e.key)?.delete(id);
  }

  /** Forgets local spend of past days (they no longer count against any budget). */
  private rollDay(day: string): void {
    if (day === this.today) return;
    this.today = day;
    for (const [id, e] of this.entries) if (e.day < day) this.retire(id, e);
    for (const map of [this.local, this.anonymous, this.lastFigure]) for (const k of map.keys()) if (k.slice(k.lastIndexOf("|") + 1) < day) map.delete(k);
    for (const k of this.waiting.keys()) if (k.slice(k.lastIndexOf("|") + 1) < day) this.waiting.delete(k);
  }

  stats(): BudgetStats {
    let inFlight = 0;
    for (const r of this.reserved.values()) inFlight += r.count;
    return { localEntries: this.entries.size, inFlight };
  }
}
