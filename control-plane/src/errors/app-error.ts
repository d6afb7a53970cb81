// The one error type of the control plane: a code, an HTTP status, and optional field details.
// Each REST group maps it to its own body shape in one place (http/middleware/errors.ts).

export type ErrorCode =
  | "bad_request"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "method_not_allowed"
  | "not_implemented"
  | "conflict"
  | "payload_too_large"
  | "rate_limit_exceeded"
  | "internal_error"
  | "service_unavailable"
  | "invalid_signature";

const STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  not_implemented: 501,
  conflict: 409,
  payload_too_large: 413,
  rate_limit_exceeded: 429,
  internal_error: 500,
  service_unavailable: 503,
  invalid_signature: 403,
};

export interface ErrorDetail {
  path: string;
  message: string;
}

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = "AppError";
    this.status = STATUS[code];
    Object.setPrototypeOf(this, new.target.prototype);
  }
}

export const badRequest = (message: string, details: ErrorDetail[] = []) => new AppError("bad_request", message, details);
export const notFound = (what: string) => new AppError("not_found", `${what} not found`);
export const conflict = (message: string) => new AppError("conflict", message);
export const forbidden = (message = "this key is not allowed to do that") => new AppError("forbidden", message);
export const unauthorized = (message = "missing or invalid API key") => new AppError("unauthorized", message);

export function isAppError(e: unknown): e is AppError {
  return e instanceof AppError;
}
