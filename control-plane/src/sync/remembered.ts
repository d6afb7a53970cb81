// The sidecars a replica remembers streaming Sync that are not connected now: right after a control-plane
// restart (read from the sync_sidecars table: none has reconnected yet), or whose stream just dropped
// (here, or on another replica that said so). A REST write waits for them too, within its time limit
// (SyncHub.delivered): they reconnect within ~0.5 s (the sidecar's syncReconnectMs), and until they have
// applied the write's change they still serve the old state (a revoked key admitted). Pure bookkeeping:
// the table and the NOTIFYs are sidecar-registry.ts and hub.ts.
//
// A remembered sidecar counts as applied for version V once it is back and acknowledged V or later (on a
// stream of any replica: a new stream's Acks are passed on for a few seconds, hub.ts), or if it had
// applied V before it went away. It is forgotten when it says goodbye, when its key is revoked, when it
// was last seen more than `rememberMs` ago, and `backKeepMs` after it came back (it is then an ordinary
// stream: this replica's stream rules, or another replica's stream, not waited for, as any). One that
// kept a write waiting until its time limit is overdue (`overdue`): the writes after it do not wait for
// it until it is back, so a sidecar killed for good (kill -9, OOM, a lost node) costs its tenant's
// writes one time limit, not one each for `rememberMs`.

/** A sidecar as a Sync stream names it: tenant and key it authenticated with, and the id it chose. */
export interface SidecarRef {
  tenantId: string;
  keyId: string;
  sidecarId: string;
}

/** A remembered sidecar as the table has it (sidecar-registry.ts `loadAbsent`). */
export interface AbsentRow extends SidecarRef {
  /** How long ago it was last seen (on the database's clock, so replicas need not agree on time). */
  ageMs: number;
  /**
   * False: it has just reconnected to another replica (whose announced Acks tell when it has caught up):
   * kept if remembered, not remembered otherwise.
   */
  away: boolean;
}

interface Absent {
  readonly ref: SidecarRef;
  lastSeenMs: number;
  /** The version it had applied when its stream was lost (0: unknown, e.g. remembered from the table). */
  appliedBefore: number;
  /** Highest version it acknowledged since it went away; undefined until it is back. */
  acked: number | undefined;
  /** `seq` when its first Ack since it went away arrived. */
  backSeq: number | undefined;
  backAtMs: number | undefined;
  /** `seq` and time when it was remembered (a reload of the table keeps what came after its query, or just before). */
  readonly bornSeq: number;
  readonly bornAtMs: number;
  /** A write timed out waiting for it while it was away: no later write waits for it until it is back. */
  overdue: boolean;
}

export interface RememberedOptions {
  now: () => number;
  /** How long a sidecar that went away without a goodbye is waited for, from when it was last seen. */
  rememberMs: number;
  /** How long after it is back its Acks still count for writes that began before (the writes' time limit). */
  backKeepMs: number;
  /**
   * A sidecar remembered less than this long ago is kept by a reload whose answer does not list it: the
   * table write saying its stream ended may have been still on its way when the query read.
   */
  reloadGraceMs: number;
}

const refKey = (r: SidecarRef) => JSON.stringify([r.keyId, r.sidecarId]);

export class RememberedSidecars {
  /** Per tenant, per [keyId, sidecarId]. */
  private readonly byTenant = new Map<string, Map<string, Absent>>();
  /** Orders events: a write holds a sidecar that came back only if it came back after the write began. */
  private seq = 0;

  constructor(private readonly opts: RememberedOptions) {}

  /** The current point in the order of events (a write takes it when it begins to wait). */
  mark(): number {
    return ++this.seq;
  }

  /** A sidecar's stream ended without a goodbye; `appliedBefore`: the version it had applied (0: unknown). */
  lost(ref: SidecarRef, appliedBefore: number, lastSeenMs = this.opts.now()): void {
    const tenant = this.byTenant.get(ref.tenantId) ?? new Map<string, Absent>();
    this.byTenant.set(ref.tenantId, tenant);
    tenant.set(refKey(ref), { ref, lastSeenMs, appliedBefore, acked: undefined, backSeq: undefined, backAtMs: undefined, bornSeq: this.mark(), bornAtMs: this.opts.now(), overdue: false });
  }

  /** An Ack of the sidecar (on any replica's stream): it is back, with that state. True when it was remembered. */
  acked(ref: SidecarRef, version: number): boolean {
    const tenant = this.byTenant.get(ref.tenantId);
    if (!tenant) return false;
    this.expire(ref.tenantId, tenant);
    const e = tenant.get(refKey(ref));
    if (!e) return false;
    e.acked = Math.max(e.acked ?? version, version);
    e.overdue = false;
    if (e.backSeq === undefined) {
      e.backSeq = this.mark();
      e.backAtMs = this.opts.now();
    }
    return true;
  }

