// Optional OpenTelemetry export: off by default; with OTEL_EXPORTER_OTLP_ENDPOINT set, one span per
// proxied request reaches an OTLP/HTTP JSON receiver (written here) with the GenAI semantic-convention
// attributes, the configured headers, the caller's traceparent as parent, and no prompt text.
import test from "ava";
import { createServer, type Server } from "node:http";
import { startStack, eventually, type Stack } from "../harness/stack.js";
import { startFakeProviders, type FakeProviders } from "../fakes/providers/index.js";
import { ulidToHex } from "../../data-plane/src/observability/otlp-exporter.js";
import type { Sidecar } from "@agentgov/data-plane";

interface Attr {
  key: string;
  value: { stringValue?: string; intValue?: string; doubleValue?: number; boolValue?: boolean };
}
interface Span {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Attr[];
  status: { code: number; message?: string };
}
interface Export {
  headers: Record<string, string | string[] | undefined>;
  path: string;
  raw: string;
  body: { resourceSpans: { resource: { attributes: Attr[] }; scopeSpans: { scope: { name: string }; spans: Span[] }[] }[] };
}

let stack: Stack;
let fakes: FakeProviders;
let receiver: Server;
let receiverUrl: string;
const exports: Export[] = [];
let agentId: string;

test.before(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      exports.push({ headers: req.headers, path: req.url ?? "", raw, body: JSON.parse(raw) as Export["body"] });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const addr = receiver.address();
  receiverUrl = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`;
  fakes = await startFakeProviders();
  stack = await startStack();
  const a = await stack.api.post<{ data: { id: string } }>("/api/agents", { name: "otel-agent", modelProvider: "openai", modelName: "gpt-4o-mini", environment: "staging" });
  agentId = a.body.data.id;
});
test.after.always(async () => {
  await stack?.stop();
  await fakes?.close();
  await new Promise((r) => receiver?.close(r));
});

function chat(sc: Sidecar, content: string, headers: Record<string, string> = {}) {
  return fetch(`${sc.url}/v1/proxy/openai/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-provider", "x-service-key": stack.adminKey, "x-service-agent": agentId, ...headers },
    body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content }] }),
  });
}

const attr = (s: Span, key: string) => s.attributes.find((a) => a.key === key)?.value;

test.serial("off by default: a sidecar without an OTLP endpoint exports nothing", async (t) => {
  const sc = await stack.sidecar({ PROVIDER_OPENAI_URL: fakes.urls.openai });
  t.is(sc.ops.otlp, undefined);
  fakes.script({ text: "ok" });
  t.is((await chat(sc, "hello")).status, 200);
  await new Promise((r) => setTimeout(r, 1500));
  t.is(exports.length, 0);
});

test.serial("one span per proxied request, GenAI attributes, parent from traceparent, no prompt text", async (t) => {
  const sc = await stack.sidecar({
    PROVIDER_OPENAI_URL: fakes.urls.openai,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl,
    OTEL_EXPORTER_OTLP_HEADERS: "x-otlp-tenant=acme,authorization=Bearer%20otel-token",
    OTEL_SERVICE_NAME: "sidecar-under-test",
    OTEL_RESOURCE_ATTRIBUTES: "deployment.region=eu-west-1",
  });
  fakes.script({ text: "The capital is Paris.", usage: { inputTokens: 17, outputTokens: 5 } });
  const parentTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
  const parentSpan = "00f067aa0ba902b7";
  const first = await chat(sc, "SECRET-PROMPT-MARKER what is the capital of France?", { traceparent: `00-${parentTrace}-${parentSpan}-01`, "x-service-session": "sess-42" });
  t.is(first.status, 200);
  const firstId = first.headers.get("x-service-trace-id")!;
  fakes.script({ error: { status: 500, message: "upstream broke" } });
  const second = await chat(sc, "again");
  t.is(second.status, 500);
  const secondId = second.headers.get("x-service-trace-id")!;

  const spans = await eventually(async () => {
    const all = exports.flatMap((e) => e.body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));
    return all.length >= 2 ? all : undefined;
  });
  t.is(spans.length, 2, "exactly one span per request");
  const e = exports[0]!;
  t.is(e.path, "/v1/traces");
  t.regex(String(e.headers["content-type"]), /application\/json/);
  t.is(e.headers["x-otlp-tenant"], "acme");
  t.is(e.headers.authorization, "Bearer otel-token");
  const resource = e.body.resourceSpans[0]!.resource.attributes;
  t.is(resource.find((a) => a.key === "service.name")?.value.stringValue, "sidecar-under-test");
  t.is(resource.find((a) => a.key === "deployment.region")?.value.stringValue, "eu-west-1");
  t.false(exports.some((x) => x.raw.includes("SECRET-PROMPT-MARKER") || x.raw.includes("Paris")), "no prompt or completion text is exported");

  const a = spans.find((s) => attr(s, "agentgov.trace_id")?.stringValue === firstId)!;
  t.truthy(a);
  t.is(a.traceId, parentTrace);
  t.is(a.parentSpanId, parentSpan);
  t.regex(a.spanId, /^[0-9a-f]{16}$/);
  t.is(a.name, "chat gpt-4o-mini");
  t.is(a.kind, 3);
  t.is(a.status.code, 0);
  t.true(BigInt(a.endTimeUnixNano) > BigInt(a.startTimeUnixNano));
  t.is(attr(a, "gen_ai.operation.name")?.stringValue, "chat");
  t.is(attr(a, "gen_ai.provider.name")?.stringValue, "openai");
  t.is(attr(a, "gen_ai.request.model")?.stringValue, "gpt-4o-mini");
  t.is(attr(a, "gen_ai.usage.input_tokens")?.intValue, "17");
  t.is(attr(a, "gen_ai.usage.output_tokens")?.intValue, "5");
  t.is(attr(a, "gen_ai.conversation.id")?.stringValue, "sess-42");
  t.is(attr(a, "agentgov.agent.id")?.stringValue, agentId);
  t.is(attr(a, "deployment.environment.name")?.stringValue, "staging");
  t.is(attr(a, "http.response.status_code")?.intValue, "200");
  t.true((attr(a, "agentgov.cost_usd")?.doubleValue ?? 0) > 0);

  const b = spans.find((s) => attr(s, "agentgov.trace_id")?.stringValue === secondId)!;
  t.truthy(b);
  t.is(b.traceId, ulidToHex(secondId) ?? "(not a ULID)", "without traceparent the span's trace id is the agentgov trace id");
  t.is(b.parentSpanId, undefined);
  t.is(b.status.code, 2);
  t.is(attr(b, "error.type")?.stringValue, "upstream_500");
  t.is(attr(b, "http.response.status_code")?.intValue, "500");
});

test("ulidToHex maps the 128 bits of a ULID", (t) => {
  t.is(ulidToHex("trc_00000000000000000000000000"), "0".repeat(32));
  t.is(ulidToHex("7ZZZZZZZZZZZZZZZZZZZZZZZZZ"), "f".repeat(32));
  t.is(ulidToHex("01ARZ3NDEKTSV4RRFFQ69G5FAV"), "01563e3ab5d3d6764c61efb99302bd5b");
  t.is(ulidToHex("not-a-ulid"), undefined);
});
