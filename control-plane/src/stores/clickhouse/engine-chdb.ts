// Engine: chDB, ClickHouse in-process, on the shared session of chdb-session.ts. Only the async API
// is used (queryAsync, insert), which runs the engine off the event loop (checked by
// engine-chdb.test.ts: timers keep firing during a heavy query).

import type { Session } from "chdb";
import { acquireChdbSession, releaseChdbSession } from "./chdb-session.js";
import type { EngineRow, SqlEngine } from "./engine.js";
import { INPUT_SETTINGS } from "./engine.js";
import { engineError, TraceStoreError } from "./errors.js";
import type { SqlFragment } from "./sql-literal.js";

/** Parses JSONEachRow text: one JSON object per non-empty line. */
export function parseJsonEachRow(text: string): EngineRow[] {
  const rows: EngineRow[] = [];
  for (const line of text.split("\n")) {
    if (line.length === 0) continue;
    try {
      rows.push(JSON.parse(line) as EngineRow);
    } catch (e) {
      throw engineError("bad_response", "chDB returned a line that is not JSON", e);
    }
  }
  return rows;
}

export class ChdbEngine implements SqlEngine {
  readonly kind = "chdb" as const;
  private session: Session | null;
  private readonly inFlight = new Set<Promise<unknown>>();

  private constructor(session: Session) {
    this.session = session;
  }

  /** Opens (or joins) the process's chDB session on `dir`. */
  static async open(dir: string): Promise<ChdbEngine> {
    return new ChdbEngine(await acquireChdbSession(dir));
  }

  private live(): Session {
    if (!this.session) throw new TraceStoreError("closed", "trace store engine is closed");
    return this.session;
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inFlight.add(p);
    const done = (): void => {
      this.inFlight.delete(p);
    };
    p.then(done, done);
    return p;
  }

  async query(statement: SqlFragment): Promise<EngineRow[]> {
    const session = this.live();
    try {
      const result = await this.track(session.queryAsync(statement.text, { format: "JSONEachRow" }));
      return parseJsonEachRow(result.text());
    } catch (e) {
      throw engineError("query_failed", "chDB query failed", e);
    }
  }

  async command(statement: SqlFragment): Promise<void> {
    const session = this.live();
    try {
      await this.track(session.queryAsync(statement.text, { format: "TabSeparated" }));
    } catch (e) {
      throw engineError("query_failed", "chDB command failed", e);
    }
  }

  async insertTabSeparated(table: SqlFragment, columns: readonly string[], body: Buffer): Promise<void> {
    const session = this.live();
    if (body.length === 0) return;
    try {
      await this.track(session.insert({ table: table.text, columns, values: body, format: "TabSeparated", settings: { ...INPUT_SETTINGS } }));
    } catch (e) {
      throw engineError("query_failed", "chDB insert failed", e);
    }
  }

  async ping(): Promise<boolean> {
    if (!this.session) return false;
    try {
      await this.session.queryAsync("SELECT 1", { format: "TabSeparated" });
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    const session = this.session;
    if (!session) return;
    this.session = null;
    await Promise.allSettled([...this.inFlight]);
    await releaseChdbSession(session);
  }
}
