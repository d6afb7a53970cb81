// Optional OpenTelemetry export (off unless an OTLP endpoint is configured): one span per proxied
// request with the GenAI semantic-convention attributes, sent as OTLP/HTTP JSON in batches. No prompt
// or completion text is ever exported. A caller's W3C `traceparent` makes the span its child;
// otherwise the span's trace id is the agentgov trace id's 128 bits (a ULID), so the two correlate.
import { randomBytes } from "node:crypto";

export interface OtlpConfig {
  /** Full URL of the traces endpoint (…/v1/traces). */
  url: string;
  headers: Record<string, string>;
  serviceName: string;
  serviceVersion?: string;
  /** Extra resource attributes (e.g. from OTEL_RESOURCE_ATTRIBUTES). */
  resource?: Record<string, string>;
  maxQueue?: number;
  maxBatch?: number;
  flushIntervalMs?: number;
  timeoutMs?: number;
}

export interface SpanCounts {
  exported: number;
  dropped: number;
  failedRequests: number;
}

type AttrValue = { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean };
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: { key: string; value: AttrValue }[];
  status: { code: number; message?: string };
}

/** What a trace must tell about its request (a subset of the Trace message). */
export interface SpanSource {
  id: string;
  requestId: string;
  agentId: string;
  agentName: string;
  environment: string;
  sessionId?: string;
  provider: string;
  model: string;
  status: string;
  httpStatus: number;
  errorCode: string;
  timestampMs: bigint;
  latencyMs: number;
  providerMs: number;
  overheadMs: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  tokensEstimated: boolean;
  costUsd: number;
  streamed: boolean;
  injectionScore: number;
  policiesEvaluated: number;
  policiesBlocked: number;
  policiesFired: readonly string[];
  piiDetections: readonly unknown[];
  toolCalls: readonly unknown[];
}

/** gen_ai.provider.name values of the semantic conventions. */
const GEN_AI_PROVIDER: Record<string, string> = { openai: "openai", anthropic: "anthropic", google: "gcp.gemini", mistral: "mistral_ai", cohere: "cohere" };

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** The 128 bits of a ULID (`trc_01J…` or bare) as 32 lowercase hex digits; undefined if not a ULID. */
export function ulidToHex(id: string): string | undefined {
  const ulid = id.replace(/^[a-z]+_/, "");
  if (!/^[0-7][0-9A-HJKMNP-TV-Z]{25}$/.test(ulid)) return undefined;
  let n = 0n;
  for (const ch of ulid) n = (n << 5n) | BigInt(CROCKFORD.indexOf(ch));
  return n.toString(16).padStart(32, "0");
}

/** Parses a W3C traceparent header (version 00). */
export function parseTraceparent(value: string | undefined): { traceId: string; parentSpanId: string } | undefined {
  const m = value ? /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/.exec(value.trim()) : null;
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) return undefined;
  return { traceId: m[1]!, parentSpanId: m[2]! };
}

const str = (key: string, v: string) => ({ key, value: { stringValue: v } });
const int = (key: string, v: number) => ({ key, value: { intValue: String(Math.round(v)) } });
const dbl = (key: string, v: number) => ({ key, value: { doubleValue: v } });
const bool = (key: string, v: boolean) => ({ key, value: { boolValue: v } });

export function spanFromTrace(t: SpanSource, parent?: { traceId: string; parentSpanId: string }): OtlpSpan {
  const startNs = t.timestampMs * 1_000_000n;
  const endNs = startNs + BigInt(Math.max(0, Math.round(t.latencyMs * 1e6)));
  const provider = GEN_AI_PROVIDER[t.provider] ?? t.provider;
  const attributes = [
    str("gen_ai.operation.name", "chat"),
    str("gen_ai.provider.name", provider),
    str("gen_ai.system", provider),
    str("gen_ai.request.model", t.model),
    int("gen_ai.usage.input_tokens", t.inputTokens),
    int("gen_ai.usage.output_tokens", t.outputTokens),
    int("http.response.status_code", t.httpStatus),
    str("agentgov.trace_id", t.id),
    str("agentgov.request_id", t.requestId),
    str("agentgov.agent.id", t.agentId),
    str("agentgov.agent.name", t.agentName),
    str("agentgov.status", t.status),
    dbl("agentgov.cost_usd", t.costUsd),
    dbl("agentgov.overhead_ms", t.overheadMs),
    dbl("agentgov.provider_ms", t.providerMs),
    bool("agentgov.streamed", t.streamed),
    bool("agentgov.tokens_estimated", t.tokensEstimated),
    dbl("agentgov.injection_score", t.injectionScore),
    int("agentgov.policies.evaluated", t.policiesEvaluated),
    int("agentgov.policies.blocked", t.policiesBlocked),
    int("agentgov.pii.findings", t.piiDetections.length),
    int("agentgov.tool_calls", t.toolCalls.length),
  ];
  if (t.environment) attributes.push(str("deployment.environment.name", t.environment));
  if (t.sessionId) attributes.push(str("gen_ai.conversation.id", t.sessionId));
  if (t.cachedInputTokens > 0) attributes.push(int("gen_ai.usage.cache_read.input_tokens", t.cachedInputTokens));
  if (t.policiesFired.length > 0) attributes.push(str("agentgov.policies.fired", t.policiesFired.join(",")));
  const failed = t.status !== "success";
  if (failed) attributes.push(str("error.type", t.errorCode || (t.httpStatus ? String(t.httpStatus) : "_OTHER")));
  return {
    traceId: parent?.traceId ?? ulidToHex(t.id) ?? randomBytes(16).toString("hex"),
    spanId: randomBytes(8).toString("hex"),
    ...(parent ? { parentSpanId: parent.parentSpanId } : {}),
    name: t.model ? `chat ${t.model}` : "chat",
    kind: 3, // SPAN_KIND_CLIENT: the sidecar calls the provider for the agent
    startTimeUnixNano: startNs.toString(),
    endTimeUnixNano: endNs.toString(),
    attributes,
    status: failed ? { code: 2, message: t.errorCode || t.status } : { code: 0 },
  };
}

