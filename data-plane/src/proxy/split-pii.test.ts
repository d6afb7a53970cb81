// PII split across two text parts, through the real handler: the model reads `My SSN is 536-22` and
// `-8741` as one, so a block policy refuses the call, a redact policy rewrites both pieces (no part left
// empty: providers refuse empty text parts), and the trace records and masks the finding.
import test from "ava";
import { create } from "@bufbuild/protobuf";
import { PolicyConditionsSchema, PolicySchema, type Policy } from "@agentgov/proto";
import { governanceState, startRecordingProxy, traceOf, type RecordingProxy } from "./testing/in-process-proxy.js";

const KEY = "sk_split_test_key";
const AGENT = "agt_01SPL1TP11000000000000000";

const policy = (id: string, action: string): Policy =>
  create(PolicySchema, { id, name: id, status: "active", action, priority: 1, conditions: create(PolicyConditionsSchema, { direction: "inbound", piiTypes: ["ssn"] }) });

async function setup(policies: Policy[]): Promise<RecordingProxy> {
  return startRecordingProxy(governanceState({ tenant: "ten_split", agent: AGENT, key: KEY }, policies));
}

async function post(url: string, path: string, body: unknown): Promise<number> {
  const r = await fetch(`${url}/v1/proxy/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-x", "x-api-key": "sk-x", "x-service-key": KEY, "x-service-agent": AGENT },
    body: JSON.stringify(body),
  });
  await r.text();
  return r.status;
}

const openAiSplit = { model: "gpt-4o-mini", messages: [{ role: "user", content: [{ type: "text", text: "My SSN is 536-22" }, { type: "text", text: "-8741" }] }] };
const anthropicSplit = { model: "claude-3-5-haiku-latest", max_tokens: 16, messages: [{ role: "user", content: [{ type: "text", text: "My SSN is 536-22" }, { type: "text", text: "-8741" }] }] };

test("a block policy refuses an SSN split across two content parts; the provider is not called; the trace records the finding across the parts, masked", async (t) => {
  const s = await setup([policy("pol_block", "block")]);
  t.teardown(() => s.close());
  t.is(await post(s.url, "openai/v1/chat/completions", openAiSplit), 403);
  t.is(await post(s.url, "anthropic/v1/messages", anthropicSplit), 403);
  t.deepEqual(s.received, []);
  const tr = await traceOf(s, 2);
  t.is(tr.status, "blocked");
  t.deepEqual(
    tr.piiDetections.map((d) => [d.entityType, d.source, d.start, d.end]),
    [["ssn", "prompt", 10, 23]],
  );
  t.is(tr.prompt, "My SSN is *************", "both pieces and the junction between them masked");
});

test("a redact policy rewrites both pieces of a split SSN, leaving no empty part, the rest of the body as sent", async (t) => {
  const s = await setup([policy("pol_redact", "redact")]);
  t.teardown(() => s.close());
  t.is(await post(s.url, "openai/v1/chat/completions", openAiSplit), 200);
  t.is(await post(s.url, "anthropic/v1/messages", anthropicSplit), 200);
  for (const sent of s.received) {
    const parts = (JSON.parse(sent) as { messages: { content: { text: string }[] }[] }).messages[0]!.content.map((p) => p.text);
    t.deepEqual(parts, ["My SSN is [REDACTED:ssn]", "[REDACTED:ssn]"]);
  }
  t.is(s.received.length, 2);
});

test("parts that only sit side by side (a sentence, then another with a number) are not joined into a finding", async (t) => {
  const s = await setup([policy("pol_block", "block")]);
  t.teardown(() => s.close());
  const body = { model: "gpt-4o-mini", messages: [{ role: "user", content: [{ type: "text", text: "Order 536-22." }, { type: "text", text: "Then 8741 more." }] }] };
  t.is(await post(s.url, "openai/v1/chat/completions", body), 200);
  t.deepEqual((await traceOf(s, 1)).piiDetections, []);
});

// The same split across two fields of a tool definition (its description, a parameter's description).
const toolSplit = {
  model: "gpt-4o-mini",
  messages: [{ role: "user", content: "Look the customer up" }],
  tools: [{ type: "function", function: { name: "lookup", description: "Find a customer by SSN 536-22", parameters: { type: "object", properties: { id: { type: "string", description: "-8741 is an example" } } } } }],
};

test("a block policy refuses an SSN split across two fields of a tool definition; the trace records it as the tool definition's, masked", async (t) => {
  const s = await setup([policy("pol_block", "block")]);
  t.teardown(() => s.close());
  t.is(await post(s.url, "openai/v1/chat/completions", toolSplit), 403);
  t.deepEqual(s.received, []);
  const tr = await traceOf(s, 1);
  t.is(tr.status, "blocked");
  t.deepEqual(
    tr.piiDetections.map((d) => [d.entityType, d.source, tr.inputExtras.slice(d.start, d.end)]),
    [["ssn", "tool_definition", "*".repeat(13)]],
  );
  t.is(tr.inputExtras, `Find a customer by SSN ${"*".repeat(13)} is an example`, "both pieces and the junction between them masked");
});

test("a redact policy rewrites both fields of a split SSN in the tool definition, the rest of the body as sent", async (t) => {
  const s = await setup([policy("pol_redact", "redact")]);
  t.teardown(() => s.close());
  t.is(await post(s.url, "openai/v1/chat/completions", toolSplit), 200);
  const sent = JSON.parse(s.received[0]!) as typeof toolSplit;
  t.is(sent.tools[0]!.function.description, "Find a customer by SSN [REDACTED:ssn]");
  t.is(sent.tools[0]!.function.parameters.properties.id.description, " is an example");
  t.deepEqual(sent.messages, toolSplit.messages);
});
