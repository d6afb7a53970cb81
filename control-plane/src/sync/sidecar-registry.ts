// The sync_sidecars table (migration 004): which sidecars were streaming Sync, shared by the replicas and
// kept across restarts, so that a replica knows which sidecars to wait for before they have reconnected
// (remembered.ts). Written only when an acking Watch stream opens (held by this replica), ends (held by
// none, seen then) or is forgotten (goodbye, revoked key: deleted), never per message: the writes are
// queued, coalesced per sidecar, and sent in one batch at a time on a connection of the registry's own.
// Each replica also writes its own sign of life to sync_replicas every REPLICA_TOUCH_MS, rather than
// every stream's: a sidecar held by a replica that died was last seen when that replica was.
//
// A replica is alive while Postgres lists its Sync listener (application_name REPLICA_NAME_PREFIX + id):
// a process that dies loses its connection, so the streams it held count as dropped at once (a replica
// restarted a second later must wait for them, not trust the claims of its dead predecessor).
import { randomUUID } from "node:crypto";
import { openDb, type Db } from "../stores/postgres/db.js";
import type { AbsentRow, SidecarRef } from "./remembered.js";

/** Streams ended and sidecars forgotten, announced to the other replicas. Payload: SidecarEvents JSON. */
export const SYNC_SIDECAR_CHANNEL = "agentgov_sync_sidecars";
/** application_name of each replica's Sync listener, followed by the replica's id. */
export const REPLICA_NAME_PREFIX = "agentgov-sync ";
/** How often a replica writes its sign of life (sync_replicas.seen_at). */
export const REPLICA_TOUCH_MS = 10_000;
/** Longest sidecar id remembered or passed on (NOTIFY payloads are limited to 8000 bytes; ours are "sc_" + a UUID). */
export const SIDECAR_ID_MAX = 200;
/** Rows not seen for this long are deleted by the hourly prune (they were forgotten long before). */
const PRUNE_AFTER = "1 hour";
const RETRY_MS = 1000;
/** A NOTIFY payload stays below Postgres's 8000 bytes. */
const PAYLOAD_MAX = 7000;

/** One event of SidecarEvents: a stream ended without a goodbye (with the version it had applied), or a sidecar forgotten. */
export type SidecarEvent = ["lost", string, string, string, number] | ["gone", string, string, string];
/** NOTIFY payload on SYNC_SIDECAR_CHANNEL: the announcing replica and its events. */
export interface SidecarEvents {
  r: string;
  e: SidecarEvent[];
}

type Op = { kind: "open" } | { kind: "drop"; applied: number } | { kind: "gone" };
interface Queued {
  ref: SidecarRef;
  op: Op;
}

const refKey = (r: SidecarRef) => JSON.stringify([r.tenantId, r.keyId, r.sidecarId]);

/** Whether a sidecar id may be remembered (a Watch names any id it likes). */
export function rememberable(sidecarId: string): boolean {
  return sidecarId !== "" && sidecarId.length <= SIDECAR_ID_MAX;
}

export class SidecarRegistry {
  /** This replica, as its Sync listener names itself to Postgres. */
  readonly replica = `${REPLICA_NAME_PREFIX}${randomUUID()}`;
  private db: Db | undefined;
  private readonly queued = new Map<string, Queued>();
  private flushing: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private touchTimer: NodeJS.Timeout | undefined;
  /** close() began: nothing is retried later. */
  private closing = false;
  /** Nothing is written any more. */
  private closed = false;

  /**
   * `rememberMs`: what loadAbsent returns (sidecars seen within it). `onReconnectedElsewhere`: a stream
   * reported dropped whose sidecar another replica already holds (a dead stream noticed late, after the
   * sidecar reconnected there): not announced, and not to wait for. Inert (nothing written) until start().
   */
  constructor(
    private readonly connectionString: string,
    private readonly rememberMs: number,
    private readonly onError: (e: unknown) => void,
    private readonly onReconnectedElsewhere: (ref: SidecarRef) => void = () => undefined,
  ) {}

  /** Opens its connection and writes this replica's sign of life; a failure is reported, not thrown (retried on the next touch). */
  async start(): Promise<void> {
    // One connection: the registry's statements and NOTIFYs reach Postgres, and the other replicas, in order.
    this.db = openDb(this.connectionString, 1);
    await this.touch().catch(this.onError);
    this.touchTimer = setInterval(() => this.touch().catch(this.onError), REPLICA_TOUCH_MS);
    this.touchTimer.unref();
    this.schedule();
  }

  /** An acking stream of the sidecar opened on this replica. */
  opened(ref: SidecarRef): void {
    this.queue(ref, { kind: "open" });
  }

  /** The sidecar's stream here ended without a goodbye, having applied `applied`: remembered as last seen now. */
  dropped(ref: SidecarRef, applied: number): void {
    this.queue(ref, { kind: "drop", applied });
  }

  /** The sidecar said goodbye, or its key was revoked: forgotten, by every replica. */
  gone(ref: SidecarRef): void {
    this.queue(ref, { kind: "gone" });
  }

