// One way to declare a REST endpoint: its schemas feed both request validation and the OpenAPI document,
// so the contract cannot drift from the code.
import type Router from "@koa/router";
import type { OpenAPIRegistry, RouteConfig } from "@asteasolutions/zod-to-openapi";
import type { ParameterizedContext } from "koa";
import type { ZodType } from "zod";
import { z } from "./openapi/zod.js";
import { ErrorA, ErrorB } from "./openapi/common-schemas.js";
import { AppError, badRequest, forbidden, type ErrorDetail } from "../errors/app-error.js";
import { allowed, type Principal, type TeamScope } from "../domain/permissions.js";
import { UNSTORABLE_TEXT_MESSAGE, findUnstorableText } from "../domain/storable-text.js";
import { readJsonBody } from "./middleware/body.js";
import type { AppState } from "./state.js";

export type Ctx = ParameterizedContext<AppState>;

type Method = "get" | "post" | "put" | "patch" | "delete";

export interface RouteDef<P extends ZodType, Q extends ZodType, B extends ZodType> {
  method: Method;
  /** OpenAPI-style path: /v1/agents/{agent_id} */
  path: string;
  summary: string;
  /** The team scope the endpoint needs (DESIGN.md §3). */
  scope: TeamScope;
  params?: P;
  query?: Q;
  body?: B;
  /** status → response schema (null for an empty body) */
  responses: Record<number, ZodType | null>;
  handler: (ctx: Ctx, input: { params: z.infer<P>; query: z.infer<Q>; body: z.infer<B>; principal: Principal }) => Promise<{ status: number; body?: unknown }>;
}

/**
 * Bounds on what an error says about the input: a body of 50,000 unknown keys would otherwise be
 * answered with a megabyte naming each of them.
 */
const MAX_DETAILS = 50;
const MAX_DETAIL_CHARS = 300;
const MAX_SUMMARIZED = 10;
const clip = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n)}… (${s.length - n} more characters)` : s);

export function zodDetails(err: z.ZodError, root: string): ErrorDetail[] {
  return err.issues.slice(0, MAX_DETAILS).map((i) => ({
    path: clip([root, ...i.path.map(String)].filter(Boolean).join("."), MAX_DETAIL_CHARS),
    message: clip(i.message, MAX_DETAIL_CHARS),
  }));
}

/** The details in one line for an error's message: the first few, and how many more there are. */
function summarize(details: readonly ErrorDetail[], total: number): string {
  const shown = details.slice(0, MAX_SUMMARIZED).map((d) => `${d.path}: ${d.message}`).join("; ");
  return total > MAX_SUMMARIZED ? `${shown}; and ${total - MAX_SUMMARIZED} more` : shown;
}

/**
 * Refuses (400) input holding a string Postgres cannot store. Checked here, on the parsed path, query
 * and body of every route, rather than per schema, so no field can be forgotten; checking the parsed
 * values leaves unknown query parameters ignored, as they always are.
 */
export function assertStorableText(value: unknown, root: string): void {
  const at = findUnstorableText(value);
  if (at === undefined) return;
  const path = [root, ...at.map(String)].join(".");
  throw badRequest(`invalid ${root}: ${path}: ${UNSTORABLE_TEXT_MESSAGE}`, [{ path, message: UNSTORABLE_TEXT_MESSAGE }]);
}

function parseOrThrow<T extends ZodType>(schema: T, value: unknown, root: string): z.infer<T> {
  const r = schema.safeParse(value);
  if (!r.success) {
    const details = zodDetails(r.error, root);
    throw badRequest(`invalid ${root}: ${summarize(details, r.error.issues.length)}`, details);
  }
  assertStorableText(r.data, root);
  return r.data;
}

const koaPath = (p: string) => p.replace(/\{([a-zA-Z_]+)\}/g, ":$1");

export function addRoute<P extends ZodType, Q extends ZodType, B extends ZodType>(
  router: Router<AppState>,
  registry: OpenAPIRegistry,
  def: RouteDef<P, Q, B>,
): void {
  const groupA = def.path.startsWith("/v1/");
  const errorSchema = groupA ? ErrorA : ErrorB;
  const responses: RouteConfig["responses"] = {};
  for (const [status, schema] of Object.entries(def.responses)) {
    responses[status] = schema
      ? { description: `${status}`, content: { "application/json": { schema } } }
      : { description: `${status} (no body)` };
  }
  // 503: every operation reads Postgres (the key lookup at least), which may be unavailable (http/middleware/errors.ts).
  for (const status of [400, 401, 403, 404, 409, 413, 429, 500, 503]) {
    responses[status] ??= { description: "error", content: { "application/json": { schema: errorSchema } } };
  }
  const request: RouteConfig["request"] = {};
  if (def.params) request.params = def.params as unknown as NonNullable<RouteConfig["request"]>["params"];
  if (def.query) request.query = def.query as unknown as NonNullable<RouteConfig["request"]>["query"];
  if (def.body) request.body = { required: true, content: { "application/json": { schema: def.body } } };
  // x-required-scope: the team scope the operation needs (DESIGN.md §3); tests read it to check every endpoint.
  registry.registerPath({ method: def.method, path: def.path, summary: def.summary, request, responses, security: [{ apiKey: [] }], "x-required-scope": def.scope });

  router[def.method](koaPath(def.path), async (ctx) => {
    const principal = ctx.state.principal;
    if (!principal) throw new AppError("unauthorized", "missing or invalid API key");
    if (!allowed(principal, def.scope)) throw forbidden(`this key may not use this endpoint (needs ${def.scope})`);
    const params = def.params ? parseOrThrow(def.params, ctx.params, "path") : ({} as z.infer<P>);
    const query = def.query ? parseOrThrow(def.query, ctx.query, "query") : ({} as z.infer<Q>);
    let body = undefined as z.infer<B>;
    if (def.body) body = parseOrThrow(def.body, await readJsonBody(ctx), "body");
    const out = await def.handler(ctx, { params, query, body, principal });
    ctx.status = out.status;
    if (out.body !== undefined) ctx.body = out.body;
  });
}
