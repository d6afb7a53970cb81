// The OTLP/HTTP JSON exporter against a local receiver: batches, configured headers, a retry after a
// 503 (the spans are kept), a 400 drops the batch, the queue is bounded; env parsing and traceparent.
import test from "ava";
import { createServer } from "node:http";
import { OtlpExporter, otlpConfigFromEnv, parseKeyValueList, parseTraceparent, spanFromTrace, type OtlpSpan } from "./otlp-exporter.js";

async function receiver(statuses: number[]) {
  const bodies: { headers: Record<string, unknown>; spans: OtlpSpan[] }[] = [];
  let i = 0;
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => (raw += c.toString()));
    req.on("end", () => {
      const status = statuses[Math.min(i++, statuses.length - 1)]!;
      const body = JSON.parse(raw) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
      bodies.push({ headers: req.headers, spans: body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)) });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const addr = server.address();
  return { url: `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}/v1/traces`, bodies, close: () => new Promise((r) => server.close(r)) };
}

const trace = (n: number) =>
  spanFromTrace({
    id: `trc_01ARZ3NDEKTSV4RRFFQ69G5F${String(n).padStart(2, "0")}`.slice(0, 30),
    requestId: "r", agentId: "agt_1", agentName: "a", environment: "", provider: "openai", model: "gpt-4o-mini", status: "success", httpStatus: 200, errorCode: "",
    timestampMs: 1_700_000_000_000n, latencyMs: 12.5, providerMs: 10, overheadMs: 2.5, inputTokens: 3, outputTokens: 4, cachedInputTokens: 0, tokensEstimated: false, costUsd: 0.001,
    streamed: false, injectionScore: 0, policiesEvaluated: 0, policiesBlocked: 0, policiesFired: [], piiDetections: [], toolCalls: [],
  });

test("batches spans with the configured headers; keeps them across a 503 and sends them again", async (t) => {
  const r = await receiver([503, 200]);
  const exp = new OtlpExporter({ url: r.url, headers: { "x-key": "k1" }, serviceName: "svc", flushIntervalMs: 10 });
  for (let i = 0; i < 3; i++) exp.add(trace(i));
  await exp.flush();
  t.is(r.bodies.length, 1);
  t.is(exp.counts.exported, 0);
  await exp.close(2000);
  t.is(r.bodies.length, 2);
  t.is(r.bodies[1]!.spans.length, 3);
  t.is(r.bodies[1]!.headers["x-key"], "k1");
  t.deepEqual(exp.counts, { exported: 3, dropped: 0, failedRequests: 1 });
  await r.close();
});

test("a 400 drops the batch; a full queue drops the oldest spans", async (t) => {
  const r = await receiver([400]);
  const exp = new OtlpExporter({ url: r.url, headers: {}, serviceName: "svc", maxQueue: 2, flushIntervalMs: 60_000 });
  for (let i = 0; i < 5; i++) exp.add(trace(i));
  await exp.close(2000);
  t.is(r.bodies.length, 1);
  t.is(r.bodies[0]!.spans.length, 2);
  t.is(exp.counts.dropped, 5);
  await r.close();
});

test("configuration from the environment: off without an endpoint, the signal URL wins, headers decoded", (t) => {
  const base = { OTEL_SERVICE_NAME: "s", OTEL_SDK_DISABLED: false };
  t.is(otlpConfigFromEnv(base), undefined);
  t.is(otlpConfigFromEnv({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/" })?.url, "http://c:4318/v1/traces");
  t.is(otlpConfigFromEnv({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://t:1/x" })?.url, "http://t:1/x");
  t.is(otlpConfigFromEnv({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: true }), undefined);
  t.deepEqual(parseKeyValueList("a=1, b=x%20y,bad,c=d=e"), { a: "1", b: "x y", c: "d=e" });
});

test("traceparent: version 00 only, all-zero ids refused", (t) => {
  t.deepEqual(parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"), { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", parentSpanId: "00f067aa0ba902b7" });
  t.is(parseTraceparent("00-00000000000000000000000000000000-00f067aa0ba902b7-01"), undefined);
  t.is(parseTraceparent("zz-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"), undefined);
  t.is(parseTraceparent(undefined), undefined);
});
