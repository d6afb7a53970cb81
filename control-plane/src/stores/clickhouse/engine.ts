// The small surface the trace store needs from a ClickHouse engine. Two implementations run the
// same SQL: engine-server.ts (a ClickHouse server over HTTP) and engine-chdb.ts (chDB in-process).

import type { SqlFragment } from "./sql-literal.js";

export type EngineKind = "server" | "chdb";

export interface EngineVersion {
  text: string;
  major: number;
  minor: number;
}

/** One JSONEachRow row as the engine printed it (64-bit integers may arrive quoted). */
export type EngineRow = Record<string, unknown>;

export interface SqlEngine {
  readonly kind: EngineKind;
  /** Runs a SELECT and returns its rows (format JSONEachRow). */
  query(statement: SqlFragment): Promise<EngineRow[]>;
  /** Runs a statement without a result (DDL, ALTER). */
  command(statement: SqlFragment): Promise<void>;
  /**
   * Inserts TabSeparated rows of `columns` (with `date_time_input_format=basic`); resolves when the
   * engine holds them. `table` is a whitelisted `db.table`, `columns` whitelisted names.
   */
  insertTabSeparated(table: SqlFragment, columns: readonly string[], body: Buffer): Promise<void>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/** Settings both engines run with, so that they parse and print alike. */
export const INPUT_SETTINGS = { date_time_input_format: "basic" } as const;

/** Parses `version()` output such as "18.16.1" or "26.7.2.1". */
export function parseEngineVersion(text: string): EngineVersion {
  const m = /^(\d+)\.(\d+)/.exec(text.trim());
  return { text: text.trim(), major: m ? Number(m[1]) : 0, minor: m ? Number(m[2]) : 0 };
}
