// The OpenAPI document of the REST API, built without starting anything: the app is assembled with
// inert dependencies (route registration only declares schemas; handlers never run), so scripts such as
// the SDK generator read exactly the document a running control plane serves at /openapi.json.
import pino from "pino";
import { createRestApp, type RestApp } from "../app.js";
import type { Deps } from "../deps.js";
import { loadControlPlaneConfig } from "../../config/env.js";

export type OpenApiDocument = RestApp["openapi"];

/** Something that fails loudly if route registration ever uses it (it must not touch stores). */
function inert(name: string): unknown {
  const fail = (): never => {
    throw new Error(`buildOpenApiDocument: route registration used deps.${name}; it may only declare routes`);
  };
  return new Proxy(function inertDependency() {}, { get: fail, apply: fail, construct: fail });
}

export function buildOpenApiDocument(): OpenApiDocument {
  const known: Record<string, unknown> = {
    config: loadControlPlaneConfig({}),
    log: pino({ level: "silent" }),
    ops: undefined,
  };
  // Any other dependency (stores, hubs, metrics…) is inert; new Deps fields need no change here.
  const deps = new Proxy(known, { get: (target, prop) => (typeof prop === "string" && prop in target ? target[prop] : typeof prop === "string" ? inert(prop) : undefined) });
  return createRestApp(deps as unknown as Deps).openapi;
}
