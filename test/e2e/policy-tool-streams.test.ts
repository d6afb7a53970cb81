// Outbound policies on the tool-call arguments of streamed answers, through a real sidecar, as each
// official SDK assembles them: a redact policy rewrites each string value (the arguments the agent will
// run stay valid JSON), a block policy ends the stream before any of them leave, and log policies judge
// them too. The agent runs a tool call as soon as its arguments are complete, so they are governed like
// the answer's text (they were passed through unjudged until session 16).
import test from "ava";
import { parseSse } from "../../data-plane/src/providers/index.js";
import { PROVIDERS, rawCall, sdkClients, startProxyWorld, MODELS, type ProxyWorld } from "./proxy-helpers.js";
import { DRIVERS } from "./proxy-sdk-drivers.js";
import { chatRequest, createPolicy, streamText } from "./policy-helpers.js";

let w: ProxyWorld;
test.before(async () => {
  w = await startProxyWorld({ SSE_KEEPALIVE_MS: "0" });
});
test.after.always(async () => {
  await w?.stop();
});

const SECRET_ARGS = { to: "jane.doe@example.com", note: "Customer SSN 536-22-8726, call back", count: 3 };
const REDACTED_ARGS = { to: "[REDACTED:email]", note: "Customer SSN [REDACTED:ssn], call back", count: 3 };
const script = (args: Record<string, unknown>, argsChunkSize = 4) => ({
  text: "",
  toolCalls: [{ name: "get_weather", arguments: args }],
  usage: { inputTokens: 40, outputTokens: 30 },
  argsChunkSize,
});

for (const p of PROVIDERS) {
  test.serial(`${p}: PII in streamed tool-call arguments reaches the SDK redacted, the arguments valid JSON; the trace records the redaction`, async (t) => {
    const a = await w.agent(`tool-stream-redact-${p}`, undefined, p);
    const pol = await createPolicy(w, { name: `tool stream redact ${p}`, action: "redact", priority: 1, conditions: { direction: "outbound", pii_types: ["email", "ssn"] }, agents: [a] });
    w.fakes.script(script(SECRET_ARGS));
    const sdk = await DRIVERS[p].stream(sdkClients(w.sidecar.url, w.serviceHeaders(a), fetch), true, "mail the customer");
    t.deepEqual(sdk.tools, ["get_weather"]);
    t.deepEqual(sdk.args, [REDACTED_ARGS]);

    const req = chatRequest(p, "mail the customer", { stream: true });
    w.fakes.script(script(SECRET_ARGS));
    const via = await rawCall(w.proxyUrl(p, req.path), { headers: { ...req.headers, ...w.serviceHeaders(a) }, body: req.body });
    t.is(via.status, 200);
    t.false(via.text.includes("jane") || via.text.includes("8726"), "no part of a value left the sidecar");
    const trace = await w.trace(String(via.headers["x-service-trace-id"]));
    t.is(trace.status, "success");
    t.deepEqual(trace.policyEvaluations.map((e) => `${e.policyId}:${e.result}/${e.actionTaken}`), [`${pol}:fail/redact`]);
    t.deepEqual(trace.toolCalls.map((c) => c.name), ["get_weather"]);
  });

  test.serial(`${p}: a block policy on tool-call arguments ends the stream before any of them leave; the trace says blocked`, async (t) => {
    const a = await w.agent(`tool-stream-block-${p}`, undefined, p);
    const pol = await createPolicy(w, { name: `tool stream block ${p}`, action: "block", priority: 1, conditions: { direction: "outbound", pii_types: ["ssn"] }, agents: [a] });
    w.fakes.script(script(SECRET_ARGS, 3));
    const sdkCall = DRIVERS[p].stream(sdkClients(w.sidecar.url, w.serviceHeaders(a), fetch), true, "file it");
    if (p === "cohere" || p === "mistral") {
      // Cohere v2 has no error event: the stream ends with message-end, finish_reason ERROR; Mistral's
      // failure is a chunk finishing with "error". Their SDKs yield these, they raise nothing.
      t.false(JSON.stringify((await sdkCall).args ?? []).includes("536"));
    } else {
      await t.throwsAsync(sdkCall, undefined, `${p}: the SDK raises the error event`);
    }

    const req = chatRequest(p, "file it", { stream: true });
    w.fakes.script(script(SECRET_ARGS, 3));
    const via = await rawCall(w.proxyUrl(p, req.path), { headers: { ...req.headers, ...w.serviceHeaders(a) }, body: req.body });
    t.is(via.status, 200, "headers had left: the stream ends with an error event");
    t.false(via.text.includes("Customer") || via.text.includes("jane"), "no fragment of the arguments reached the client");
    t.regex(streamText(p, via.text).error ?? "", /blocked by policy/);
    const trace = await w.trace(String(via.headers["x-service-trace-id"]));
    t.is(trace.status, "blocked");
    t.deepEqual(trace.policyEvaluations.map((e) => `${e.policyId}:${e.result}/${e.actionTaken}`), [`${pol}:fail/block`]);
  });
}

