// The sidecar's configuration (DESIGN.md §2), validated once at start.
import { fileURLToPath } from "node:url";
import { z } from "zod";

/**
 * DATA_DIR when unset: `.data` in the project's directory (the one above bin/agentgov.js), whatever the
 * current directory, as the control plane's default (`agentgov start` shares it). A DATA_DIR that is
 * set is taken as given (a relative one is relative to the current directory); the image sets /data.
 */
export const DEFAULT_DATA_DIR = fileURLToPath(new URL("../../../.data", import.meta.url));

const bool = z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");

/** An http(s) URL: the only schemes the sidecar speaks (others failed on every call, not at start). */
// (zod 4 runs the refine after a failed .url() too: a string that is no URL must not throw there.)
const httpUrl = z.string().url().refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), "must be an http or https URL");

/**
 * A whole number in decimal digits, spaces around allowed ("8181", " 8181 "): "0x50", "1e3", "80px",
 * "2.5" are refused with the variable named (z.coerce.number() read the first two as 80 and 1000).
 * Blank values never get here: they count as unset (loadSidecarConfig), so the default applies.
 */
const int = (bounds: (n: z.ZodNumber) => z.ZodNumber = (n) => n) =>
  z.preprocess((v) => (typeof v === "string" && /^\s*-?\d+\s*$/.test(v) ? Number(v) : v), bounds(z.number({ error: "must be a whole number" }).int()));

export const SidecarEnvSchema = z.object({
  DATA_DIR: z.string().min(1).default(DEFAULT_DATA_DIR),
  SIDECAR_PORT: int((n) => n.min(0).max(65535)).default(8181),
  SIDECAR_HOST: z.string().default("127.0.0.1"),
  CONTROL_PLANE_GRPC_URL: httpUrl.default("http://127.0.0.1:8090"),
  SIDECAR_KEY: z.string().regex(/^svc_(ingest|api)_[A-Za-z0-9]{32,}$/, "must be an svc_ingest_ or svc_api_ key"),
  TRACE_STORE_RAW_PII: bool.default(false),
  UPSTREAM_TIMEOUT_MS: int((n) => n.positive()).default(600_000),
  UPSTREAM_CONNECT_TIMEOUT_MS: int((n) => n.positive()).default(10_000),
  UPSTREAM_CONNECTIONS: int((n) => n.positive()).default(256),
  /** Streams: an SSE comment (": keep-alive") is sent to the client after this many ms without a byte from the provider, between events only; 0 = never. */
  SSE_KEEPALIVE_MS: int((n) => n.min(0)).default(15_000),
  /**
   * OpenAI chat streams that do not ask for usage (`stream_options.include_usage`): `pass` forwards the
   * body as it came and counts the tokens locally (flagged estimated; a reasoning model's hidden
   * reasoning tokens are not in that count); `add` asks the provider for the usage and takes what that
   * adds out of the client's stream, so traces and budgets get the provider's figures; `budgeted` does
   * so for the agents with a daily budget only (the budget is a policy that needs the real figure).
   */
  OPENAI_STREAM_USAGE: z.enum(["pass", "budgeted", "add"]).default("budgeted"),
  PROVIDER_OPENAI_URL: httpUrl.default("https://api.openai.com"),
  PROVIDER_ANTHROPIC_URL: httpUrl.default("https://api.anthropic.com"),
  PROVIDER_GOOGLE_URL: httpUrl.default("https://generativelanguage.googleapis.com"),
  PROVIDER_MISTRAL_URL: httpUrl.default("https://api.mistral.ai"),
  PROVIDER_COHERE_URL: httpUrl.default("https://api.cohere.com"),
  /** Trace spool size cap in bytes; when full the oldest unacknowledged traces are dropped (counted, logged). */
  SPOOL_MAX_BYTES: int((n) => n.min(1024 * 1024)).default(1024 * 1024 * 1024),
  /** How long a response's last bytes may wait for its trace (SPOOL_GATE); 0 = do not wait. */
  SPOOL_COMMIT_WAIT_MS: int((n) => n.min(0).max(60_000)).default(1000),
  /**
   * What a response's last bytes wait for: `write` — the trace is written to the OS (a crash of the
   * sidecar cannot lose it) — or `fsync` — its group commit's fdatasync returned (a crash of the
   * machine cannot either; adds the disk's sync latency to every answer).
   */
  SPOOL_GATE: z.enum(["write", "fsync"]).default("write"),
  /**
   * Least time between two fdatasyncs of the spool (group commit window); bounds what a machine crash
   * can lose with SPOOL_GATE=write. Default: 100 ms with SPOOL_GATE=write, 10 ms with fsync (answers
   * wait for the sync there). See DEFAULT_FSYNC_INTERVAL_MS.
   */
  SPOOL_FSYNC_INTERVAL_MS: int((n) => n.min(0).max(1000)).optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /** Debugging only: log each trace's prompt and completion text at debug level (never on by default). */
  LOG_SENSITIVE: bool.default(false),
  /** Graceful shutdown: how long to keep serving after SIGTERM with /readyz failing (load balancers catch up). */
  SHUTDOWN_DRAIN_MS: int((n) => n.min(0)).default(0),
  /** Graceful shutdown: the most time in-flight requests (streams included) get before connections are cut. */
  SHUTDOWN_TIMEOUT_MS: int((n) => n.positive()).default(25_000),
  /** OpenTelemetry export of one span per proxied request: off unless an endpoint is set (OTLP/HTTP JSON). */
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl.optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: httpUrl.optional(),
  OTEL_EXPORTER_OTLP_HEADERS: z.string().optional(),
  OTEL_SERVICE_NAME: z.string().min(1).default("agentgov-sidecar"),
  OTEL_RESOURCE_ATTRIBUTES: z.string().optional(),
  OTEL_SDK_DISABLED: bool.default(false),
});