/** Batches spans and POSTs them as OTLP/HTTP JSON; bounded memory, never blocks the proxy. */
export class OtlpExporter {
  private queue: OtlpSpan[] = [];
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> = Promise.resolve();
  readonly counts: SpanCounts = { exported: 0, dropped: 0, failedRequests: 0 };
  private readonly maxQueue: number;
  private readonly maxBatch: number;
  private readonly resource: { key: string; value: AttrValue }[];

  constructor(private readonly cfg: OtlpConfig, private readonly onError: (e: unknown) => void = () => undefined) {
    this.maxQueue = cfg.maxQueue ?? 4096;
    this.maxBatch = cfg.maxBatch ?? 512;
    this.resource = [str("service.name", cfg.serviceName), str("telemetry.sdk.name", "agentgov"), str("telemetry.sdk.language", "nodejs")];
    if (cfg.serviceVersion) this.resource.push(str("service.version", cfg.serviceVersion));
    for (const [k, v] of Object.entries(cfg.resource ?? {})) if (k !== "service.name") this.resource.push(str(k, v));
  }

  add(span: OtlpSpan): void {
    if (this.queue.length >= this.maxQueue) {
      this.queue.shift();
      this.counts.dropped++;
    }
    this.queue.push(span);
    if (this.queue.length >= this.maxBatch) this.flushSoon(0);
    else this.flushSoon(this.cfg.flushIntervalMs ?? 1000);
  }

  private flushSoon(ms: number): void {
    if (ms === 0 && this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, ms);
    this.timer.unref();
  }

  /** Sends everything queued (one request per batch); resolves when done or failed. */
  flush(): Promise<void> {
    this.sending = this.sending.then(async () => {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        if (!(await this.send(batch))) {
          // Keep the spans for the next attempt, within the bound.
          this.queue = [...batch, ...this.queue].slice(0, this.maxQueue);
          this.flushSoon(5000);
          return;
        }
      }
    });
    return this.sending;
  }

  private async send(spans: OtlpSpan[]): Promise<boolean> {
    const body = JSON.stringify({
      resourceSpans: [{ resource: { attributes: this.resource }, scopeSpans: [{ scope: { name: "agentgov.sidecar", version: this.cfg.serviceVersion ?? "" }, spans }] }],
    });
    try {
      const res = await fetch(this.cfg.url, {
        method: "POST",
        headers: { ...this.cfg.headers, "content-type": "application/json" },
        body,
        signal: AbortSignal.timeout(this.cfg.timeoutMs ?? 10_000),
      });
      await res.arrayBuffer().catch(() => undefined);
      if (res.ok) {
        this.counts.exported += spans.length;
        return true;
      }
      this.counts.failedRequests++;
      // 4xx other than 429 will not get better by retrying: drop the batch.
      if (res.status >= 400 && res.status < 500 && res.status !== 429) {
        this.counts.dropped += spans.length;
        this.onError(new Error(`OTLP endpoint answered ${res.status}; ${spans.length} spans dropped`));
        return true;
      }
      this.onError(new Error(`OTLP endpoint answered ${res.status}`));
      return false;
    } catch (e) {
      this.counts.failedRequests++;
      this.onError(e);
      return false;
    }
  }

  /** Final flush on shutdown, bounded by timeoutMs. */
  async close(timeoutMs = 5000): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.race([this.flush(), new Promise((r) => setTimeout(r, timeoutMs).unref())]);
  }
}

/** Parses OTEL_EXPORTER_OTLP_HEADERS / OTEL_RESOURCE_ATTRIBUTES ("k=v,k2=v2", values URL-encoded). */
export function parseKeyValueList(s: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (s ?? "").split(",")) {
    const eq = part.indexOf("=");
    if (eq <= 0) continue;
    const k = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    try {
      out[k] = decodeURIComponent(v);
    } catch {
      out[k] = v;
    }
  }
  return out;
}

/** The traces URL per the OTLP exporter spec: the signal-specific variable as-is, else base + /v1/traces. */
export function otlpTracesUrl(env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string; OTEL_EXPORTER_OTLP_ENDPOINT?: string }): string | undefined {
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT) return `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, "")}/v1/traces`;
  return undefined;
}

/** The exporter configuration from the sidecar's environment; undefined when export is off. */
export function otlpConfigFromEnv(c: {
  OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string | undefined;
  OTEL_EXPORTER_OTLP_HEADERS?: string | undefined;
  OTEL_SERVICE_NAME: string;
  OTEL_RESOURCE_ATTRIBUTES?: string | undefined;
  OTEL_SDK_DISABLED: boolean;
}): OtlpConfig | undefined {
  const url = otlpTracesUrl({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: c.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT: c.OTEL_EXPORTER_OTLP_ENDPOINT });
  if (!url || c.OTEL_SDK_DISABLED) return undefined;
  return { url, headers: parseKeyValueList(c.OTEL_EXPORTER_OTLP_HEADERS), serviceName: c.OTEL_SERVICE_NAME, resource: parseKeyValueList(c.OTEL_RESOURCE_ATTRIBUTES) };
}
