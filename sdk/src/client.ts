// AgentGov: the REST client. Calls are typed from the generated OpenAPI types (path, parameters, body
// and result), go through the retrying transport, and throw AgentGovError on any non-2xx answer.
import createClient, { type Client } from "openapi-fetch";
import { AgentGovError } from "./errors.js";
import { DEFAULT_RETRY, retryingFetch, type FetchLike, type RetryOptions } from "./transport.js";
import { cursorPages, offsetPages, traceKeysetPages, type Page } from "./pagination.js";
import type { CallInit, CallResult, CursorPaths, InitArg, ItemOf, Method, OffsetPaths, PagedPaths, PathsWith, paths } from "./types.js";

export interface AgentGovOptions {
  /** The control plane's REST address, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** An agentgov API key (`svc_api_…` or `svc_agent_…`), sent as `Authorization: Bearer`. */
  apiKey: string;
  /** Per-attempt time limit in ms, reading the answer's body included (default 60 000). */
  timeoutMs?: number;
  /** Retries after the first attempt on 429/5xx (default 2; 0 turns them off). */
  maxRetries?: number;
  /** Fine-tuning of the backoff (first step, cap, longest Retry-After waited for). */
  retry?: Partial<Pick<RetryOptions, "baseDelayMs" | "maxDelayMs" | "maxRetryAfterMs">>;
  /** Headers added to every call. */
  headers?: Record<string, string>;
  /** A fetch implementation (default: the global fetch). */
  fetch?: FetchLike;
}

export class AgentGov {
  /**
   * The underlying openapi-fetch client (same auth, retries and timeouts) for callers who want
   * `{data, error, response}` instead of exceptions.
   */
  readonly raw: Client<paths>;

  constructor(options: AgentGovOptions) {
    if (!options.baseUrl) throw new TypeError("AgentGov: baseUrl is required");
    if (!options.apiKey) throw new TypeError("AgentGov: apiKey is required");
    const inner: FetchLike = options.fetch ?? ((r) => globalThis.fetch(r));
    const retry: RetryOptions = {
      ...DEFAULT_RETRY,
      readBody: true,
      ...options.retry,
      ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    };
    this.raw = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ""),
      headers: { ...options.headers, authorization: `Bearer ${options.apiKey}` },
      fetch: retryingFetch(inner, retry),
    });
  }

  /** Any call: returns the parsed body of a 2xx answer, throws AgentGovError otherwise. */
  async request<M extends Method, P extends PathsWith<M>, I extends CallInit<P, M>>(method: M, path: P, ...init: InitArg<I>): Promise<CallResult<P, M, I>> {
    const call = this.raw.request as unknown as (m: string, p: string, i?: unknown) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
    let answer: { data?: unknown; error?: unknown; response: Response };
    try {
      answer = await call(method, path, init[0]);
    } catch (e) {
      // A body that is not JSON (an HTML page of a proxy, a wrong baseUrl): typed like every other failure.
      if (e instanceof SyntaxError) throw new AgentGovError({ status: 0, code: "invalid_response", message: `the answer to ${method.toUpperCase()} ${path} was not JSON (is baseUrl the control plane's REST address?)`, cause: e });
      throw e;
    }
    const { data, error, response } = answer;
    if (!response.ok) throw AgentGovError.fromResponse(response, error);
    // openapi-fetch gives no data for any empty body; only a 204 is meant to have none (DELETE).
    if (data === undefined && response.status !== 204) {
      throw new AgentGovError({ status: 0, code: "invalid_response", message: `the answer to ${method.toUpperCase()} ${path} (${response.status}) had no body (is baseUrl the control plane's REST address?)` });
    }
    return data as CallResult<P, M, I>;
  }

  get<P extends PathsWith<"get">, I extends CallInit<P, "get">>(path: P, ...init: InitArg<I>): Promise<CallResult<P, "get", I>> {
    return this.request("get", path, ...init);
  }
  post<P extends PathsWith<"post">, I extends CallInit<P, "post">>(path: P, ...init: InitArg<I>): Promise<CallResult<P, "post", I>> {
    return this.request("post", path, ...init);
  }
  put<P extends PathsWith<"put">, I extends CallInit<P, "put">>(path: P, ...init: InitArg<I>): Promise<CallResult<P, "put", I>> {
    return this.request("put", path, ...init);
  }
  patch<P extends PathsWith<"patch">, I extends CallInit<P, "patch">>(path: P, ...init: InitArg<I>): Promise<CallResult<P, "patch", I>> {
    return this.request("patch", path, ...init);
  }
  delete<P extends PathsWith<"delete">, I extends CallInit<P, "delete">>(path: P, ...init: InitArg<I>): Promise<CallResult<P, "delete", I>> {
    return this.request("delete", path, ...init);
  }

  /**
   * Every item of a list endpoint, page after page: group A (`/v1/…`) follows `next_cursor` while
   * `has_more`; group B (`/api/…`) advances `offset` until `total` is reached. `params.query` may set
   * filters and the page size (`limit`).
   */
  async *paginate<P extends PagedPaths, I extends CallInit<P, "get">>(path: P, ...init: InitArg<I>): AsyncGenerator<ItemOf<P>, void, undefined> {
    const pages = this.pages as unknown as (p: P, i?: unknown) => AsyncGenerator<Page<ItemOf<P>>, void, undefined>;
    for await (const page of pages.call(this, path, init[0])) yield* page.items;
  }

  /** The pages of a list endpoint (items plus the raw page body), for callers who need page boundaries. */
  pages<P extends PagedPaths, I extends CallInit<P, "get">>(path: P, ...init: InitArg<I>): AsyncGenerator<Page<ItemOf<P>>, void, undefined> {
    const base = (init[0] ?? {}) as { params?: { query?: Record<string, unknown>; path?: Record<string, unknown> } } & Record<string, unknown>;
    const fetchPage = async (query: Record<string, unknown>): Promise<unknown> => {
      const call = this.get as unknown as (p: string, i: unknown) => Promise<unknown>;
      return call.call(this, path, { ...base, params: { ...base.params, query: { ...base.params?.query, ...query } } });
    };
    const query = base.params?.query;
    if (path.startsWith("/v1/")) return cursorPages(fetchPage, query) as AsyncGenerator<Page<ItemOf<P>>, void, undefined>;
    // Traces land after their time (uploaded in batches): offsets would shift under the walk.
    if (path === "/api/traces") return traceKeysetPages(fetchPage, query) as AsyncGenerator<Page<ItemOf<P>>, void, undefined>;
    return offsetPages(fetchPage, query) as AsyncGenerator<Page<ItemOf<P>>, void, undefined>;
  }
}

export type { CursorPaths, OffsetPaths };
