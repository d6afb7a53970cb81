// The settled Sync version: a version V such that every sync_changes row numbered ≤ V has committed or
// rolled back, so a read after this point sees all of them. Sync streams deliver changes only up to it.
//
// Why: versions come from a sequence, allocated when a transaction inserts its change row, but
// transactions commit in any order. A stream that read "everything after 41" and saw 43 (committed
// first) while 42 was still in flight, then advanced to 43, would never send 42. So:
//   1. read the sequence's last value L (allocated versions ≤ L belong to transactions that had
//      already taken ROW EXCLUSIVE on sync_changes, which an INSERT takes before it draws a value);
//   2. list the transactions holding ROW EXCLUSIVE on sync_changes (pg_locks, fast-path included);
//   3. wait until those transactions are gone.
// Then every version ≤ L is decided. One computation is shared by every stream of this replica that
// asked while it ran (single flight); a caller always gets a computation that started after its call.
import type { Db } from "../stores/postgres/db.js";

const WRITERS_SQL = `SELECT virtualtransaction AS vxid FROM pg_locks
  WHERE locktype = 'relation' AND relation = 'sync_changes'::regclass
    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND mode = 'RowExclusiveLock' AND granted AND pid <> pg_backend_pid()`;

/** Longest wait for open change-writing transactions before answering with the previous settled version. */
const MAX_WAIT_MS = 2_000;

export class SettledVersion {
  private current: Promise<number> | undefined;
  private queued: Promise<number> | undefined;
  private last = 0;

  constructor(
    private readonly db: Db,
    private readonly onSlow: (waitedMs: number, writers: number) => void = () => undefined,
  ) {}

  /** A settled version computed after this call (never lower than an earlier answer). */
  next(): Promise<number> {
    if (!this.current) {
      this.current = this.compute().finally(() => (this.current = undefined));
      return this.current;
    }
    this.queued ??= this.current
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.next();
      });
    return this.queued;
  }

  private async compute(): Promise<number> {
    const seq = await this.db.query<{ last_value: number; is_called: boolean }>("SELECT last_value, is_called FROM sync_changes_version_seq");
    const row = seq.rows[0];
    const allocated = row && row.is_called ? Number(row.last_value) : 0;
    const t0 = Date.now();
    let writers = new Set((await this.db.query<{ vxid: string }>(WRITERS_SQL)).rows.map((r) => r.vxid));
    let pause = 1;
    while (writers.size > 0) {
      if (Date.now() - t0 > MAX_WAIT_MS) {
        this.onSlow(Date.now() - t0, writers.size);
        return this.last;
      }
      await new Promise((r) => setTimeout(r, pause));
      pause = Math.min(pause * 2, 50);
      const still = (await this.db.query<{ vxid: string }>(WRITERS_SQL)).rows.map((r) => r.vxid);
      writers = new Set(still.filter((v) => writers.has(v)));
    }
    this.last = Math.max(this.last, allocated);
    return this.last;
  }
}
