// Daily budgets that hold under concurrency: a request reserves an estimate of its cost before it is
// forwarded and settles to the real cost after; spend = control plane's figure for today (from Sync)
// + what this sidecar spent since that figure + open reservations.
export interface BudgetView {
  controlPlaneSpend(agentId: string, day: string): number;
}

export class BudgetLedger {
  private readonly local = new Map<string, number>(); // agent|day → settled spend not yet reflected upstream
  private readonly reserved = new Map<string, number>();

  constructor(private readonly view: BudgetView) {}

  private key(agentId: string, day: string): string {
    return `${agentId}|${day}`;
  }

  spent(agentId: string, day: string): number {
    const k = this.key(agentId, day);
    return this.view.controlPlaneSpend(agentId, day) + (this.local.get(k) ?? 0) + (this.reserved.get(k) ?? 0);
  }

  /** Reserves `estimate` when the spend so far plus the estimate stays within the limit. */
  tryReserve(agentId: string, day: string, limit: number, estimate: number): boolean {
    const spent = this.spent(agentId, day);
    if (spent >= limit || spent + Math.max(estimate, 0) > limit) return false;
    const k = this.key(agentId, day);
    this.reserved.set(k, (this.reserved.get(k) ?? 0) + Math.max(estimate, 0));
    return true;
  }

  settle(agentId: string, day: string, estimate: number, actual: number): void {
    const k = this.key(agentId, day);
    this.reserved.set(k, Math.max(0, (this.reserved.get(k) ?? 0) - estimate));
    this.local.set(k, (this.local.get(k) ?? 0) + actual);
  }

  /** The control plane now counts spend up to its new figure: forget local spend it has absorbed. */
  onControlPlaneSpend(agentId: string, day: string, previous: number, next: number): void {
    const k = this.key(agentId, day);
    const absorbed = Math.max(0, next - previous);
    this.local.set(k, Math.max(0, (this.local.get(k) ?? 0) - absorbed));
  }
}
