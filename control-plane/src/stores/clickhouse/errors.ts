// Typed errors of the ClickHouse trace store: every failure carries a stable `code`.

export type TraceStoreErrorCode =
  /** A value given to the store is not acceptable (bad id, non-finite number, bad date…). */
  | "invalid_argument"
  /** The engine could not be reached or opened. */
  | "engine_unavailable"
  /** chDB runs one data directory per process and another one is already open. */
  | "chdb_data_dir_conflict"
  /** The engine rejected or failed a statement. */
  | "query_failed"
  /** The engine answered something the store cannot read. */
  | "bad_response"
  /** The store was used after close(). */
  | "closed";

export class TraceStoreError extends Error {
  override readonly name = "TraceStoreError";
  readonly code: TraceStoreErrorCode;

  constructor(code: TraceStoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    Object.setPrototypeOf(this, new.target.prototype);
  }
}

export function isTraceStoreError(e: unknown): e is TraceStoreError {
  return e instanceof TraceStoreError;
}

/** Wraps an engine failure (keeps a TraceStoreError as it is). */
export function engineError(code: TraceStoreErrorCode, what: string, cause: unknown): TraceStoreError {
  if (cause instanceof TraceStoreError) return cause;
  const detail = cause instanceof Error ? cause.message : String(cause);
  return new TraceStoreError(code, `${what}: ${detail}`, { cause });
}
