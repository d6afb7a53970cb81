// Outbound policies govern the reasoning a model shows beside its answer inside SSE streams, through a
// real sidecar: Anthropic thinking blocks, Gemini thought parts, Mistral thinking chunks, Cohere thinking
// content and tool plans. A redact policy redacts an entity split across reasoning deltas as each
// official SDK reads it (and the trace records the policy as fired on the reasoning); a block policy
// ends the stream with the provider's error event before the entity leaves; a redacted thinking block
// sent back by the client reaches Anthropic as it signed it; Gemini's JSON-array stream is redacted
// whole, thought parts included; an outbound log policy judges the reasoning too.
import test from "ava";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeProviderName, FakeScript } from "../fakes/providers/index.js";
import { getProvider, parseSse } from "../../data-plane/src/providers/index.js";
import { MODELS, rawCall, sdkClients, startProxyWorld, type ProxyWorld } from "./proxy-helpers.js";
import { chatRequest, createPolicy } from "./policy-helpers.js";
import { eventually } from "../harness/stack.js";

let w: ProxyWorld;
test.before(async () => {
  w = await startProxyWorld({ SSE_KEEPALIVE_MS: "0" });
});
test.after.always(async () => {
  await w?.stop();
});

type Clients = ReturnType<typeof sdkClients>;

const THOUGHT = "Thinking: the user's SSN is 536-22-8726, I will reply to jo.doe@example.com later. Careful.";
const THOUGHT_REDACTED = "Thinking: the user's SSN is [REDACTED:ssn], I will reply to [REDACTED:email] later. Careful.";
const ANSWER = "Here is a short and harmless answer about the weather in Paris.";
const TOOL = { name: "get_weather", arguments: { city: "Paris" } };
const PARAMS = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };

interface Seen {
  reasoning: string;
  text: string;
}

/** Each case: a provider, the fake's script, and how its official SDK streams the reasoning to the client. */
interface ReasoningCase {
  label: string;
  provider: FakeProviderName;
  script: Partial<FakeScript>;
  sdk(c: Clients): Promise<Seen>;
}

const CASES: ReasoningCase[] = [
  {
    label: "anthropic thinking block",
    provider: "anthropic",
    script: {},
    async sdk(c) {
      const s = await c.anthropic.messages.create({
        model: MODELS.anthropic,
        max_tokens: 2048,
        thinking: { type: "enabled", budget_tokens: 1024 },
        messages: [{ role: "user", content: "help me" }],
        stream: true,
      });
      const seen: Seen = { reasoning: "", text: "" };
      for await (const e of s) {
        if (e.type === "content_block_delta" && e.delta.type === "thinking_delta") seen.reasoning += e.delta.thinking;
        if (e.type === "content_block_delta" && e.delta.type === "text_delta") seen.text += e.delta.text;
      }
      return seen;
    },
  },
  {
    label: "google thought parts",
    provider: "google",
    script: {},
    async sdk(c) {
      const s = await c.google.models.generateContentStream({ model: MODELS.google, contents: "help me", config: { thinkingConfig: { includeThoughts: true } } });
      const seen: Seen = { reasoning: "", text: "" };
      for await (const chunk of s) {
        for (const part of chunk.candidates?.[0]?.content?.parts ?? []) {
          if (part.thought === true) seen.reasoning += part.text ?? "";
          else seen.text += part.text ?? "";
        }
      }
      return seen;
    },
  },
  {
    label: "mistral thinking chunks",
    provider: "mistral",
    script: {},
    async sdk(c) {
      const s = await c.mistral.chat.stream({ model: MODELS.mistral, messages: [{ role: "user", content: "help me" }] });
      const seen: Seen = { reasoning: "", text: "" };
      for await (const e of s) {
        const content = e.data.choices[0]?.delta.content;
        if (typeof content === "string") seen.text += content;
        else
          for (const chunk of content ?? []) {
            if (chunk.type === "thinking") for (const t of chunk.thinking) seen.reasoning += t.type === "text" ? t.text : "";
            else if (chunk.type === "text") seen.text += chunk.text;
          }
      }
      return seen;
    },
  },
  {
    label: "cohere thinking content",
    provider: "cohere",
    script: {},
    async sdk(c) {
      const s = await c.cohere.chatStream({ model: MODELS.cohere, messages: [{ role: "user", content: "help me" }] });
      const seen: Seen = { reasoning: "", text: "" };
      for await (const e of s) {
        if (e.type === "content-delta") {
          seen.reasoning += e.delta?.message?.content?.thinking ?? "";
          seen.text += e.delta?.message?.content?.text ?? "";
        }
      }
      return seen;
    },
  },
  {
    label: "cohere tool plan",
    provider: "cohere",
    script: { toolCalls: [TOOL], text: "" },
    async sdk(c) {
      const s = await c.cohere.chatStream({
        model: MODELS.cohere,
        messages: [{ role: "user", content: "weather in Paris?" }],
        tools: [{ type: "function", function: { name: "get_weather", parameters: PARAMS } }],
      });
      const seen: Seen = { reasoning: "", text: "" };
      for await (const e of s) {
        if (e.type === "tool-plan-delta") seen.reasoning += e.delta?.message?.toolPlan ?? "";
        if (e.type === "content-delta") seen.text += e.delta?.message?.content?.text ?? "";
      }
      return seen;
    },
  },
];