  /**
   * Passes a sidecar's Ack on to the other replicas (SYNC_ACK_CHANNEL, payload [tenantId, keyId, sidecarId,
   * version]): one that remembers the sidecar as away may have a write waiting for it.
   */
  async announceAck(channel: string, ref: SidecarRef, version: number): Promise<void> {
    if (!this.db || this.closed || !rememberable(ref.sidecarId)) return;
    await this.db.query("SELECT pg_notify($1, $2)", [channel, JSON.stringify([ref.tenantId, ref.keyId, ref.sidecarId, version])]);
  }

  /**
   * The sidecars to wait for that no live replica holds (`away`): streams that ended, and the streams of
   * replicas gone (no Sync listener left in Postgres), seen within rememberMs; and those another live
   * replica opened a stream for within `reconnectedMs` (not `away`: their Acks are being announced);
   * all with a key still valid.
   */
  async loadAbsent(reconnectedMs: number): Promise<AbsentRow[]> {
    if (!this.db) return [];
    const r = await this.db.query<{ tenant_id: string; key_id: string; sidecar_id: string; age_ms: number; away: boolean }>(
      `WITH live AS (
         SELECT application_name AS replica FROM pg_stat_activity WHERE datname = current_database() AND starts_with(application_name, $2)
       ), gone AS (
         SELECT replica, seen_at FROM sync_replicas WHERE replica NOT IN (SELECT replica FROM live)
       ), absent AS (
         SELECT tenant_id, key_id, sidecar_id, last_seen_at AS seen, true AS away FROM sync_sidecars
          WHERE replica IS NULL AND last_seen_at > now() - make_interval(secs => $1)
         UNION ALL
         SELECT s.tenant_id, s.key_id, s.sidecar_id, greatest(s.last_seen_at, g.seen_at), true FROM sync_sidecars s JOIN gone g ON g.replica = s.replica
          WHERE greatest(s.last_seen_at, g.seen_at) > now() - make_interval(secs => $1)
         UNION ALL
         SELECT tenant_id, key_id, sidecar_id, last_seen_at, false FROM sync_sidecars
          WHERE last_seen_at > now() - make_interval(secs => $4) AND replica <> $3 AND replica IN (SELECT replica FROM live)
       )
       SELECT a.tenant_id, a.key_id, a.sidecar_id, (extract(epoch FROM now() - a.seen) * 1000)::float8 AS age_ms, a.away
         FROM absent a JOIN api_keys k ON k.id = a.key_id AND k.tenant_id = a.tenant_id AND k.deleted_at IS NULL
         JOIN users u ON u.id = k.created_by AND u.status = 'active'`,
      [this.rememberMs / 1000, REPLICA_NAME_PREFIX, this.replica, reconnectedMs / 1000],
    );
    return r.rows.map((row) => ({ tenantId: row.tenant_id, keyId: row.key_id, sidecarId: row.sidecar_id, ageMs: Math.max(0, row.age_ms), away: row.away }));
  }

  /** Deletes what no replica needs any more (hourly, with the change log's retention). */
  async prune(): Promise<void> {
    if (!this.db) return;
    await this.db.query(
      `DELETE FROM sync_sidecars s WHERE s.last_seen_at < now() - $1::interval
         AND NOT EXISTS (SELECT 1 FROM sync_replicas r WHERE r.replica = s.replica AND r.seen_at > now() - $1::interval)`,
      [PRUNE_AFTER],
    );
    await this.db.query("DELETE FROM sync_replicas WHERE seen_at < now() - $1::interval", [PRUNE_AFTER]);
  }

  /** Writes what is queued (one attempt for a batch that fails now), then stops. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.touchTimer) clearInterval(this.touchTimer);
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
    await this.flushing;
    this.schedule();
    await this.flushing;
    await this.touch().catch(this.onError);
    this.closed = true;
    await this.db?.close();
  }

  private async touch(): Promise<void> {
    if (!this.db || this.closed) return;
    await this.db.query("INSERT INTO sync_replicas (replica, seen_at) VALUES ($1, now()) ON CONFLICT (replica) DO UPDATE SET seen_at = now()", [this.replica]);
  }

  private queue(ref: SidecarRef, op: Op): void {
    if (!this.db || this.closed || !rememberable(ref.sidecarId)) return;
    // The latest wins: a stream opened and dropped before the batch left is written as dropped.
    const k = refKey(ref);
    this.queued.delete(k);
    this.queued.set(k, { ref, op });
    this.schedule();
  }

  private schedule(): void {
    if (this.flushing || this.retry || this.queued.size === 0 || !this.db || this.closed) return;
    this.flushing = this.flush().finally(() => (this.flushing = undefined));
  }

  /** Sends the queue in batches, one at a time; a failed batch is queued again (under anything newer) and retried. */
  private async flush(): Promise<void> {
    while (this.queued.size > 0 && this.db) {
      const batch = [...this.queued.values()];
      this.queued.clear();
      try {
        await this.write(this.db, batch);
      } catch (e) {
        for (const q of batch) if (!this.queued.has(refKey(q.ref))) this.queued.set(refKey(q.ref), q);
        this.onError(e);
        if (!this.closing) {
          this.retry = setTimeout(() => {
            this.retry = undefined;
            this.schedule();
          }, RETRY_MS);
          this.retry.unref();
        }
        return;
      }
    }
  }

