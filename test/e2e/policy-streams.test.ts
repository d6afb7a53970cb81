// Outbound policies inside SSE streams, through a real sidecar, for every provider's stream format:
// redaction of an entity split across deltas as each official SDK sees it, every upstream event
// forwarded (none split or dropped), an outbound block that ends the stream with the provider's native
// error event (the SDK raises it) and a trace that says blocked, and outbound log policies recorded.
import test from "ava";
import { parseSse } from "../../data-plane/src/providers/index.js";
import { rawRequest } from "../fakes/providers/index.js";
import { PROVIDERS, rawCall, sdkClients, startProxyWorld, type ProxyWorld } from "./proxy-helpers.js";
import { DRIVERS } from "./proxy-sdk-drivers.js";
import { chatRequest, createPolicy, streamText } from "./policy-helpers.js";

let w: ProxyWorld;
test.before(async () => {
  w = await startProxyWorld({ SSE_KEEPALIVE_MS: "0" });
});
test.after.always(async () => {
  await w?.stop();
});

const SECRET = "Your SSN is 536-22-8726 and your card is 4111 1111 1111 1111; keep them safe.";
const REDACTED = "Your SSN is [REDACTED:ssn] and your card is [REDACTED:credit_card]; keep them safe.";

/** Event kinds in order, text fields left out (where text sits may move between deltas). */
function kinds(text: string): string[] {
  return parseSse(text).events.map((e) => {
    if (e.data.trim() === "[DONE]") return "[DONE]";
    const j = JSON.parse(e.data) as Record<string, unknown>;
    const type = typeof j.type === "string" ? j.type : e.event;
    const choice = Array.isArray(j.choices) ? JSON.stringify((j.choices as Record<string, unknown>[]).map((c) => c.finish_reason ?? null)) : "";
    const cand = Array.isArray(j.candidates) ? JSON.stringify((j.candidates as Record<string, unknown>[]).map((c) => c.finishReason ?? null)) : "";
    return `${type}${choice}${cand}${j.usage ? "+usage" : ""}${j.usageMetadata ? "+usageMetadata" : ""}`;
  });
}

for (const p of PROVIDERS) {
  test.serial(`${p}: a redacted stream keeps every event, and the SDK reads the redacted text`, async (t) => {
    const a = await w.agent(`stream-redact-${p}`, undefined, p);
    await createPolicy(w, { name: `stream redact ${p}`, action: "redact", priority: 1, conditions: { direction: "outbound", pii_types: ["ssn", "credit_card"] }, agents: [a] });
    const script = { text: SECRET, usage: { inputTokens: 40, outputTokens: 30 }, textChunkSize: 3, comments: true };

    // The official SDK, streaming.
    w.fakes.script(script);
    const sdk = await DRIVERS[p].stream(sdkClients(w.sidecar.url, w.serviceHeaders(a), fetch), false, "tell me my numbers");
    t.is(sdk.text, REDACTED);

    // Raw bytes: the upstream events against what the client got.
    const req = chatRequest(p, "tell me my numbers", { stream: true });
    w.fakes.script(script);
    const direct = await rawRequest(w.fakes.urls[p] + req.path, { headers: req.headers, body: req.body });
    w.fakes.script(script);
    const via = await rawCall(w.proxyUrl(p, req.path), { headers: { ...req.headers, ...w.serviceHeaders(a) }, body: req.body });
    t.is(via.status, 200);
    t.false(via.text.includes("8726") || via.text.includes("1111 1111"), "no digit of the entities left the sidecar");
    t.is(streamText(p, via.text).text, REDACTED);
    const up = kinds(direct.text);
    const down = kinds(via.text);
    let i = 0;
    for (const k of down) if (k === up[i]) i++;
    t.is(i, up.length, "every upstream event reached the client, in order");
    t.true(down.length - up.length <= 1, "at most one text event inserted (the held tail at the channel's end)");
    t.is(parseSse(via.text).comments.length, parseSse(direct.text).comments.length, "keep-alive comments pass");

    const trace = await w.trace(String(via.headers["x-service-trace-id"]));
    t.is(trace.status, "success");
    t.is(trace.completion, SECRET.replace("536-22-8726", "*".repeat(11)).replace("4111 1111 1111 1111", "*".repeat(19)));
    t.deepEqual(trace.policyEvaluations.map((e) => `${e.result}/${e.actionTaken}`), ["fail/redact"]);
    t.is(via.headers["x-service-policies"], "1");
    t.is(trace.outputTokens, 30, "usage read from the stream");
  });

  test.serial(`${p}: an outbound block ends the stream with the native error event before the entity leaves`, async (t) => {
    const a = await w.agent(`stream-block-${p}`, undefined, p);
    const pol = await createPolicy(w, { name: `stream block ${p}`, action: "block", priority: 1, conditions: { direction: "outbound", pii_types: ["ssn"] }, agents: [a] });
    const script = { text: SECRET, usage: { inputTokens: 40, outputTokens: 30 }, textChunkSize: 2 };

    w.fakes.script(script);
    const sdkCall = DRIVERS[p].stream(sdkClients(w.sidecar.url, w.serviceHeaders(a), fetch), false, "tell me");
    if (p === "cohere" || p === "mistral") {
      // Cohere v2 has no error event: the stream ends with message-end, finish_reason ERROR; Mistral's own
      // failure is a chunk finishing with "error". Their SDKs yield these, they raise nothing.
      t.false((await sdkCall).text.includes("536"));
    } else {
      await t.throwsAsync(sdkCall, undefined, `${p}: the SDK raises the error event`);
    }

    const req = chatRequest(p, "tell me", { stream: true });
    w.fakes.script(script);
    const via = await rawCall(w.proxyUrl(p, req.path), { headers: { ...req.headers, ...w.serviceHeaders(a) }, body: req.body });
    t.is(via.status, 200, "headers had left: the stream ends with an error event");
    // The SSN is streamed 2 characters per event, so it is looked for in the text the events rebuild.
    // (The raw body was searched for "536" before: ids and timestamps in the events can contain it.)
    t.false(via.text.includes("536-22-8726"));
    const seen = streamText(p, via.text);
    t.false(seen.text.includes("536"), "the SSN's first group did not reach the client");
    t.regex(seen.error ?? "", /blocked by policy/);
    t.true(SECRET.startsWith(seen.text), "what was sent before the block is a prefix of the answer");
    const trace = await w.trace(String(via.headers["x-service-trace-id"]));
    t.is(trace.status, "blocked");
    t.is(trace.errorCode, "policy_violation");
    t.is(trace.policiesBlocked, 1);
    t.deepEqual(trace.policyEvaluations.map((e) => `${e.policyId}:${e.result}/${e.actionTaken}`), [`${pol}:fail/block`]);
    t.deepEqual(trace.policiesFired, [`stream block ${p}`]);
  });
}