/** Reasoning, answer and error of an SSE answer, read as the sidecar's adapter reads it. */
function streamFacts(provider: FakeProviderName, text: string) {
  const o = getProvider(provider)!.streamObserver();
  o.push(Buffer.from(text, "utf8"));
  return o.end();
}

async function viaSidecar(provider: FakeProviderName, agent: string, script: FakeScript, withTools: boolean) {
  const req = chatRequest(provider, "help me", { stream: true });
  if (withTools) req.body.tools = [{ type: "function", function: { name: "get_weather", parameters: PARAMS } }];
  w.fakes.script(script);
  return rawCall(w.proxyUrl(provider, req.path), { headers: { ...req.headers, ...w.serviceHeaders(agent) }, body: req.body });
}

for (const c of CASES) {
  const p = c.provider;
  const slug = c.label.replace(/ /g, "-");
  const script: FakeScript = { text: ANSWER, reasoning: THOUGHT, textChunkSize: 3, usage: { inputTokens: 40, outputTokens: 60 }, ...c.script };

  test.serial(`${c.label}: a redact policy redacts PII split across reasoning deltas; the SDK reads it redacted`, async (t) => {
    const a = await w.agent(`reasoning-redact-${slug}`, undefined, p);
    await createPolicy(w, { name: `reasoning redact ${slug}`, action: "redact", priority: 1, conditions: { direction: "outbound", pii_types: ["ssn", "email"] }, agents: [a] });

    w.fakes.script(script);
    const sdk = await c.sdk(sdkClients(w.sidecar.url, w.serviceHeaders(a), fetch));
    t.is(sdk.reasoning, THOUGHT_REDACTED);
    t.is(sdk.text, script.text ?? "");

    const via = await viaSidecar(p, a, script, c.script.toolCalls !== undefined);
    t.is(via.status, 200);
    t.false(via.text.includes("8726") || via.text.includes("jo.doe"), "no part of the entities left the sidecar");
    const facts = streamFacts(p, via.text);
    t.is(facts.reasoningText, THOUGHT_REDACTED);
    t.is(facts.completionText, script.text ?? "");

    // The answer had nothing to redact: the policy fired on the reasoning, judged at the stream's end.
    const trace = await w.trace(String(via.headers["x-service-trace-id"]));
    t.is(trace.status, "success");
    t.deepEqual(trace.policyEvaluations.map((e) => `${e.result}/${e.actionTaken}`), ["fail/redact"]);
    t.deepEqual([...new Set(trace.piiDetections.map((d) => `${d.entityType}/${d.source}`))].sort(), ["email/completion", "ssn/completion"]);
  });

  test.serial(`${c.label}: a block policy ends the stream with the native error event before the reasoning's entity leaves`, async (t) => {
    const a = await w.agent(`reasoning-block-${slug}`, undefined, p);
    const pol = await createPolicy(w, { name: `reasoning block ${slug}`, action: "block", priority: 1, conditions: { direction: "outbound", pii_types: ["ssn"] }, agents: [a] });
    const blockScript = { ...script, textChunkSize: 2 };

    w.fakes.script(blockScript);
    const sdkCall = c.sdk(sdkClients(w.sidecar.url, w.serviceHeaders(a), fetch));
    if (p === "cohere" || p === "mistral") {
      // Cohere v2 has no error event: the stream ends with message-end, finish_reason ERROR; Mistral's
      // failure is a chunk finishing with "error". Their SDKs yield these, they raise nothing.
      t.false((await sdkCall).reasoning.includes("536"));
    } else {
      await t.throwsAsync(sdkCall, undefined, `${p}: the SDK raises the error event`);
    }

    const via = await viaSidecar(p, a, blockScript, c.script.toolCalls !== undefined);
    t.is(via.status, 200, "headers had left: the stream ends with an error event");
    const facts = streamFacts(p, via.text);
    t.regex(facts.errorMessage ?? "", /blocked by policy/);
    t.false((facts.reasoningText ?? "").includes("536"), "the SSN's first group did not reach the client");
    t.true(THOUGHT.startsWith(facts.reasoningText ?? ""), "what left before the block is a prefix of the reasoning");
    t.is(facts.completionText, "", "the answer after the reasoning never started");
    const trace = await w.trace(String(via.headers["x-service-trace-id"]));
    t.is(trace.status, "blocked");
    t.is(trace.errorCode, "policy_violation");
    t.deepEqual(trace.policyEvaluations.map((e) => `${e.policyId}:${e.result}/${e.actionTaken}`), [`${pol}:fail/block`]);
  });
}

