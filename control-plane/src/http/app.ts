// The REST application: both groups (/v1, /api) on one Koa app, plus health and the OpenAPI document.
import Koa from "koa";
import Router from "@koa/router";
import type { Deps } from "./deps.js";
import type { AppState } from "./state.js";
import { requestId } from "./middleware/request-id.js";
import { errorHandler } from "./middleware/errors.js";
import { authenticate } from "./middleware/auth.js";
import { rateLimit } from "./middleware/rate-limit.js";
import { buildDocument, createRegistry } from "./openapi/registry.js";
import { registerAgentRoutesA } from "./routes/v1/agents.js";
import { registerTraceRoutesA } from "./routes/v1/traces.js";
import { registerPolicyRoutesA } from "./routes/v1/policies.js";
import { registerAgentRoutesB } from "./routes/api/agents.js";
import { registerKeyRoutes } from "./routes/api/keys.js";

export interface RestApp {
  app: Koa<AppState>;
  openapi: ReturnType<typeof buildDocument>;
}

export function createRestApp(deps: Deps): RestApp {
  const app = new Koa<AppState>({ proxy: false });
  const router = new Router<AppState>();
  const registry = createRegistry();

  registerAgentRoutesA(router, registry, deps);
  registerTraceRoutesA(router, registry, deps);
  registerPolicyRoutesA(router, registry, deps);
  registerAgentRoutesB(router, registry, deps);
  registerKeyRoutes(router, registry, deps);

  const openapi = buildDocument(registry);

  const open = new Router<AppState>();
  open.get("/openapi.json", (ctx) => {
    ctx.body = openapi;
  });
  open.get("/healthz", (ctx) => {
    ctx.body = { status: "ok" };
  });
  open.get("/readyz", async (ctx) => {
    const [pg, ch] = await Promise.all([
      deps.db.query("SELECT 1").then(() => true, () => false),
      deps.traces.ping().catch(() => false),
    ]);
    ctx.status = pg && ch ? 200 : 503;
    ctx.body = { status: pg && ch ? "ready" : "not_ready", postgres: pg, clickhouse: ch };
  });

  app.silent = true;
  app.use(requestId());
  app.use(errorHandler(deps.log));
  app.use(open.routes());
  app.use(authenticate(deps.db));
  app.use(rateLimit(deps.config.API_RATE_LIMIT_PER_MINUTE));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return { app, openapi };
}