for (const p of PROVIDERS) {
  test.serial(`${p}: the provider's own error event in the middle of a redacted value: the held piece is dropped, not released, and the error event ends the stream; the trace is an upstream_stream_error`, async (t) => {
    const a = await w.agent(`stream-provider-error-${p}`, undefined, p);
    await createPolicy(w, { name: `stream error redact ${p}`, action: "redact", priority: 1, conditions: { direction: "outbound", pii_types: ["ssn"] }, agents: [a] });
    const text = "Noted, I will keep it on file for you. Your social security number is 536-22-8726 and that is all.";
    const req = chatRequest(p, "tell me", { stream: true });
    // The number of events after which the answer reads "…536-22-8" (the failure splits the SSN).
    const full = { text, textChunkSize: 3, usage: { inputTokens: 10, outputTokens: 30 } };
    w.fakes.script(full);
    const direct = await rawRequest(w.fakes.urls[p] + req.path, { headers: req.headers, body: req.body });
    const events = parseSse(direct.text).events;
    let k = 1;
    while (!streamText(p, events.slice(0, k).map((e) => `${e.event ? `event: ${e.event}\n` : ""}data: ${e.data}\n\n`).join("")).text.includes("536-22-8")) k++;

    w.fakes.script({ ...full, streamError: { afterEvents: k, message: "backend failure" } });
    const upstream = await rawRequest(w.fakes.urls[p] + req.path, { headers: req.headers, body: req.body });
    t.true(streamText(p, upstream.text).text.endsWith("536-22-8"), `${p}: the provider's stream itself stops inside the SSN`);
    w.fakes.script({ ...full, streamError: { afterEvents: k, message: "backend failure" } });
    const via = await rawCall(w.proxyUrl(p, req.path), { headers: { ...req.headers, ...w.serviceHeaders(a) }, body: req.body });
    t.is(via.status, 200);
    const seen = streamText(p, via.text);
    t.false(seen.text.includes("536-22"), `${p}: no piece of the SSN reached the client: ${seen.text}`);
    t.true(text.startsWith(seen.text) && seen.text.length > 0, `${p}: what left is the answer's start, unchanged (${seen.text})`);
    const last = parseSse(via.text).events.at(-1)!;
    t.regex(last.data, /backend failure/, `${p}: the provider's error event comes last`);
    const trace = await w.trace(String(via.headers["x-service-trace-id"]));
    t.is(trace.status, "error");
    t.is(trace.errorCode, "upstream_stream_error");
    // The piece was judged with the whole answer: "536-22-8" is no SSN to any detector, which is why it is dropped.
    t.deepEqual(trace.policyEvaluations.map((e) => `${e.result}/${e.actionTaken}`), ["pass/none"]);
  });
}

test.serial("outbound log policies are evaluated on a stream that passes untouched; X-Service-Policies counts both phases", async (t) => {
  const a = await w.agent("stream-log");
  const inbound = await createPolicy(w, { name: "stream log in", action: "log", priority: 1, conditions: { direction: "inbound" }, agents: [a] });
  const out = await createPolicy(w, { name: "stream log out", action: "log", priority: 2, conditions: { direction: "outbound", pii_types: ["email"] }, agents: [a] });
  const req = chatRequest("openai", "hi", { stream: true });
  w.fakes.script({ text: "write to jo@example.com", textChunkSize: 4 });
  const direct = await rawRequest(w.fakes.urls.openai + req.path, { headers: req.headers, body: req.body });
  w.fakes.script({ text: "write to jo@example.com", textChunkSize: 4 });
  const via = await rawCall(w.proxyUrl("openai", req.path), { headers: { ...req.headers, ...w.serviceHeaders(a) }, body: req.body });
  const sameIds = (x: string) => x.replace(/"id":"[^"]*"/g, '"id":"…"');
  t.is(sameIds(via.text), sameIds(direct.text), "byte for byte (ids aside: the fake numbers its answers)");
  t.is(via.headers["x-service-policies"], "2");
  const trace = await w.trace(String(via.headers["x-service-trace-id"]));
  t.deepEqual(trace.policyEvaluations.map((e) => `${e.policyId}:${e.result}/${e.actionTaken}`), [`${inbound}:fail/log`, `${out}:fail/log`]);
  t.deepEqual(trace.piiDetections.map((d) => `${d.entityType}/${d.source}`), ["email/completion"]);
});