type Anthropic = Clients["anthropic"];
type Message = Awaited<ReturnType<ReturnType<Anthropic["messages"]["stream"]>["finalMessage"]>>;
const THINKING = { type: "enabled", budget_tokens: 1024 } as const;

/** The first turn: the fake answers with THOUGHT as thinking, streamed to the SDK. */
async function thinkingTurn(client: Anthropic): Promise<Message> {
  w.fakes.script({ text: ANSWER, reasoning: THOUGHT, textChunkSize: 3 });
  return client.messages.stream({ model: MODELS.anthropic, max_tokens: 2048, thinking: THINKING, messages: [{ role: "user", content: "help me" }] }).finalMessage();
}

/** The agent's next turn sends the first turn back as it got it (the API requires thinking unchanged); what reached the provider. */
async function nextTurn(client: Anthropic, first: Message): Promise<unknown> {
  w.fakes.script({ text: "ok" });
  await client.messages.create({
    model: MODELS.anthropic,
    max_tokens: 2048,
    thinking: THINKING,
    messages: [
      { role: "user", content: "help me" },
      { role: "assistant", content: first.content },
      { role: "user", content: "go on" },
    ],
  });
  return ((w.fakes.requests.at(-1)?.json as { messages: { content: unknown[] }[] }).messages[1]!.content)[0];
}

test.serial("anthropic: a thinking block redacted in the stream and sent back by the SDK reaches the provider as it signed it", async (t) => {
  const a = await w.agent("reasoning-signature", undefined, "anthropic");
  await createPolicy(w, { name: "reasoning signature", action: "redact", priority: 1, conditions: { direction: "outbound", pii_types: ["ssn", "email"] }, agents: [a] });
  const client = sdkClients(w.sidecar.url, w.serviceHeaders(a), fetch).anthropic;
  const first = await thinkingTurn(client);
  const block = first.content[0];
  if (block?.type !== "thinking") return t.fail("the first block is a thinking block");
  t.is(block.thinking, THOUGHT_REDACTED);
  t.truthy(block.signature);
  t.deepEqual(await nextTurn(client, first), { type: "thinking", thinking: THOUGHT, signature: block.signature }, "the original text its signature covers");
});

