// Operational state of one control plane: its metrics registry and its lifecycle (draining flag).
import { createControlPlaneMetrics, type ControlPlaneMetrics } from "./metrics.js";
import { Lifecycle } from "./lifecycle.js";

export interface ControlPlaneOps {
  metrics: ControlPlaneMetrics;
  lifecycle: Lifecycle;
}

export function createControlPlaneOps(): ControlPlaneOps {
  return { metrics: createControlPlaneMetrics(), lifecycle: new Lifecycle() };
}

export { createControlPlaneMetrics, meterStoredTraces, type ControlPlaneMetrics } from "./metrics.js";
export { Lifecycle, type Readiness } from "./lifecycle.js";
export { httpMetrics, routeMatcher } from "./http-metrics.js";
export { grpcMetricsInterceptor } from "./grpc-metrics.js";
export { healthHandlers, HEALTH_SERVICES } from "./grpc-health.js";
export { createServiceLogger } from "./logger.js";
export { closeHttpServer } from "./close-http-server.js";