  /** Forgets a sidecar (goodbye, revoked key, a stream without Acks). True when it was remembered. */
  forget(ref: SidecarRef): boolean {
    const tenant = this.byTenant.get(ref.tenantId);
    const e = tenant?.get(refKey(ref));
    if (!tenant || !e) return false;
    tenant.delete(refKey(ref));
    if (tenant.size === 0) this.byTenant.delete(ref.tenantId);
    return true;
  }

  /** Forgets a sidecar unless it is back (its Acks may still count for writes waiting). */
  forgetAway(ref: SidecarRef): void {
    const e = this.byTenant.get(ref.tenantId)?.get(refKey(ref));
    if (e && e.backSeq === undefined) this.forget(ref);
  }

  /**
   * Whether a remembered sidecar of the tenant still holds a write of `version` that began at `since`
   * (mark()): it was not forgotten, has not applied the version, and had not come back before the write
   * began (one back by then is an ordinary stream).
   */
  holds(tenantId: string, version: number, since: number): boolean {
    return this.holding(tenantId, version, since).length > 0;
  }

  /**
   * A write of `version` that began at `since` reached its time limit: the sidecars that still held it
   * and are away are overdue, and hold no write from now on until they are back (an Ack clears it).
   */
  timedOut(tenantId: string, version: number, since: number): void {
    for (const e of this.holding(tenantId, version, since)) if (e.backSeq === undefined) e.overdue = true;
  }

  private holding(tenantId: string, version: number, since: number): Absent[] {
    const tenant = this.byTenant.get(tenantId);
    if (!tenant) return [];
    this.expire(tenantId, tenant);
    const out: Absent[] = [];
    for (const e of tenant.values()) {
      if (e.overdue || applied(e, version)) continue;
      if (e.backSeq !== undefined && e.backSeq <= since) continue;
      out.push(e);
    }
    return out;
  }

  /**
   * Replaces what an earlier read of the table said with `rows`, read by a query that began at `since`
   * (mark()): a sidecar remembered before it and absent from its answer is forgotten (on another replica
   * for a while, its key revoked, forgotten elsewhere), unless it is back (its Acks may still count for
   * writes waiting); what happened after the query began (or within reloadGraceMs) is kept. `heldHere`:
   * it has an open stream on this replica (the table may not say so yet).
   */
  reload(rows: readonly AbsentRow[], since: number, heldHere: (ref: SidecarRef) => boolean): void {
    const now = this.opts.now();
    const listed = new Set<string>();
    for (const row of rows) {
      const ref = { tenantId: row.tenantId, keyId: row.keyId, sidecarId: row.sidecarId };
      listed.add(JSON.stringify([row.tenantId, refKey(ref)]));
      const known = this.byTenant.get(row.tenantId)?.get(refKey(ref));
      if (known && known.backSeq === undefined) {
        known.lastSeenMs = Math.max(known.lastSeenMs, now - row.ageMs);
        continue;
      }
      if (!row.away || row.ageMs >= this.opts.rememberMs || heldHere(ref)) continue;
      // Away again since it came back (the replica it came back to died): a new absence.
      this.lost(ref, known?.acked ?? 0, now - row.ageMs);
    }
    for (const [tenantId, tenant] of this.byTenant) {
      for (const [k, e] of tenant) {
        const settled = e.bornSeq <= since && now - e.bornAtMs >= this.opts.reloadGraceMs;
        if (settled && e.backSeq === undefined && !listed.has(JSON.stringify([tenantId, k]))) this.forget(e.ref);
      }
      this.expire(tenantId, tenant);
    }
  }

  /** The remembered sidecars of a tenant not back yet (tests, diagnostics). */
  absent(tenantId: string): SidecarRef[] {
    const tenant = this.byTenant.get(tenantId);
    if (!tenant) return [];
    this.expire(tenantId, tenant);
    return [...tenant.values()].filter((e) => e.backSeq === undefined).map((e) => e.ref);
  }

  /** Drops the sidecars last seen too long ago, and those back for longer than backKeepMs. */
  private expire(tenantId: string, tenant: Map<string, Absent>): void {
    const now = this.opts.now();
    for (const e of [...tenant.values()]) {
      const stale = e.backAtMs === undefined ? now - e.lastSeenMs >= this.opts.rememberMs : now - e.backAtMs >= this.opts.backKeepMs;
      if (stale) this.forget(e.ref);
    }
    if (tenant.size === 0 && this.byTenant.get(tenantId) === tenant) this.byTenant.delete(tenantId);
  }
}

/**
 * Whether the sidecar serves `version`: once back, its Acks say (a snapshot on reconnecting may carry an
 * older version than it had); before, the state it had when it went away.
 */
function applied(e: Readonly<Absent>, version: number): boolean {
  return (e.acked ?? e.appliedBefore) >= version;
}
