// Koa middleware: one access-log line and the request metrics per REST call, labelled with the
// route template (from the OpenAPI paths, so ids never become label values) and the final status.
// While the control plane drains, answers carry `Connection: close`.
import { performance } from "node:perf_hooks";
import type { Middleware } from "koa";
import type { Logger } from "pino";
import type { ControlPlaneMetrics } from "./metrics.js";
import type { Lifecycle } from "./lifecycle.js";

export const UNMATCHED_ROUTE = "unmatched";

/** Maps a request path to its route template (`/v1/agents/{agent_id}`), or "unmatched". */
export function routeMatcher(templates: Iterable<string>): (path: string) => string {
  const compiled = [...templates].map((t) => ({ t, re: new RegExp(`^${t.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+")}$`) }));
  // Literal paths first so /api/traces/stats wins over /api/traces/{id}.
  compiled.sort((a, b) => (a.t.match(/\{/g)?.length ?? 0) - (b.t.match(/\{/g)?.length ?? 0));
  return (path) => compiled.find((c) => c.re.test(path))?.t ?? UNMATCHED_ROUTE;
}

export function httpMetrics<S extends { requestId?: string; principal?: { keyId: string; tenantId: string } }>(
  ops: { metrics: ControlPlaneMetrics; lifecycle: Lifecycle },
  routeOf: (path: string) => string,
  log: Logger,
): Middleware<S> {
  const m = ops.metrics;
  return async (ctx, next) => {
    const t0 = performance.now();
    // While draining, clients are asked to reconnect (to another replica) after this answer.
    if (ops.lifecycle.draining) ctx.set("Connection", "close");
    try {
      await next();
    } finally {
      const route = routeOf(ctx.path);
      const status = String(ctx.status);
      const seconds = (performance.now() - t0) / 1000;
      const labels = { method: ctx.method, route, status };
      m.httpRequests.inc(labels);
      m.httpDuration.observe(labels, seconds);
      if (ctx.status === 429) m.httpRateLimited.inc({ route });
      if (route !== "/metrics" && route !== "/healthz" && route !== "/readyz") {
        const p = ctx.state.principal;
        log.info(
          { requestId: ctx.state.requestId, method: ctx.method, route, status: ctx.status, ms: Math.round(seconds * 1e4) / 10, ...(p ? { tenantId: p.tenantId, keyId: p.keyId } : {}) },
          "request",
        );
      }
    }
  };
}
