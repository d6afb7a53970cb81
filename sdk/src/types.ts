// Type helpers over the generated OpenAPI types: which paths take which method, what a call takes
// and returns, and which list endpoints paginate by cursor (group A) or by offset (group B).
import type { FetchResponse, MaybeOptionalInit } from "openapi-fetch";
import type { components, paths } from "./generated/schema.js";

export type { paths, components };
/** Every named schema of the REST API (`Schemas["AgentSummary"]`, `Schemas["ErrorA"]`…). */
export type Schemas = components["schemas"];

export type Method = "get" | "put" | "post" | "delete" | "patch";

/** Paths that declare `method`. */
export type PathsWith<M extends Method> = {
  [P in keyof paths]: paths[P] extends { [K in M]: unknown } ? P : never;
}[keyof paths];

type RequiredKeysOf<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];

/** The options of a call (`params.path`, `params.query`, `body`, `headers`, `signal`…). */
export type CallInit<P extends keyof paths, M extends Method> = MaybeOptionalInit<paths[P], M>;

/** The rest parameter of a call: optional when nothing in it is required. */
export type InitArg<I> = RequiredKeysOf<I> extends never ? [(I & { [key: string]: unknown })?] : [I & { [key: string]: unknown }];

/** What a successful call returns (the parsed JSON body; `undefined` for a body-less 204). */
export type CallResult<P extends keyof paths, M extends Method, I> = paths[P][M & keyof paths[P]] extends infer Op
  ? Op extends Record<string | number, unknown>
    ? BodyOrUndefined<NonNullable<FetchResponse<Op, I, `${string}/${string}`>["data"]>>
    : never
  : never;

/** A 2xx without a JSON body (204) has no data type at all: the call resolves to undefined, not never. */
type BodyOrUndefined<T> = [T] extends [never] ? undefined : T;

type OkJson<P extends keyof paths> = paths[P] extends { get: { responses: { 200: { content: { "application/json": infer B } } } } } ? B : never;

/** Group A list endpoints: `{data, has_more, next_cursor?}`, taking `cursor`. */
export type CursorPaths = {
  [P in PathsWith<"get">]: OkJson<P> extends { data: unknown[]; has_more: boolean } ? P : never;
}[PathsWith<"get">];

/** Group B list endpoints: `{data, total, limit?, offset?}`, taking `offset`. */
export type OffsetPaths = {
  [P in PathsWith<"get">]: OkJson<P> extends { data: unknown[]; total: number } ? P : never;
}[PathsWith<"get">];

export type PagedPaths = CursorPaths | OffsetPaths;

/** The item type of a list endpoint. */
export type ItemOf<P extends keyof paths> = OkJson<P> extends { data: (infer T)[] } ? T : never;
