// Everything operational around the sidecar's proxy, attached from main.ts with a few calls:
// - listener(): serves GET /metrics, answers /readyz with 503 while draining, meters every request,
//   asks clients to close keep-alive connections while draining, and counts requests in flight;
// - traced(emit): records each trace's metrics, its OpenTelemetry span (when enabled) and a debug line;
// - startDraining()/settled()/close(): graceful shutdown.
import { ServerResponse, type IncomingMessage } from "node:http";
import { performance } from "node:perf_hooks";
import { Counter, Gauge } from "prom-client";
import type { Logger } from "pino";
import { createSidecarMetrics, observeTrace, type SidecarMetrics } from "./metrics.js";
import { OtlpExporter, parseTraceparent, spanFromTrace, type OtlpConfig, type SpanSource } from "./otlp-exporter.js";

const PROVIDERS = new Set(["openai", "anthropic", "google", "mistral", "cohere"]);

export interface SidecarOpsOptions {
  log: Logger;
  /** More Prometheus text appended to GET /metrics (the spool, Sync and ingest gauges of sidecar-status.ts). */
  extraMetrics?: () => string;
  /** OTLP export; undefined = off. */
  otlp?: OtlpConfig;
  /** Log prompt and completion text of each trace at debug level (debugging only). */
  logSensitive?: boolean;
}


export interface SidecarOps {
  metrics: SidecarMetrics;
  otlp: OtlpExporter | undefined;
  readonly draining: boolean;
  listener<Res extends ServerResponse>(inner: (req: IncomingMessage, res: Res) => void): (req: IncomingMessage, res: Res) => void;
  traced<T extends SpanSource & Parameters<typeof observeTrace>[1] & { prompt?: string; completion?: string }, A extends unknown[], R>(emit: (t: T, ...rest: A) => R): (t: T, ...rest: A) => R;
  startDraining(): void;
  /** Resolves true once no request is in flight (and their traces were emitted), false at the deadline. */
  settled(timeoutMs: number): Promise<boolean>;
  close(timeoutMs?: number): Promise<void>;
}

function routeOf(url: string): { route: string; provider: string } {
  const q = url.indexOf("?");
  const path = q < 0 ? url : url.slice(0, q);
  if (path.startsWith("/v1/proxy/")) {
    const name = path.slice(10).split("/", 1)[0] ?? "";
    return { route: "proxy", provider: PROVIDERS.has(name) ? name : "other" };
  }
  if (path === "/healthz" || path === "/readyz" || path === "/metrics") return { route: path.slice(1), provider: "" };
  return { route: "other", provider: "" };
}

const nextTick = () => new Promise<void>((r) => setImmediate(r));

export function createSidecarOps(o: SidecarOpsOptions): SidecarOps {
  const metrics = createSidecarMetrics();
  const registers = [metrics.registry];
  const otlp = o.otlp ? new OtlpExporter(o.otlp, (e) => o.log.warn({ err: String(e) }, "OTLP export failed")) : undefined;
  if (otlp) {
    new Gauge({ name: "agentgov_sidecar_otlp_spans_exported", help: "Spans accepted by the OTLP endpoint (since start)", registers, collect() { this.set(otlp.counts.exported); } });
    new Gauge({ name: "agentgov_sidecar_otlp_spans_dropped", help: "Spans dropped (queue full or refused by the endpoint)", registers, collect() { this.set(otlp.counts.dropped); } });
  }
  const scrapes = new Counter({ name: "agentgov_sidecar_metrics_scrapes_total", help: "GET /metrics calls", registers });
  let draining = false;
  let inFlight = 0;
  let idle: (() => void)[] = [];
  /** The caller's W3C trace context per proxied response (OTLP): the span of its trace is its child. */
  const parents = new WeakMap<ServerResponse, { traceId: string; parentSpanId: string }>();
  const extra = (): string => {
    try {
      return o.extraMetrics ? `\n${o.extraMetrics()}` : "";
    } catch (e) {
      o.log.warn({ err: String(e) }, "status metrics failed");
      return "";
    }
  };

  const ops: SidecarOps = {
    metrics,
    otlp,
    get draining() {
      return draining;
    },
    listener(inner) {
      return (req, res) => {
        const url = req.url ?? "/";
        const { route, provider } = routeOf(url);
        const t0 = performance.now();
        inFlight++;
        let done = false;
        const finish = () => {
          if (done) return;
          done = true;
          inFlight--;
          const status = String(res.statusCode);
          metrics.httpRequests.inc(route, provider, status);
          metrics.httpDuration.observe((performance.now() - t0) / 1000, route, provider, status);
          if (inFlight === 0) {
            const waiting = idle;
            idle = [];
            for (const w of waiting) w();
          }
        };
        res.once("close", finish);
        if (draining) res.setHeader("connection", "close");
        if (route === "metrics" && req.method === "GET") {
          scrapes.inc();
          metrics.registry.metrics().then(
            (text) => res.writeHead(200, { "content-type": metrics.registry.contentType }).end(text + extra()),
            (e: unknown) => res.writeHead(500, { "content-type": "text/plain" }).end(String(e)),
          );
          return;
        }
        if (route === "readyz" && draining) {
          res.writeHead(503, { "content-type": "application/json" }).end('{"status":"draining"}');
          return;
        }
        if (otlp && route === "proxy") {
          // Kept beside the response (not by patching its methods: per-instance methods cost the whole
          // process in GC; see trace/response-gate.ts) until its trace is emitted.
          const parent = parseTraceparent(firstHeader(req.headers.traceparent));
          if (parent) parents.set(res, parent);
        }
        inner(req, res);
      };
    },
    traced(emit) {
      return (t, ...rest) => {
        // Spooled first: with the response gate on, the answer's last bytes leave as soon as the trace is
        // written, and the metrics, span and log line below are not worth delaying them for.
        const result = emit(t, ...rest);
        try {
          observeTrace(metrics, t);
          if (otlp) {
            const res = rest[0];
            otlp.add(spanFromTrace(t, res instanceof ServerResponse ? parents.get(res) : undefined));
          }
          // Checked first: the log object is not built (per trace) when debug is off.
          if (o.log.isLevelEnabled("debug")) o.log.debug(
            { requestId: t.requestId, traceId: t.id, agentId: t.agentId, provider: t.provider, model: t.model, status: t.status, httpStatus: t.httpStatus, errorCode: t.errorCode || undefined, latencyMs: Math.round(t.latencyMs * 10) / 10, overheadMs: Math.round(t.overheadMs * 100) / 100 },
            "proxied",
          );
          if (o.logSensitive && o.log.isLevelEnabled("debug")) o.log.debug({ traceId: t.id, prompt: t.prompt, completion: t.completion }, "trace content (LOG_SENSITIVE)");
        } catch (e) {
          o.log.warn({ err: String(e) }, "observing a trace failed");
        }
        return result;
      };
    },
    startDraining() {
      draining = true;
    },
    async settled(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (inFlight > 0) {
        const left = deadline - Date.now();
        if (left <= 0) return false;
        await new Promise<void>((r) => {
          const timer = setTimeout(r, left);
          idle.push(() => {
            clearTimeout(timer);
            r();
          });
        });
      }
      // Traces are emitted right after the answer (on the next turn when the response gate is off).
      await nextTick();
      await nextTick();
      return true;
    },
    async close(timeoutMs = 5000) {
      await otlp?.close(timeoutMs);
    },
  };
  return ops;
}

function firstHeader(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