/**
 * SPOOL_FSYNC_INTERVAL_MS when unset, by SPOOL_GATE. With `write` nothing waits for the sync, and each
 * fdatasync costs the sidecar CPU (at 1,000 rps with 8 KB prompts, syncing every 10 ms instead of
 * every 100 ms cost ~80 µs more CPU per request, ~12 %; docs/decisions.md); a power loss can lose at
 * most the window, 100 ms. With `fsync` every answer waits for its group commit, so the window stays short.
 */
export const DEFAULT_FSYNC_INTERVAL_MS = { write: 100, fsync: 10 } as const;

export type SidecarConfig = Omit<z.infer<typeof SidecarEnvSchema>, "SPOOL_FSYNC_INTERVAL_MS"> & { SPOOL_FSYNC_INTERVAL_MS: number };

export function loadSidecarConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<SidecarConfig> = {}): SidecarConfig {
  // Empty or blank values count as unset (PORT=" " used to read as 0, i.e. a random port).
  const cleaned = Object.fromEntries(Object.entries({ ...env, ...overrides }).filter(([, v]) => v !== undefined && !(typeof v === "string" && v.trim() === "")));
  const parsed = SidecarEnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    throw new Error(`invalid sidecar configuration:\n  ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("\n  ")}`);
  }
  const c = parsed.data;
  return { ...c, SPOOL_FSYNC_INTERVAL_MS: c.SPOOL_FSYNC_INTERVAL_MS ?? DEFAULT_FSYNC_INTERVAL_MS[c.SPOOL_GATE] };
}

export function providerBaseUrls(c: SidecarConfig): Record<string, string> {
  return {
    openai: c.PROVIDER_OPENAI_URL,
    anthropic: c.PROVIDER_ANTHROPIC_URL,
    google: c.PROVIDER_GOOGLE_URL,
    mistral: c.PROVIDER_MISTRAL_URL,
    cohere: c.PROVIDER_COHERE_URL,
  };
}
