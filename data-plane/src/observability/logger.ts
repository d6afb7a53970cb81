// Structured JSON logs (pino, on stderr) with redaction: credentials and prompt/completion text are
// censored wherever they would appear under these keys, as a safety net behind the rule that code
// never logs them. LOG_SENSITIVE=true (debugging only) lifts the redaction of prompt and completion
// text; credentials stay redacted always.
import pino, { type DestinationStream, type Logger } from "pino";

export const CREDENTIAL_PATHS = [
  "authorization", "*.authorization", "headers.authorization", "*.headers.authorization", "req.headers.authorization",
  '*.headers["x-service-key"]', '*.headers["x-api-key"]', '*.headers["x-goog-api-key"]', '*.headers["cookie"]',
  '["x-service-key"]', '*["x-service-key"]', '["x-api-key"]', '*["x-api-key"]', '["x-goog-api-key"]', '*["x-goog-api-key"]',
  "apiKey", "*.apiKey", "key", "*.key", "token", "*.token", "secret", "*.secret", "password", "*.password",
  "sidecarKey", "*.sidecarKey", "SIDECAR_KEY", "*.SIDECAR_KEY", "BOOTSTRAP_API_KEY", "*.BOOTSTRAP_API_KEY",
  "IDP_WEBHOOK_SECRET", "*.IDP_WEBHOOK_SECRET", "CLICKHOUSE_PASSWORD", "*.CLICKHOUSE_PASSWORD", "DATABASE_URL", "*.DATABASE_URL",
];

export const CONTENT_PATHS = [
  "prompt", "*.prompt", "completion", "*.completion", "messages", "*.messages", "contents", "*.contents",
  "input", "*.input", "body", "*.body", "text", "*.text",
  "inputExtras", "*.inputExtras", "input_extras", "*.input_extras",
];

export interface LoggerOptions {
  service: string;
  level: string;
  /** Lift the redaction of prompt/completion text (debugging only). */
  logSensitive?: boolean;
  /** Where lines go (default: stderr). */
  destination?: DestinationStream;
}

export function createServiceLogger(o: LoggerOptions): Logger {
  const paths = o.logSensitive ? CREDENTIAL_PATHS : [...CREDENTIAL_PATHS, ...CONTENT_PATHS];
  return pino(
    { level: o.level, base: { service: o.service }, redact: { paths, censor: "[redacted]" }, timestamp: pino.stdTimeFunctions.isoTime },
    o.destination ?? pino.destination(2),
  );
}
