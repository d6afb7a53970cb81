// The control plane's Prometheus metrics (one registry per control plane, served at GET /metrics):
// REST requests by route and status, gRPC calls and open streams (Sync connections), Sync messages
// and version, ingest batch sizes and lag, REST rate-limit rejections, plus the process defaults.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface ControlPlaneMetrics {
  registry: Registry;
  httpRequests: Counter<"method" | "route" | "status">;
  httpDuration: Histogram<"method" | "route" | "status">;
  httpRateLimited: Counter<"route">;
  grpcCalls: Counter<"service" | "method" | "code">;
  grpcStreams: Gauge<"service" | "method">;
  syncMessages: Counter<"kind">;
  syncVersion: Gauge;
  ingestUploadBatch: Histogram;
  ingestStoredBatch: Histogram;
  ingestStored: Counter;
  ingestLag: Histogram;
}

export function createControlPlaneMetrics(): ControlPlaneMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    httpRequests: new Counter({ name: "agentgov_http_requests_total", help: "REST requests by method, route template and status", labelNames: ["method", "route", "status"], registers }),
    httpDuration: new Histogram({ name: "agentgov_http_request_duration_seconds", help: "REST request latency by method, route template and status", labelNames: ["method", "route", "status"], buckets: LATENCY_BUCKETS, registers }),
    httpRateLimited: new Counter({ name: "agentgov_http_rate_limited_total", help: "REST requests refused by the per-key rate limit (429)", labelNames: ["route"], registers }),
    grpcCalls: new Counter({ name: "agentgov_grpc_calls_total", help: "gRPC calls ended, by service, method and status code", labelNames: ["service", "method", "code"], registers }),
    grpcStreams: new Gauge({ name: "agentgov_grpc_open_streams", help: "Open gRPC streams (Sync.Watch = connected sidecars; Ingest.Upload)", labelNames: ["service", "method"], registers }),
    syncMessages: new Counter({ name: "agentgov_sync_messages_total", help: "Sync.Watch messages sent, by kind (snapshot, delta, heartbeat)", labelNames: ["kind"], registers }),
    syncVersion: new Gauge({ name: "agentgov_sync_version", help: "Highest Sync version sent to a sidecar", registers }),
    ingestUploadBatch: new Histogram({ name: "agentgov_ingest_upload_batch_traces", help: "Traces per Ingest.Upload batch received from sidecars", buckets: [1, 5, 10, 50, 100, 250, 500, 1000, 5000], registers }),
    ingestStoredBatch: new Histogram({ name: "agentgov_ingest_stored_batch_traces", help: "Traces per trace-store insert (batches of several uploads)", buckets: [1, 5, 10, 50, 100, 250, 500, 1000, 5000, 10000], registers }),
    ingestStored: new Counter({ name: "agentgov_ingest_traces_stored_total", help: "Traces written to the trace store (redeliveries included)", registers }),
    ingestLag: new Histogram({ name: "agentgov_ingest_lag_seconds", help: "From the sidecar receiving a request to its trace being stored", buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800], registers }),
  };
}

/** Wraps ingest's after-insert step to record stored batch sizes and lag (the traces are stored when it runs). */
export function meterStoredTraces<T extends { timestampMs: number | bigint }>(m: ControlPlaneMetrics, after: (traces: T[]) => Promise<void>, now: () => number = Date.now) {
  return async (traces: T[]): Promise<void> => {
    const at = now();
    m.ingestStoredBatch.observe(traces.length);
    m.ingestStored.inc(traces.length);
    for (const t of traces) m.ingestLag.observe(Math.max(0, (at - Number(t.timestampMs)) / 1000));
    await after(traces);
  };
}