  private async write(db: Db, batch: readonly Queued[]): Promise<void> {
    const columns = (items: readonly Queued[]) => [items.map((q) => q.ref.tenantId), items.map((q) => q.ref.keyId), items.map((q) => q.ref.sidecarId)];
    const opens = batch.filter((q) => q.op.kind === "open");
    const drops = batch.filter((q) => q.op.kind === "drop");
    const gones = batch.filter((q) => q.op.kind === "gone");
    if (opens.length > 0) {
      await db.query(
        `INSERT INTO sync_sidecars (tenant_id, key_id, sidecar_id, replica, last_seen_at)
         SELECT t, k, s, $4, now() FROM unnest($1::text[], $2::text[], $3::text[]) AS u(t, k, s)
         ON CONFLICT (tenant_id, key_id, sidecar_id) DO UPDATE SET replica = EXCLUDED.replica, last_seen_at = now()`,
        [...columns(opens), this.replica],
      );
    }
    let lost: Queued[] = [];
    if (drops.length > 0) {
      // Not over another replica's claim: the sidecar may have reconnected there already.
      const r = await db.query<{ tenant_id: string; key_id: string; sidecar_id: string }>(
        `INSERT INTO sync_sidecars (tenant_id, key_id, sidecar_id, replica, last_seen_at)
         SELECT t, k, s, NULL, now() FROM unnest($1::text[], $2::text[], $3::text[]) AS u(t, k, s)
         ON CONFLICT (tenant_id, key_id, sidecar_id) DO UPDATE SET replica = NULL, last_seen_at = now()
          WHERE sync_sidecars.replica IS NULL OR sync_sidecars.replica = $4
         RETURNING tenant_id, key_id, sidecar_id`,
        [...columns(drops), this.replica],
      );
      const written = new Set(r.rows.map((row) => refKey({ tenantId: row.tenant_id, keyId: row.key_id, sidecarId: row.sidecar_id })));
      lost = drops.filter((q) => written.has(refKey(q.ref)));
      for (const q of drops) if (!written.has(refKey(q.ref))) this.onReconnectedElsewhere(q.ref);
    }
    if (gones.length > 0) {
      await db.query(
        `DELETE FROM sync_sidecars s USING unnest($1::text[], $2::text[], $3::text[]) AS u(t, k, sc)
          WHERE s.tenant_id = u.t AND s.key_id = u.k AND s.sidecar_id = u.sc`,
        columns(gones),
      );
    }
    const events: SidecarEvent[] = [
      ...lost.map((q): SidecarEvent => ["lost", q.ref.tenantId, q.ref.keyId, q.ref.sidecarId, q.op.kind === "drop" ? q.op.applied : 0]),
      ...gones.map((q): SidecarEvent => ["gone", q.ref.tenantId, q.ref.keyId, q.ref.sidecarId]),
    ];
    const payloads = chunkPayloads(this.replica, events);
    if (payloads.length > 0) await db.query("SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p", [SYNC_SIDECAR_CHANNEL, payloads]);
  }
}

/** SidecarEvents payloads, each below PAYLOAD_MAX bytes. */
function chunkPayloads(replica: string, events: readonly SidecarEvent[]): string[] {
  const payloads: string[] = [];
  let chunk: SidecarEvent[] = [];
  let size = 0;
  for (const ev of events) {
    const n = Buffer.byteLength(JSON.stringify(ev)) + 1;
    if (chunk.length > 0 && size + n > PAYLOAD_MAX) {
      payloads.push(JSON.stringify({ r: replica, e: chunk } satisfies SidecarEvents));
      chunk = [];
      size = 0;
    }
    chunk.push(ev);
    size += n;
  }
  if (chunk.length > 0) payloads.push(JSON.stringify({ r: replica, e: chunk } satisfies SidecarEvents));
  return payloads;
}

/** The events of a SYNC_SIDECAR_CHANNEL payload, or undefined when it is not one. */
export function parseSidecarEvents(payload: string | undefined): SidecarEvents | undefined {
  try {
    const v = JSON.parse(payload ?? "") as unknown;
    if (typeof v !== "object" || v === null || !("r" in v) || !("e" in v) || typeof v.r !== "string" || !Array.isArray(v.e)) return undefined;
    const events = (v.e as unknown[]).filter(isSidecarEvent);
    return { r: v.r, e: events };
  } catch {
    return undefined;
  }
}

function isSidecarEvent(x: unknown): x is SidecarEvent {
  if (!Array.isArray(x) || x.length < 4 || !x.slice(1, 4).every((s) => typeof s === "string")) return false;
  return (x[0] === "lost" && x.length === 5 && typeof x[4] === "number") || (x[0] === "gone" && x.length === 4);
}
