// The control plane's configuration: one validated schema over the environment (DESIGN.md §2).
import { fileURLToPath } from "node:url";
import { z } from "zod";

/**
 * DATA_DIR when unset: `.data` in the project's directory (the one above bin/agentgov.js, where `npm
 * start` runs), not in the current directory: a CLI command run from a subdirectory (`cd sdk && npx
 * agentgov tenants create …`) used to start a fresh embedded Postgres there. A DATA_DIR that is set is
 * taken as given (a relative one is relative to the current directory). The sidecar's default is the same.
 */
export const DEFAULT_DATA_DIR = fileURLToPath(new URL("../../../.data", import.meta.url));

const bool = z
  .enum(["true", "false", "1", "0", ""])
  .transform((v) => v === "true" || v === "1");

/**
 * A whole number in decimal digits, spaces around allowed ("8080", " 8080 "): "0x50", "1e3", "80px",
 * "2.5" are refused with the variable named (z.coerce.number() read the first two as 80 and 1000).
 * Blank values never get here: they count as unset (loadControlPlaneConfig), so the default applies.
 */
const int = (bounds: (n: z.ZodNumber) => z.ZodNumber = (n) => n) =>
  z.preprocess((v) => (typeof v === "string" && /^\s*-?\d+\s*$/.test(v) ? Number(v) : v), bounds(z.number({ error: "must be a whole number" }).int()));

const port = int((n) => n.min(0).max(65535));

/** The URL's protocol, or "" when it is no URL (zod 4 runs a refine after a failed .url() too). */
const protocolOf = (u: string): string => (URL.canParse(u) ? new URL(u).protocol : "");

/** A URL with one of `schemes` (the protocols the programs can use), e.g. ["http:", "https:"]. */
const urlWith = (...schemes: string[]) =>
  z.string().url().refine((u) => schemes.includes(protocolOf(u)), `must be a ${schemes.map((x) => x.slice(0, -1)).join(" or ")} URL`);

export const EnvSchema = z.object({
  DATA_DIR: z.string().min(1).default(DEFAULT_DATA_DIR),
  DATABASE_URL: urlWith("postgres:", "postgresql:").optional(),
  CLICKHOUSE_URL: urlWith("http:", "https:").optional(),
  CLICKHOUSE_USER: z.string().optional(),
  CLICKHOUSE_PASSWORD: z.string().optional(),
  CLICKHOUSE_DATABASE: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/).default("agentgov"),
  PORT: port.default(8080),
  GRPC_PORT: port.default(8090),
  HOST: z.string().default("127.0.0.1"),
  IDP_WEBHOOK_SECRET: z.string().min(1).optional(),
  BOOTSTRAP_API_KEY: z.string().regex(/^svc_api_[A-Za-z0-9]{32,}$/, "must be svc_api_ followed by at least 32 base62 characters").optional(),
  BOOTSTRAP_TENANT: z.string().min(1).max(100).default("default"),
  BOOTSTRAP_IDP_ORG_ID: z.string().min(1).default("org_default"),
  // Any address the organisation uses (admin@localhost, ops@corp): zod's .email() refuses single-label domains.
  BOOTSTRAP_ADMIN_EMAIL: z.string().trim().min(3).max(320).regex(/^[^\s@]+@[^\s@]+$/, "must be an e-mail address (local@domain)").default("admin@localhost"),
  API_RATE_LIMIT_PER_MINUTE: int((n) => n.positive()).default(1200),
  // At most 20,000 days (~55 years): ClickHouse DateTime ends in 2106, and a TTL past it wraps into the
  // past, which would expire every trace at once.
  TRACE_RETENTION_DAYS: int((n) => n.positive().max(20_000)).default(30),
  TRACE_STORE_RAW_PII: bool.default(false),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /** Graceful shutdown: how long to keep serving after SIGTERM with readiness failing (load balancers catch up). */
  SHUTDOWN_DRAIN_MS: int((n) => n.min(0)).default(0),
  /** Graceful shutdown: the most time in-flight requests get to finish before connections are cut. */
  SHUTDOWN_TIMEOUT_MS: int((n) => n.positive()).default(25_000),
});

export type ControlPlaneConfig = z.infer<typeof EnvSchema>;

/** Reads the configuration; empty or blank variables count as unset. Throws a readable error on bad values. */
export function loadControlPlaneConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<ControlPlaneConfig> = {}): ControlPlaneConfig {
  // (PORT=" " used to read as 0, i.e. a random port.)
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ""));
  const parsed = EnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new Error(`invalid configuration:\n  ${lines.join("\n  ")}`);
  }
  return { ...parsed.data, ...overrides };
}