test.serial("openai: the SDK's stream helper assembles the redacted arguments into its final completion", async (t) => {
  const a = await w.agent("tool-stream-helper-openai");
  await createPolicy(w, { name: "tool stream helper openai", action: "redact", priority: 1, conditions: { direction: "outbound", pii_types: ["email", "ssn"] }, agents: [a] });
  w.fakes.script(script(SECRET_ARGS, 2));
  const c = sdkClients(w.sidecar.url, w.serviceHeaders(a), fetch);
  const stream = c.openai.chat.completions.stream({
    model: MODELS.openai,
    messages: [{ role: "user", content: "mail the customer" }],
    tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: {} } } }],
  });
  const final = await stream.finalChatCompletion();
  const call = final.choices[0]!.message.tool_calls![0]!;
  t.is(call.type, "function");
  t.deepEqual(call.type === "function" ? (JSON.parse(call.function.arguments) as unknown) : undefined, REDACTED_ARGS);
});

test.serial("anthropic: the SDK's message stream assembles the redacted input into its final message", async (t) => {
  const a = await w.agent("tool-stream-helper-anthropic", undefined, "anthropic");
  await createPolicy(w, { name: "tool stream helper anthropic", action: "redact", priority: 1, conditions: { direction: "outbound", pii_types: ["email", "ssn"] }, agents: [a] });
  w.fakes.script(script(SECRET_ARGS, 2));
  const c = sdkClients(w.sidecar.url, w.serviceHeaders(a), fetch);
  const stream = c.anthropic.messages.stream({
    model: MODELS.anthropic,
    max_tokens: 256,
    messages: [{ role: "user", content: "mail the customer" }],
    tools: [{ name: "get_weather", input_schema: { type: "object", properties: {} } }],
  });
  const final = await stream.finalMessage();
  const block = final.content.find((b) => b.type === "tool_use");
  t.deepEqual(block?.type === "tool_use" ? block.input : undefined, REDACTED_ARGS);
});

test.serial("an outbound log policy judges streamed tool-call arguments: the trace records it, the stream passes byte for byte", async (t) => {
  const a = await w.agent("tool-stream-log");
  const pol = await createPolicy(w, { name: "tool stream log", action: "log", priority: 1, conditions: { direction: "outbound", keywords: ["Customer SSN"] }, agents: [a] });
  const req = chatRequest("openai", "file it", { stream: true });
  w.fakes.script(script(SECRET_ARGS));
  const via = await rawCall(w.proxyUrl("openai", req.path), { headers: { ...req.headers, ...w.serviceHeaders(a) }, body: req.body });
  const args = parseSse(via.text)
    .events.filter((e) => e.data.includes("tool_calls"))
    .map((e) => (JSON.parse(e.data) as { choices: { delta: { tool_calls?: { function?: { arguments?: string } }[] } }[] }).choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? "")
    .join("");
  t.deepEqual(JSON.parse(args), SECRET_ARGS, "log policies change nothing");
  const trace = await w.trace(String(via.headers["x-service-trace-id"]));
  t.deepEqual(trace.policyEvaluations.map((e) => `${e.policyId}:${e.result}/${e.actionTaken}`), [`${pol}:fail/log`]);
  t.deepEqual(trace.policiesFired, ["tool stream log"]);
});

test.serial("google: a JSON-array stream (no alt=sse) held whole has its functionCall args redacted leaf by leaf", async (t) => {
  const a = await w.agent("tool-stream-array-google", undefined, "google");
  await createPolicy(w, { name: "tool stream array google", action: "redact", priority: 1, conditions: { direction: "outbound", pii_types: ["email", "ssn"] }, agents: [a] });
  const req = chatRequest("google", "mail the customer", { stream: true });
  w.fakes.script(script(SECRET_ARGS));
  const via = await rawCall(w.proxyUrl("google", req.path.replace("?alt=sse", "")), { headers: { ...req.headers, ...w.serviceHeaders(a) }, body: req.body });
  t.is(via.status, 200);
  const chunks = JSON.parse(via.text) as { candidates?: { content?: { parts?: { functionCall?: { args?: unknown } }[] } }[] }[];
  const args = chunks.flatMap((c) => c.candidates ?? []).flatMap((c) => c.content?.parts ?? []).flatMap((p) => (p.functionCall ? [p.functionCall.args] : []));
  t.deepEqual(args, [REDACTED_ARGS]);
  t.false(via.text.includes("jane") || via.text.includes("8726"));
});
