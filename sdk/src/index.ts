// @agentgov/sdk: the TypeScript client of the agentgov REST API (types generated from its OpenAPI
// document), with pagination, typed errors, retries, webhook signatures and sidecar helpers.
export { AgentGov, type AgentGovOptions } from "./client.js";
export { AgentGovError, AgentGovTimeoutError, AgentGovConnectionError, parseRetryAfter, type ErrorDetail } from "./errors.js";
export { retryingFetch, DEFAULT_RETRY, type RetryOptions, type FetchLike } from "./transport.js";
export { cursorPages, offsetPages, type Page } from "./pagination.js";
export {
  signWebhook, verifyWebhook, constructWebhookEvent, computeSignature, parseSignatureHeader, WebhookSignatureError,
  SIGNATURE_HEADER, DEFAULT_TOLERANCE_SECONDS, type VerifyOptions, type WebhookPayload,
} from "./webhook.js";
export { viaSidecar, PROVIDERS, type Sidecar, type SidecarTarget, type Provider, type FetchFn } from "./sidecar.js";
export type { paths, components, Schemas, Method, PathsWith, CallInit, CallResult, CursorPaths, OffsetPaths, PagedPaths, ItemOf } from "./types.js";
