// The REST application: both groups (/v1, /api) on one Koa app, plus health and the OpenAPI document.
import Koa from "koa";
import Router from "@koa/router";
import type { Deps } from "./deps.js";
import type { AppState } from "./state.js";
import { requestId } from "./middleware/request-id.js";
import { errorHandler } from "./middleware/errors.js";
import { authenticate } from "./middleware/auth.js";
import { awaitSyncDelivery } from "./middleware/sync-delivery.js";
import { rateLimit } from "./middleware/rate-limit.js";
import { buildDocument, createRegistry } from "./openapi/registry.js";
import { createControlPlaneOps, httpMetrics, routeMatcher } from "../observability/index.js";
import { registerAgentRoutesA } from "./routes/v1/agents.js";
import { registerTraceRoutesA } from "./routes/v1/traces.js";
import { registerPolicyRoutesA } from "./routes/v1/policies.js";
import { registerAgentRoutesB } from "./routes/api/agents.js";
import { registerTraceRoutesB } from "./routes/api/traces.js";
import { registerKeyRoutes } from "./routes/api/keys.js";
import { registerTeamRoutes } from "./routes/api/teams.js";
import { registerUserRoutes } from "./routes/api/users.js";
import { registerAuditRoutes } from "./routes/api/audit.js";
import { registerComplianceRoutes } from "./routes/api/compliance.js";
import { registerWebhookRoute } from "./routes/api/webhook.js";

export interface RestApp {
  app: Koa<AppState>;
  openapi: ReturnType<typeof buildDocument>;
}

const ROUTER_OPTIONS = { sensitive: true } as const;

export function createRestApp(deps: Deps): RestApp {
  const app = new Koa<AppState>({ proxy: false });
  // Case-sensitive like the path tests of authentication and error shapes (middleware/auth.ts, errors.ts):
  // /V1/agents and /v1/AGENTS are unknown paths, not group routes reached around those tests.
  const router = new Router<AppState>(ROUTER_OPTIONS);
  const registry = createRegistry();

  registerAgentRoutesA(router, registry, deps);
  registerTraceRoutesA(router, registry, deps);
  registerPolicyRoutesA(router, registry, deps);
  registerAgentRoutesB(router, registry, deps);
  registerTraceRoutesB(router, registry, deps);
  registerKeyRoutes(router, registry, deps);
  registerTeamRoutes(router, registry, deps);
  registerUserRoutes(router, registry, deps);
  registerAuditRoutes(router, registry, deps);
  registerComplianceRoutes(router, registry, deps);
  registerWebhookRoute(router, registry, deps);

  const openapi = buildDocument(registry);

  const open = new Router<AppState>(ROUTER_OPTIONS);
  open.get("/openapi.json", (ctx) => {
    ctx.body = openapi;
  });
  open.get("/healthz", (ctx) => {
    ctx.body = { status: "ok" };
  });
  const ops = deps.ops ?? createControlPlaneOps();
  open.get("/readyz", async (ctx) => {
    const r = await ops.lifecycle.readiness(deps.db, deps.traces);
    ctx.status = r.ready ? 200 : 503;
    ctx.body = { status: r.ready ? "ready" : r.draining ? "draining" : "not_ready", postgres: r.postgres, clickhouse: r.clickhouse };
  });
  open.get("/metrics", async (ctx) => {
    ctx.type = ops.metrics.registry.contentType;
    ctx.body = await ops.metrics.registry.metrics();
  });

  app.silent = true;
  app.use(requestId());
  app.use(httpMetrics(ops, routeMatcher([...Object.keys(openapi.paths ?? {}), "/openapi.json", "/healthz", "/readyz", "/metrics"]), deps.log));
  app.use(errorHandler(deps.log));
  app.use(open.routes());
  app.use(authenticate(deps.db));
  app.use(rateLimit(deps.config.API_RATE_LIMIT_PER_MINUTE));
  app.use(awaitSyncDelivery(deps));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return { app, openapi };
}
