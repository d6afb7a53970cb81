// PII found in the input outside the prompt (a tool's definition) is on the stored trace, end to end
// through a real sidecar, control plane and trace store: an OpenAI chat call blocked by a policy for the
// SSN in a tool's description, and an Anthropic call (no policy) with a card number in a tool's
// input_schema. Each trace's detail (both REST groups) lists the finding with source tool_definition,
// its offsets select the masked value in input_extras, the summary says pii_detected, and the
// compliance report counts it under its source.
import test, { type ExecutionContext } from "ava";
import { startProxyWorld, type ProxyWorld } from "./proxy-helpers.js";
import { chatRequest, createPolicy, traceIdOf, type Answer } from "./policy-helpers.js";
import type { FakeProviderName } from "../fakes/providers/index.js";

// An SSN the recognizer accepts (123-45-6789 is a known sample number, rejected) and a test card number.
const SSN = "234-56-7891";
const CARD = "4111 1111 1111 1111";

let w: ProxyWorld;
test.before(async () => {
  w = await startProxyWorld();
});
test.after.always(async () => {
  await w?.stop();
});

interface DetectionA { entity_type: string; start: number; end: number; source: string; score: number }
interface DetailA { id: string; status: string; pii_detected: boolean; prompt: string; input_extras: string; pii_detections: DetectionA[] }
interface DetectionB { entityType: string; start: number; end: number; source: string; score: number }
interface DetailB { id: string; piiDetected: DetectionB[]; inputExtras: string }
interface SummaryA { id: string; pii_detected: boolean }

/** A chat call of `provider` with "Hello" as the prompt and `tools` beside it, through the sidecar. */
async function callWithTools(provider: FakeProviderName, agent: string, tools: unknown[]): Promise<Answer> {
  const req = chatRequest(provider, "Hello");
  req.body.tools = tools;
  const res = await fetch(w.proxyUrl(provider, req.path), {
    method: "POST",
    headers: { "content-type": "application/json", ...req.headers, ...w.serviceHeaders(agent) },
    body: JSON.stringify(req.body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? (JSON.parse(text) as unknown) : undefined };
}

/** The trace as both REST groups show it, once ingested. */
async function details(id: string): Promise<{ a: DetailA; b: DetailB }> {
  await w.trace(id);
  const a = await w.stack.api.get<DetailA>(`/v1/traces/${id}`);
  const b = await w.stack.api.get<{ data: DetailB }>(`/api/traces/${id}`);
  if (a.status !== 200 || b.status !== 200) throw new Error(`trace ${id}: ${a.status} ${b.status}`);
  return { a: a.body, b: b.body.data };
}

/** The trace's one finding is `entityType` in a tool definition, its offsets select `value` masked in input_extras. */
function assertToolFinding(t: ExecutionContext, d: { a: DetailA; b: DetailB }, entityType: string, value: string, description: string): void {
  const masked = "*".repeat(value.length);
  t.true(d.a.pii_detected);
  t.deepEqual(d.a.pii_detections.map((x) => [x.entity_type, x.source]), [[entityType, "tool_definition"]]);
  const f = d.a.pii_detections[0]!;
  t.is(d.a.input_extras.slice(f.start, f.end), masked, "the offsets select the masked value in input_extras");
  t.false(d.a.input_extras.includes(value), "no PII in clear");
  t.true(d.a.input_extras.includes(description.replace(value, masked)), d.a.input_extras);
  t.is(d.a.prompt, "You are terse.\n\nHello", "the prompt is the messages' text only");
  // Group B: the same finding and text.
  t.deepEqual(d.b.piiDetected, [{ entityType: f.entity_type, start: f.start, end: f.end, source: "tool_definition", score: f.score }]);
  t.is(d.b.inputExtras, d.a.input_extras);
}

test.serial("openai: an SSN in a tool's description blocks the call, and the blocked trace records it as a tool_definition finding in input_extras", async (t) => {
  const start = new Date(Date.now() - 1000).toISOString();
  const agent = await w.agent("extras-openai");
  const policy = await createPolicy(w, { name: "extras: block ssn", action: "block", priority: 1, conditions: { direction: "inbound", pii_types: ["ssn"] }, agents: [agent] });
  const description = `Look up a customer by SSN, e.g. ${SSN}.`;
  const before = w.fakes.requests.length;
  const r = await callWithTools("openai", agent, [
    { type: "function", function: { name: "lookup", description, parameters: { type: "object", properties: { ssn: { type: "string", description: "the customer's SSN" } } } } },
  ]);
  t.is(r.status, 403, r.text);
  t.is((r.json as { error: { policy_id: string } }).error.policy_id, policy);
  t.is(w.fakes.requests.length, before, "the provider is never called");
  const id = traceIdOf(r);
  const d = await details(id);
  t.is(d.a.status, "blocked");
  assertToolFinding(t, d, "ssn", SSN, description);
  t.is(d.a.input_extras, `Look up a customer by SSN, e.g. ${"*".repeat(SSN.length)}.\n\nthe customer's SSN`);

  const list = await w.stack.api.get<{ data: SummaryA[] }>(`/v1/traces?agent_id=${agent}&has_pii=true`);
  t.deepEqual(list.body.data.map((s) => [s.id, s.pii_detected]), [[id, true]]);
  const report = await w.stack.api.get<{ data: { traces: { withPii: number }; pii: unknown[] } }>(`/api/compliance/report?startDate=${encodeURIComponent(start)}&agentId=${agent}`);
  t.is(report.body.data.traces.withPii, 1);
  t.deepEqual(report.body.data.pii, [{ entityType: "ssn", source: "tool_definition", findings: 1, traces: 1 }]);
});

test.serial("anthropic: a card number in a tool's input_schema is recorded on the answered call's trace as a tool_definition finding", async (t) => {
  const agent = await w.agent("extras-anthropic", undefined, "anthropic");
  w.fakes.script({ text: "Done." });
  const description = `The card number, e.g. ${CARD}`;
  const before = w.fakes.requests.length;
  const r = await callWithTools("anthropic", agent, [
    { name: "charge", description: "Charge a customer's card.", input_schema: { type: "object", properties: { card: { type: "string", description } }, required: ["card"] } },
  ]);
  t.is(r.status, 200, r.text);
  // No policy: the body goes as sent; the finding is still recorded (PII scanning is on for the agent).
  t.true(w.fakes.requests[before]!.body.toString("utf8").includes(CARD));
  const d = await details(traceIdOf(r));
  t.is(d.a.status, "success");
  assertToolFinding(t, d, "credit_card", CARD, description);
  t.is(d.a.input_extras, `Charge a customer's card.\n\nThe card number, e.g. ${"*".repeat(CARD.length)}`);
});

test.serial("a tool definition without PII is not stored on the trace", async (t) => {
  const agent = await w.agent("extras-clean");
  const r = await callWithTools("openai", agent, [{ type: "function", function: { name: "weather", description: "Get the weather for a city.", parameters: { type: "object", properties: {} } } }]);
  t.is(r.status, 200, r.text);
  const d = await details(traceIdOf(r));
  t.false(d.a.pii_detected);
  t.deepEqual(d.a.pii_detections, []);
  t.is(d.a.input_extras, "");
  t.is(d.b.inputExtras, "");
});
