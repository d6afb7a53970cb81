// The sidecar's operational surface: metrics, OTLP export, logger, graceful-shutdown helpers.
export { createSidecarOps, type SidecarOps, type SidecarOpsOptions } from "./sidecar-ops.js";
export { createSidecarMetrics, observeTrace, type SidecarMetrics } from "./metrics.js";
export { OtlpExporter, spanFromTrace, otlpConfigFromEnv, otlpTracesUrl, parseTraceparent, ulidToHex, parseKeyValueList, type OtlpConfig, type OtlpSpan } from "./otlp-exporter.js";
export { createServiceLogger, CREDENTIAL_PATHS, CONTENT_PATHS, type LoggerOptions } from "./logger.js";
export { closeHttpServer } from "./close-http-server.js";
