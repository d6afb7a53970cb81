// Typed errors. Every refusal of the REST API becomes an AgentGovError carrying the HTTP status, a
// machine code (group A's `error.code`; for group B, whose bodies carry only a message, the code of
// the status), the message, the request id to quote to support, and group B's validation details.

export interface ErrorDetail {
  path: string;
  message: string;
}

const CODE_OF_STATUS: Record<number, string> = {
  400: "bad_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  405: "method_not_allowed",
  409: "conflict",
  413: "payload_too_large",
  429: "rate_limit_exceeded",
  500: "internal_error",
  501: "not_implemented",
  502: "bad_gateway",
  503: "service_unavailable", // as group A's bodies name it
  504: "gateway_timeout",
};

export class AgentGovError extends Error {
  override readonly name: string = "AgentGovError";
  /** HTTP status; 0 when no answer arrived (timeout, connection failure). */
  readonly status: number;
  /** `bad_request`, `unauthorized`, `forbidden`, `not_found`, `conflict`, `rate_limit_exceeded`, … */
  readonly code: string;
  /** The `X-Request-Id` of the failed call (quote it in support requests). */
  readonly requestId: string | undefined;
  /** Group B validation details (`[{path, message}]`); empty otherwise. */
  readonly details: ErrorDetail[];
  /** Seconds the server asked to wait (`Retry-After`), when it said. */
  readonly retryAfterSeconds: number | undefined;
  /** The parsed error body, as received. */
  readonly body: unknown;

  constructor(init: { status: number; code: string; message: string; requestId?: string; details?: ErrorDetail[]; retryAfterSeconds?: number; body?: unknown; cause?: unknown }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    Object.setPrototypeOf(this, new.target.prototype);
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.details = init.details ?? [];
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.body = init.body;
  }

  /** Builds the error of a non-2xx answer from its body (either group's shape) and headers. */
  static fromResponse(response: Response, body: unknown): AgentGovError {
    const requestId = response.headers.get("x-request-id") ?? undefined;
    const retryAfterSeconds = parseRetryAfter(response.headers.get("retry-after"), Date.now());
    const fallbackCode = CODE_OF_STATUS[response.status] ?? (response.status >= 500 ? "server_error" : "http_error");
    const err = isObject(body) ? body.error : undefined;
    if (isObject(err)) {
      // Group A (and the sidecar): {error: {code, message, request_id}}
      return new AgentGovError({
        status: response.status,
        code: typeof err.code === "string" ? err.code : fallbackCode,
        message: typeof err.message === "string" ? err.message : `HTTP ${response.status}`,
        requestId: typeof err.request_id === "string" ? err.request_id : requestId,
        retryAfterSeconds,
        body,
      });
    }
    const details = isObject(body) && Array.isArray(body.details) ? (body.details as ErrorDetail[]) : [];
    return new AgentGovError({
      status: response.status,
      code: fallbackCode,
      message: typeof err === "string" ? err : typeof body === "string" && body ? body.slice(0, 500) : `HTTP ${response.status} ${response.statusText}`.trim(),
      ...(requestId ? { requestId } : {}),
      details,
      retryAfterSeconds,
      body,
    });
  }
}

/** The call did not complete within `timeoutMs`. */
export class AgentGovTimeoutError extends AgentGovError {
  override readonly name = "AgentGovTimeoutError";
  constructor(timeoutMs: number, cause?: unknown) {
    super({ status: 0, code: "timeout", message: `no answer within ${timeoutMs} ms`, cause });
  }
}

/** The server could not be reached (refused, reset, DNS…). */
export class AgentGovConnectionError extends AgentGovError {
  override readonly name = "AgentGovConnectionError";
  constructor(cause: unknown) {
    super({ status: 0, code: "connection_error", message: `could not reach the server: ${cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause)}`, cause });
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null;
}

/** `Retry-After` as seconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - nowMs) / 1000);
}
