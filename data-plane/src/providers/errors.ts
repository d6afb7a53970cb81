// Typed errors raised by provider adapters.

export type ProviderErrorCode = "missing_model" | "invalid_body";

/** A governed request that cannot be forwarded as sent (the sidecar answers 400). */
export class ProviderRequestError extends Error {
  readonly code: ProviderErrorCode;
  constructor(code: ProviderErrorCode, message: string) {
    super(message);
    this.name = "ProviderRequestError";
    this.code = code;
  }
}
