// Engine: a ClickHouse server over HTTP through @clickhouse/client. Works with servers as old as
// Debian's 18.16: no query parameters, no async_insert; settings travel as URL parameters.

import { Readable } from "node:stream";
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from "@clickhouse/client";
import type { EngineRow, SqlEngine } from "./engine.js";
import { INPUT_SETTINGS } from "./engine.js";
import { engineError, TraceStoreError } from "./errors.js";
import type { SqlFragment } from "./sql-literal.js";

export interface ServerEngineOptions {
  url: string;
  user?: string;
  password?: string;
  /** Per-request timeout in ms (default 60 s; longer makes the client ask for progress headers). */
  requestTimeoutMs?: number;
}

const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EHOSTUNREACH", "ETIMEDOUT", "EPIPE"]);

function failure(what: string, cause: unknown): TraceStoreError {
  const code = (cause as { code?: unknown } | null)?.code;
  const network = typeof code === "string" && NETWORK_CODES.has(code);
  return engineError(network ? "engine_unavailable" : "query_failed", what, cause);
}

export class ServerEngine implements SqlEngine {
  readonly kind = "server" as const;
  private readonly client: ClickHouseClient;
  private closed = false;

  constructor(options: ServerEngineOptions) {
    if (!URL.canParse(options.url) || !/^https?:$/.test(new URL(options.url).protocol)) {
      // The URL is not quoted: it may carry a password (clickhouse://user:secret@…), and errors reach the logs.
      throw new TraceStoreError("invalid_argument", "CLICKHOUSE_URL is not an http(s) ClickHouse URL (the HTTP interface, e.g. http://host:8123)");
    }
    this.client = createClient({
      url: options.url,
      username: options.user ?? "default",
      password: options.password ?? "",
      request_timeout: options.requestTimeoutMs ?? 60_000,
      // Failures reach the caller as rejected promises (TraceStoreError); the client's own console
      // logging would only duplicate them.
      log: { level: ClickHouseLogLevel.OFF },
      clickhouse_settings: {
        ...INPUT_SETTINGS,
        output_format_json_quote_64bit_integers: 1,
      },
    });
  }

  private live(): void {
    if (this.closed) throw new TraceStoreError("closed", "trace store engine is closed");
  }

  async query(statement: SqlFragment): Promise<EngineRow[]> {
    this.live();
    try {
      const rs = await this.client.query({ query: statement.text, format: "JSONEachRow" });
      return await rs.json<EngineRow>();
    } catch (e) {
      throw failure("ClickHouse query failed", e);
    }
  }

  async command(statement: SqlFragment): Promise<void> {
    this.live();
    try {
      await this.client.command({ query: statement.text });
    } catch (e) {
      throw failure("ClickHouse command failed", e);
    }
  }

  async insertTabSeparated(table: SqlFragment, columns: readonly string[], body: Buffer): Promise<void> {
    this.live();
    if (body.length === 0) return;
    const [first, ...rest] = columns;
    if (first === undefined) throw new TraceStoreError("invalid_argument", "insert without columns");
    try {
      await this.client.insert({ table: table.text, columns: [first, ...rest], values: Readable.from([body], { objectMode: false }), format: "TabSeparated" });
    } catch (e) {
      throw failure("ClickHouse insert failed", e);
    }
  }

  async ping(): Promise<boolean> {
    if (this.closed) return false;
    try {
      const r = await this.client.ping();
      return r.success;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.client.close();
  }
}