test.serial("anthropic: a redacted thinking block sent back after a sidecar restart still reaches the provider as it signed it; its file holds nothing in clear", async (t) => {
  const a = await w.agent("reasoning-signature-restart", undefined, "anthropic");
  await createPolicy(w, { name: "reasoning signature restart", action: "redact", priority: 1, conditions: { direction: "outbound", pii_types: ["ssn", "email"] }, agents: [a] });
  const dataDir = join(w.stack.dataDir, "restarting-sidecar");
  // The same sidecar key before and after (the sealing is bound to it, as a restarted pod keeps its secret).
  const key = (await w.stack.api.post<{ data: { key: string } }>("/api/keys", { name: "restarting sidecar", scope: "ingest" })).body.data.key;
  const env = { DATA_DIR: dataDir, SIDECAR_KEY: key, PROVIDER_ANTHROPIC_URL: w.fakes.urls.anthropic, SSE_KEEPALIVE_MS: "0", SHUTDOWN_DRAIN_MS: "0" };
  const before = await w.stack.sidecar(env);
  await eventually(async () => before.state().agents.has(a));
  const first = await thinkingTurn(sdkClients(before.url, w.serviceHeaders(a), fetch).anthropic);
  const block = first.content[0];
  if (block?.type !== "thinking") return t.fail("the first block is a thinking block");
  t.is(block.thinking, THOUGHT_REDACTED);
  await before.stop();

  // What the sidecar keeps on disk opens only with the block itself: no value, text or signature in clear.
  const onDisk = readdirSync(join(dataDir, "sidecar", "thinking")).map((f) => readFileSync(join(dataDir, "sidecar", "thinking", f), "utf8")).join("");
  t.true(onDisk.length > 0);
  for (const clear of ["536-22-8726", "jo.doe@example.com", "Thinking:", block.signature]) t.false(onDisk.includes(clear), `${clear.slice(0, 20)} is not on disk`);

  const after = await w.stack.sidecar(env);
  await eventually(async () => after.state().agents.has(a));
  const sent = await nextTurn(sdkClients(after.url, w.serviceHeaders(a), fetch).anthropic, first);
  t.deepEqual(sent, { type: "thinking", thinking: THOUGHT, signature: block.signature }, "the original text its signature covers, after the restart");
  await after.stop();
});

test.serial("google: the JSON-array stream (no alt=sse) is redacted whole, thought parts included", async (t) => {
  const a = await w.agent("reasoning-json-array", undefined, "google");
  await createPolicy(w, { name: "reasoning json array", action: "redact", priority: 1, conditions: { direction: "outbound", pii_types: ["ssn", "email"] }, agents: [a] });
  const req = chatRequest("google", "help me", { stream: true });
  const path = req.path.replace("?alt=sse", "");
  w.fakes.script({ text: "Write to ann@example.org soon.", reasoning: THOUGHT, textChunkSize: 5 });
  const via = await rawCall(w.proxyUrl("google", path), { headers: { ...req.headers, ...w.serviceHeaders(a) }, body: req.body });
  t.is(via.status, 200);
  const facts = getProvider("google")!.parseResponse(JSON.parse(via.text));
  t.is(facts.reasoningText, THOUGHT_REDACTED);
  t.is(facts.completionText, "Write to [REDACTED:email] soon.");
  t.false(via.text.includes("8726") || via.text.includes("jo.doe"));
});

test.serial("an outbound log policy judges the reasoning of a stream that passes untouched", async (t) => {
  const a = await w.agent("reasoning-log", undefined, "anthropic");
  const pol = await createPolicy(w, { name: "reasoning log", action: "log", priority: 1, conditions: { direction: "outbound", pii_types: ["email"] }, agents: [a] });
  const via = await viaSidecar("anthropic", a, { text: ANSWER, reasoning: THOUGHT, textChunkSize: 4 }, false);
  t.is(streamFacts("anthropic", via.text).reasoningText, THOUGHT, "log policies change nothing");
  t.is(parseSse(via.text).events.length > 0, true);
  const trace = await w.trace(String(via.headers["x-service-trace-id"]));
  t.deepEqual(trace.policyEvaluations.map((e) => `${e.policyId}:${e.result}/${e.actionTaken}`), [`${pol}:fail/log`], "the e-mail is only in the reasoning");
  t.true(trace.piiDetections.some((d) => d.entityType === "email" && d.source === "completion"));
});
