// The stream governor over the exact bytes the fake providers send, for every provider: redaction of
// entities split across deltas (any TCP chunking, CRLF, keep-alives), every original event kept in
// order, the answer's text intact apart from the labels, and a block that ends the stream with the
// provider's native error event before the entity leaves.
import test from "ava";
import { create, PolicySchema, PolicyConditionsSchema, type Policy } from "@agentgov/proto";
import { nativeRequest, rawRequest, startFakeProviders } from "../../../../test/fakes/providers/index.js";
import type { FakeProviders, FakeScript } from "../../../../test/fakes/providers/index.js";
import { getProvider, parseSse, PROVIDERS, type ProviderName } from "../../providers/index.js";
import { RedactedThinkingStore } from "../thinking/index.js";
import { outboundPolicy } from "./testing/outbound-policy.js";
import { createStreamGovernor, DEFAULT_WINDOW_CHARS, type StreamGovernor, type StreamGovernorOptions } from "./index.js";

let fake: FakeProviders;
test.before(async () => {
  fake = await startFakeProviders();
});
test.after.always(async () => {
  await fake?.close();
});

const policy = outboundPolicy;

function governorOptions(provider: ProviderName, policies: Policy[], piiDetection = true): StreamGovernorOptions {
  return {
    wire: provider,
    policies,
    piiDetection,
    model: "m",
    inputTokens: 10,
    injectionScore: 0,
    errorEvent: (p) => getProvider(provider)!.errorEvent(`response blocked by policy "${p.name}"`, "policy_violation", { status: 403, details: { policy_id: p.id } }),
  };
}

function governor(provider: ProviderName, policies: Policy[], piiDetection = true): StreamGovernor {
  const g = createStreamGovernor(governorOptions(provider, policies, piiDetection));
  if (!g) throw new Error("expected a governor");
  return g;
}

async function upstream(provider: ProviderName, script: FakeScript): Promise<Buffer> {
  fake.script(script);
  const req = nativeRequest(provider, { stream: true });
  const res = await rawRequest(fake.urls[provider] + req.path, { body: req.body, headers: req.headers });
  return res.bytes;
}

function pieces(bytes: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

function run(g: StreamGovernor, chunks: Buffer[]): Buffer {
  const out: Buffer[] = [];
  for (const c of chunks) {
    const o = g.transform(c);
    if (o) out.push(o);
    if (g.stopped) break;
  }
  const { extra } = g.end();
  if (extra) out.push(extra);
  return Buffer.concat(out);
}

const textOf = (provider: ProviderName, bytes: Buffer) => {
  const o = getProvider(provider)!.streamObserver();
  o.push(bytes);
  return o.end();
};

/** The events with their text fields emptied, so that events can be compared apart from where text sits. */
function skeleton(bytes: Buffer): string[] {
  return parseSse(bytes).events.map((e) => {
    const scrub = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(scrub);
      if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, (k === "text" || k === "content") && typeof x === "string" ? "" : scrub(x)]));
      return v;
    };
    let data: unknown = e.data;
    try {
      data = scrub(JSON.parse(e.data));
    } catch {
      /* [DONE] */
    }
    return `${e.event} ${JSON.stringify(data)}`;
  });
}

const SECRET = "Your SSN is 536-22-8726 and your card is 4111 1111 1111 1111, write them down.";
const REDACTED = "Your SSN is [REDACTED:ssn] and your card is [REDACTED:credit_card], write them down.";

for (const provider of PROVIDERS) {
  for (const [label, script, chunkSize] of [
    ["4-char deltas, one write per event", { textChunkSize: 4 }, 0],
    ["1-char deltas, bytes one by one", { textChunkSize: 1, comments: true }, 1],
    ["3-char deltas, CRLF, 7-byte writes", { textChunkSize: 3, crlf: true }, 7],
  ] as const) {
    test.serial(`${provider}: PII split across deltas is redacted inside the stream (${label})`, async (t) => {
      const raw = await upstream(provider, { text: SECRET, usage: { inputTokens: 10, outputTokens: 30 }, ...script });
      const g = governor(provider, [policy("redact", { piiTypes: ["ssn", "credit_card"] })]);
      const out = run(g, chunkSize === 0 ? [raw] : pieces(raw, chunkSize));
      t.false(g.stopped);
      const facts = textOf(provider, out);
      t.is(facts.completionText, REDACTED);
      t.false(out.toString("utf8").includes("8726"));
      t.is(textOf(provider, raw).completionText, SECRET, "the upstream really carried the PII");
      // Every original event is still there, in order; the only additions are text events inserted at a channel's end.
      const before = skeleton(raw);
      const after = skeleton(out);
      t.is(after.length, before.length + g.stats().inserted);
      let i = 0;
      for (const e of after) if (e === before[i]) i++;
      t.is(i, before.length, "every upstream event is forwarded in order");
      t.is(facts.usage?.outputTokens, 30, "usage passes through");
      t.true(g.stats().maxHeldChars <= DEFAULT_WINDOW_CHARS + 20);
    });
  }

  test.serial(`${provider}: a block policy ends the stream with the native error event before the entity leaves`, async (t) => {
    const raw = await upstream(provider, { text: SECRET, usage: { inputTokens: 10, outputTokens: 30 }, textChunkSize: 2 });
    const g = governor(provider, [policy("block", { piiTypes: ["ssn"] })]);
    const out = run(g, pieces(raw, 5));
    t.true(g.stopped);
    t.is(g.blockedBy?.name.startsWith("p"), true);
    const text = out.toString("utf8");
    t.false(text.includes("536"), "no digit of the SSN reached the client");
    const facts = textOf(provider, out);
    t.regex(facts.errorMessage ?? "", /blocked by policy/);
    t.true(text.endsWith(provider === "google" ? "\r\n\r\n" : "\n\n"), "the error event is complete");
  });

  test.serial(`${provider}: text without matches comes through whole, events kept`, async (t) => {
    const text = "Nothing sensitive here, only the weather in Paris: sunny and 21 degrees. ".repeat(4);
    const raw = await upstream(provider, { text, textChunkSize: 5 });
    const g = governor(provider, [policy("redact", { piiTypes: ["email"] }), policy("block", { keywords: ["classified"] })]);
    const out = run(g, [raw]);
    t.is(textOf(provider, out).completionText, text);
    t.is(skeleton(out).length, skeleton(raw).length + g.stats().inserted);
    t.is(g.stats().redactedChars, 0);
  });
}

test.serial("keywords and regex spanning deltas are redacted; labels say which", async (t) => {
  const raw = await upstream("openai", { text: "The project codename is Blue Falcon and ticket ABC-12345 is open.", textChunkSize: 3 });
  const g = governor("openai", [policy("redact", { keywords: ["blue falcon"] }), policy("redact", { regex: "[A-Z]{3}-\\d{5}" })]);
  const out = run(g, pieces(raw, 11));
  t.is(textOf("openai", out).completionText, "The project codename is [REDACTED:keyword] and ticket [REDACTED:regex] is open.");
});

test.serial("in a stream the first block policy whose conditions hold ends it (at the same point, priority decides)", async (t) => {
  const first = policy("block", { keywords: ["top secret"] }, 1);
  const second = policy("block", { keywords: ["gamma"] }, 2);
  // "gamma" is complete long before "top secret" arrives: the lower-priority policy ends the stream.
  const early = await upstream("anthropic", { text: "alpha beta gamma, then a long stretch of harmless words, TOP SECRET delta", textChunkSize: 2 });
  const g1 = governor("anthropic", [first, second]);
  const out = run(g1, [early]);
  t.is(g1.blockedBy?.id, second.id);
  t.false(out.toString("utf8").includes("gamma"));
  // Both complete within one scan step: the highest priority decides.
  const close = await upstream("anthropic", { text: "gamma TOP SECRET", textChunkSize: 2 });
  const g2 = governor("anthropic", [first, second]);
  run(g2, [close]);
  t.is(g2.blockedBy?.id, first.id);
});

test.serial("with PII scanning off, PII policies never match and nothing is held", async (t) => {
  const raw = await upstream("openai", { text: SECRET, textChunkSize: 4 });
  const g = createStreamGovernor({
    wire: "openai",
    policies: [policy("block", { piiTypes: ["ssn"] })],
    piiDetection: false,
    model: "m",
    inputTokens: 1,
    injectionScore: 0,
    errorEvent: () => "data: {}\n\n",
  })!;
  t.is(g.windowChars, 0);
  const out = run(g, [raw]);
  t.false(g.stopped);
  t.deepEqual(out, raw, "events unchanged byte for byte");
});

test.serial("no block or redact policy: no governor (plain pass-through)", (t) => {
  const opts = { wire: "openai" as const, piiDetection: true, model: "m", inputTokens: 1, injectionScore: 0, errorEvent: () => "" };
  t.is(createStreamGovernor({ ...opts, policies: [] }), null);
  t.is(createStreamGovernor({ ...opts, policies: [policy("log", { piiTypes: ["ssn"] })] }), null);
});

test.serial("a block policy without text conditions ends the stream at the first text event", async (t) => {
  const raw = await upstream("mistral", { text: "hello there", textChunkSize: 4 });
  const g = governor("mistral", [policy("block", { models: ["another-model"] })]);
  const out = run(g, [raw]);
  t.true(g.stopped);
  t.regex(textOf("mistral", out).errorMessage ?? "", /blocked/);
  t.false(out.toString("utf8").includes("hello"));
});

test.serial("OpenAI: two choices are held and redacted independently", (t) => {
  const chunk = (choices: unknown[]) => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "gpt-4o", choices })}\n\n`;
  const events = [
    chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]),
    chunk([{ index: 1, delta: { role: "assistant", content: "" }, finish_reason: null }]),
    chunk([{ index: 0, delta: { content: "mail me at jo" }, finish_reason: null }]),
    chunk([{ index: 1, delta: { content: "no address here" }, finish_reason: null }]),
    chunk([{ index: 0, delta: { content: "hn@example.com ok" }, finish_reason: null }]),
    chunk([{ index: 0, delta: {}, finish_reason: "stop" }]),
    chunk([{ index: 1, delta: {}, finish_reason: "stop" }]),
    "data: [DONE]\n\n",
  ];
  const g = governor("openai", [policy("redact", { piiTypes: ["email"] })]);
  const out = run(g, events.map((e) => Buffer.from(e)));
  t.is(textOf("openai", out).completionText, "mail me at [REDACTED:email] ok\n\nno address here");
  t.is(g.stats().inserted, 2, "one text event per choice before its finish chunk");
  const parsed = parseSse(out).events;
  t.is(parsed.at(-1)?.data, "[DONE]");
});

test.serial("an entity longer than the window is held whole while it grows (API key)", (t) => {
  const key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0".repeat(6);
  const deltas = ["here is the key: ", ...key.match(/.{1,5}/g)!, " — keep it safe"];
  const events = deltas.map((d) => `event: content_block_delta\ndata: ${JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: d } })}\n\n`);
  events.unshift(`event: content_block_start\ndata: ${JSON.stringify({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } })}\n\n`);
  events.push(`event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n`, `event: message_stop\ndata: {"type":"message_stop"}\n\n`);
  const g = governor("anthropic", [policy("redact", { piiTypes: ["api_key"] })]);
  const out = run(g, events.map((e) => Buffer.from(e)));
  t.is(textOf("anthropic", out).completionText, "here is the key: [REDACTED:api_key] — keep it safe");
  t.false(out.toString("utf8").includes("A1b2C3"));
  t.true(g.stats().maxHeldChars > DEFAULT_WINDOW_CHARS, "held beyond the window while the key grew");
});

// ---- Reasoning channels: Anthropic thinking blocks, Gemini thought parts, Mistral thinking chunks,
// Cohere thinking content and tool plans are governed like answer text.

const THOUGHT = "Thinking: the user's SSN is 536-22-8726, reply to jo.doe@example.com later, be careful.";
const THOUGHT_REDACTED = "Thinking: the user's SSN is [REDACTED:ssn], reply to [REDACTED:email] later, be careful.";
const ANSWER = "Your card is 4111 1111 1111 1111; keep it safe.";
const ANSWER_REDACTED = "Your card is [REDACTED:credit_card]; keep it safe.";
const TOOL = { name: "get_weather", arguments: { city: "Paris" } };

/**
 * The reasoning streams of the fakes (reasoning first, then the answer): [label, provider, extra script].
 * Cohere: thinking content without tools; with tools, a tool plan before the tool calls (and no text, as Cohere answers).
 */
const REASONING_STREAMS: [string, ProviderName, Partial<FakeScript>][] = [
  ["anthropic thinking block", "anthropic", {}],
  ["google thought parts", "google", {}],
  ["mistral thinking chunks", "mistral", {}],
  ["cohere thinking content", "cohere", {}],
  ["cohere tool plan", "cohere", { toolCalls: [TOOL], text: "" }],
];

/** The SSE events of a stream as sent (raw text, separator included). */
const rawEvents = (bytes: Buffer): string[] => bytes.toString("utf8").split(/(?<=\r\n\r\n|\n\n)/).filter((e) => e !== "");

/**
 * Whether an event has a reasoning or answer text field, even empty (text may move between such events),
 * or a fragment of tool-call arguments (held until the call's arguments are complete).
 */
function carriesText(event: string): boolean {
  return /"(text|thinking|tool_plan|content|arguments|partial_json)":"|"type":"thinking"/.test(event);
}

for (const [label, provider, extra] of REASONING_STREAMS) {
  const script: FakeScript = { text: ANSWER, reasoning: THOUGHT, usage: { inputTokens: 10, outputTokens: 30 }, textChunkSize: 3, ...extra };
  const answer = script.text === "" ? "" : ANSWER_REDACTED;

  test.serial(`${label}: PII split across reasoning deltas is redacted; events without text pass byte for byte`, async (t) => {
    const raw = await upstream(provider, script);
    t.is(textOf(provider, raw).reasoningText, THOUGHT, "the upstream really carried the reasoning");
    for (const [name, chunks] of [["whole", [raw]], ["7-byte writes", pieces(raw, 7)]] as const) {
      const g = governor(provider, [policy("redact", { piiTypes: ["ssn", "email", "credit_card"] })]);
      const out = run(g, [...chunks]);
      const facts = textOf(provider, out);
      t.is(facts.reasoningText, THOUGHT_REDACTED, name);
      t.is(facts.completionText, answer, name);
      t.false(out.toString("utf8").includes("8726") || out.toString("utf8").includes("jo.doe"), name);
      // Events without text (starts, signatures, stops, tool calls, usage) are forwarded byte for byte, in order.
      const kept = rawEvents(out);
      let i = 0;
      for (const e of rawEvents(raw).filter((e) => !carriesText(e))) {
        while (i < kept.length && kept[i] !== e) i++;
        t.true(i < kept.length, `${name}: forwarded unchanged: ${e}`);
        i++;
      }
    }
  });

  test.serial(`${label}: a block policy ends the stream before the reasoning's entity leaves`, async (t) => {
    const raw = await upstream(provider, { ...script, textChunkSize: 2 });
    const g = governor(provider, [policy("block", { piiTypes: ["ssn"] })]);
    const out = run(g, pieces(raw, 5));
    t.true(g.stopped);
    const facts = textOf(provider, out);
    t.regex(facts.errorMessage ?? "", /blocked by policy/);
    t.false((facts.reasoningText ?? "").includes("536"), "no digit of the SSN reached the client");
    t.true(THOUGHT.startsWith(facts.reasoningText ?? ""), "what left before the block is a prefix of the reasoning");
    t.is(facts.completionText, "", "the answer after the reasoning never started");
  });
}

/** The inserted event that releases a reasoning tail, and the upstream event it precedes. */
function insertedBefore(raw: Buffer, out: Buffer): { inserted: unknown; next: string } {
  const up = new Set(rawEvents(raw));
  const list = rawEvents(out);
  const at = list.findIndex((e) => !up.has(e) && carriesText(e) && /REDACTED:email/.test(e));
  if (at < 0) throw new Error("no inserted event carries the redacted reasoning tail");
  const data = (e: string) => JSON.parse(e.replace(/^(event: .*\r?\n)?data: /, "")) as unknown;
  return { inserted: data(list[at]!), next: list[at + 1] ?? "" };
}

// The e-mail sits in the reasoning's last 64 characters: it is held until the reasoning ends, then
// released in an inserted event of the reasoning's own kind, before the event that ended it.
const SHORT_THOUGHT = "Let me think. I should write to jo.doe@example.com about it.";
const SHORT_REDACTED = "Let me think. I should write to [REDACTED:email] about it.";

test.serial("anthropic: a thinking tail leaves in a thinking_delta inserted before the signature_delta", async (t) => {
  const raw = await upstream("anthropic", { text: "Done.", reasoning: SHORT_THOUGHT, textChunkSize: 4 });
  const g = governor("anthropic", [policy("redact", { piiTypes: ["email"] })]);
  const out = run(g, [raw]);
  const { inserted, next } = insertedBefore(raw, out);
  t.deepEqual(inserted, { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: SHORT_REDACTED } });
  t.regex(next, /"signature_delta"/);
  t.is(textOf("anthropic", out).completionText, "Done.");
});

test.serial("google: a thought tail leaves in a thought part inserted before the first answer part", async (t) => {
  const raw = await upstream("google", { text: "Done.", reasoning: SHORT_THOUGHT, textChunkSize: 4 });
  const g = governor("google", [policy("redact", { piiTypes: ["email"] })]);
  const out = run(g, [raw]);
  const { inserted, next } = insertedBefore(raw, out);
  t.like(inserted, { candidates: [{ content: { parts: [{ text: SHORT_REDACTED, thought: true }], role: "model" }, index: 0 }] });
  t.regex(next, /"parts":\[\{"text":"[^"]*"\}\]/, "the next event is the first answer part");
  t.is(textOf("google", out).reasoningText, SHORT_REDACTED);
  t.is(textOf("google", out).completionText, "Done.");
});

test.serial("mistral: a thinking tail leaves in a thinking chunk inserted before the first answer text", async (t) => {
  const raw = await upstream("mistral", { text: "Done.", reasoning: SHORT_THOUGHT, textChunkSize: 4 });
  const g = governor("mistral", [policy("redact", { piiTypes: ["email"] })]);
  const out = run(g, [raw]);
  const { inserted, next } = insertedBefore(raw, out);
  t.like(inserted, { object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: [{ type: "thinking", thinking: [{ type: "text", text: SHORT_REDACTED }] }] }, finish_reason: null }] });
  t.regex(next, /"delta":\{"content":"[^"]*"\}/, "the next event is the first answer text");
  t.is(textOf("mistral", out).completionText, "Done.");
});

test.serial("mistral: a thinking tail leaves before the tool calls when the answer is only tool calls", async (t) => {
  const raw = await upstream("mistral", { text: "", reasoning: SHORT_THOUGHT, toolCalls: [TOOL], textChunkSize: 4 });
  const g = governor("mistral", [policy("redact", { piiTypes: ["email"] })]);
  const out = run(g, [raw]);
  const { inserted, next } = insertedBefore(raw, out);
  t.like(inserted, { choices: [{ index: 0, delta: { content: [{ type: "thinking", thinking: [{ type: "text", text: SHORT_REDACTED }] }] } }] });
  t.regex(next, /"tool_calls":\[/, "the next event is the first tool call");
  t.deepEqual(textOf("mistral", out).toolCalls.map((c) => c.name), ["get_weather"]);
});

test.serial("cohere: a tool-plan tail leaves in a tool-plan-delta inserted before the first tool-call-start", async (t) => {
  const raw = await upstream("cohere", { text: "", reasoning: SHORT_THOUGHT, toolCalls: [TOOL], textChunkSize: 4 });
  const g = governor("cohere", [policy("redact", { piiTypes: ["email"] })]);
  const out = run(g, [raw]);
  const { inserted, next } = insertedBefore(raw, out);
  t.deepEqual(inserted, { type: "tool-plan-delta", delta: { message: { tool_plan: SHORT_REDACTED } } });
  t.regex(next, /^event: tool-call-start/);
  t.deepEqual(textOf("cohere", out).toolCalls.map((c) => c.name), ["get_weather"]);
});

test.serial("anthropic: the original of a redacted thinking block is remembered under its signature", async (t) => {
  const raw = await upstream("anthropic", { text: ANSWER, reasoning: THOUGHT, textChunkSize: 3 });
  const signature = parseSse(raw)
    .events.map((e) => JSON.parse(e.data) as { delta?: { type?: string; signature?: string } })
    .find((e) => e.delta?.type === "signature_delta")?.delta?.signature;
  t.truthy(signature);
  const store = new RedactedThinkingStore();
  const g = createStreamGovernor({ ...governorOptions("anthropic", [policy("redact", { piiTypes: ["ssn", "email"] })]), redactedThinking: store.scoped("agt_t") });
  const out = run(g!, pieces(raw, 9));
  t.is(textOf("anthropic", out).reasoningText, THOUGHT_REDACTED);
  t.is(store.size, 1);
  t.is(store.restore("agt_t", signature!, THOUGHT_REDACTED), THOUGHT, "the block sent back as the client got it is restored");
  t.is(store.restore("agt_t", signature!, THOUGHT), undefined);
});

test.serial("anthropic: nothing is remembered when the thinking is unchanged, or when a block policy ends the stream", async (t) => {
  // Unchanged thinking (only the answer is redacted).
  const clean = await upstream("anthropic", { text: ANSWER, reasoning: "Let me think about the card question for a moment.", textChunkSize: 3 });
  const store = new RedactedThinkingStore();
  const g1 = createStreamGovernor({ ...governorOptions("anthropic", [policy("redact", { piiTypes: ["credit_card"] })]), redactedThinking: store.scoped("agt_t") });
  const out1 = run(g1!, [clean]);
  t.is(textOf("anthropic", out1).completionText, ANSWER_REDACTED);
  t.is(store.size, 0);
  // Thinking redacted, then the answer blocked: the answer never reaches the client whole, nothing to restore.
  const raw = await upstream("anthropic", { text: ANSWER, reasoning: THOUGHT, textChunkSize: 3 });
  const g2 = createStreamGovernor({ ...governorOptions("anthropic", [policy("block", { piiTypes: ["credit_card"] }), policy("redact", { piiTypes: ["ssn", "email"] })]), redactedThinking: store.scoped("agt_t") });
  const out2 = run(g2!, [raw]);
  t.true(g2!.stopped);
  t.is(textOf("anthropic", out2).reasoningText, THOUGHT_REDACTED, "the thinking went out redacted before the block");
  t.is(store.size, 0);
});

// --- Cohere citations: they quote the answer by offset ---

const cohereEvent = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
const CITED_EMAIL = "jo.smith@example.com";
const CITED_TEXT = `Write to ${CITED_EMAIL} about the renewal. The contract ends in May, so the notice must go out before the end of March at the latest.`;

/** A Cohere RAG answer streamed 6 characters a delta, one citation inline (right after its text) and one after content-end. */
function citedStream(): { raw: string; inline: string; late: string } {
  const at = (part: string) => ({ start: CITED_TEXT.indexOf(part), end: CITED_TEXT.indexOf(part) + part.length, text: part });
  const sources = [{ type: "document", id: "doc-0", document: { id: "doc-0", snippet: "CRM" } }];
  const inline = `Write to ${CITED_EMAIL}`;
  const late = "The contract ends in May";
  let raw = cohereEvent("message-start", { id: "m1", delta: { message: { role: "assistant", content: [], tool_plan: "", tool_calls: [], citations: [] } } });
  raw += cohereEvent("content-start", { index: 0, delta: { message: { content: { type: "text", text: "" } } } });
  const inlineEnd = at(inline).end;
  for (let i = 0; i < CITED_TEXT.length; i += 6) {
    raw += cohereEvent("content-delta", { index: 0, delta: { message: { content: { text: CITED_TEXT.slice(i, i + 6) } } } });
    if (i < inlineEnd && i + 6 >= inlineEnd) {
      raw += cohereEvent("citation-start", { index: 0, delta: { message: { citations: { ...at(inline), sources, type: "TEXT_CONTENT", content_index: 0 } } } });
      raw += cohereEvent("citation-end", { index: 0 });
    }
  }
  raw += cohereEvent("content-end", { index: 0 });
  raw += cohereEvent("citation-start", { index: 1, delta: { message: { citations: { ...at(late), sources, type: "TEXT_CONTENT", content_index: 0 } } } });
  raw += cohereEvent("citation-end", { index: 1 });
  raw += cohereEvent("message-end", { delta: { finish_reason: "COMPLETE", usage: { billed_units: { input_tokens: 5, output_tokens: 30 } } } });
  return { raw, inline, late };
}

const citationsOf = (bytes: Buffer) =>
  parseSse(bytes.toString("utf8"))
    .events.filter((e) => e.event === "citation-start")
    .map((e) => (JSON.parse(e.data) as { delta: { message: { citations: { start: number; end: number; text: string } } } }).delta.message.citations);

test("cohere: citations follow a redaction of the text they quote, inline (held text leaves first) and after content-end", (t) => {
  const { raw } = citedStream();
  for (const size of [raw.length, 7]) {
    const out = run(governor("cohere", [policy("redact", { piiTypes: ["email"] })]), pieces(Buffer.from(raw), size));
    const text = out.toString("utf8");
    t.false(text.includes("jo.smith") || text.includes("example.com"), "no part of the address leaves, in text or citation");
    const answer = textOf("cohere", out).completionText;
    t.is(answer, CITED_TEXT.replace(CITED_EMAIL, "[REDACTED:email]"));
    const cites = citationsOf(out);
    t.deepEqual(cites.map((c) => c.text), ["Write to [REDACTED:email]", "The contract ends in May"]);
    t.deepEqual(cites.map((c) => answer.slice(c.start, c.end)), cites.map((c) => c.text), "offsets point at the text the client has");
    // The inline citation came while its text was held: that text left first, in a content-delta before it.
    const events = parseSse(text).events.map((e) => e.event);
    const firstCitation = events.indexOf("citation-start");
    const upToCitation = textOf("cohere", Buffer.from(parseSse(text).events.slice(0, firstCitation).map((e) => `event: ${e.event}\ndata: ${e.data}\n\n`).join(""))).completionText;
    t.true(upToCitation.startsWith("Write to [REDACTED:email]"), "the cited text reached the client before its citation");
  }
});

test("cohere: with nothing redacted, citation events pass byte for byte", (t) => {
  const { raw } = citedStream();
  const out = run(governor("cohere", [policy("redact", { piiTypes: ["ssn"] })]), [Buffer.from(raw)]);
  const rawCitations = parseSse(raw).events.filter((e) => e.event === "citation-start").map((e) => e.data);
  t.deepEqual(parseSse(out.toString("utf8")).events.filter((e) => e.event === "citation-start").map((e) => e.data), rawCitations);
});

test("cohere: a block policy on the cited address ends the stream before the citation or its text leaves", (t) => {
  const { raw } = citedStream();
  const out = run(governor("cohere", [policy("block", { piiTypes: ["email"] })]), pieces(Buffer.from(raw), 7)).toString("utf8");
  t.false(out.includes("jo.smith"));
  t.is(citationsOf(Buffer.from(out)).length, 0);
});

test("cohere: citations counted in code points after emoji still quote the redacted text; a citation without offsets is redacted on its own", (t) => {
  const bullets = "😀".repeat(30);
  const text = `${bullets} Write to ${CITED_EMAIL} about it, then wait for the answer before anything else happens here.`;
  const cpStart = [...text.slice(0, text.indexOf("Write"))].length;
  const quoted = `Write to ${CITED_EMAIL}`;
  let raw = cohereEvent("message-start", { id: "m2", delta: { message: { role: "assistant" } } });
  raw += cohereEvent("content-start", { index: 0, delta: { message: { content: { type: "text", text: "" } } } });
  const quoteEnd = text.indexOf(quoted) + quoted.length;
  for (let i = 0; i < text.length; i += 8) {
    raw += cohereEvent("content-delta", { index: 0, delta: { message: { content: { text: text.slice(i, i + 8) } } } });
    if (i < quoteEnd && i + 8 >= quoteEnd) {
      raw += cohereEvent("citation-start", { index: 0, delta: { message: { citations: { start: cpStart, end: cpStart + quoted.length, text: quoted, type: "TEXT_CONTENT", content_index: 0 } } } });
      raw += cohereEvent("citation-start", { index: 1, delta: { message: { citations: { text: `mail ${CITED_EMAIL}`, type: "TEXT_CONTENT" } } } });
    }
  }
  raw += cohereEvent("content-end", { index: 0 });
  raw += cohereEvent("message-end", { delta: { finish_reason: "COMPLETE" } });
  const out = run(governor("cohere", [policy("redact", { piiTypes: ["email"] })]), pieces(Buffer.from(raw), 5));
  const sent = out.toString("utf8");
  t.false(sent.includes("jo.smith") || sent.includes("example.com"), "no part of the address leaves, in text or citations");
  const answer = textOf("cohere", out).completionText;
  const [placed, unplaced] = citationsOf(out);
  t.is(placed!.text, "Write to [REDACTED:email]");
  const cps = [...answer];
  t.is(cps.slice(placed!.start, placed!.end).join(""), placed!.text, "offsets stay in code points, on the text the client has");
  t.is(unplaced!.text, "mail [REDACTED:email]");
});

test("google: grounding segments (UTF-8 byte offsets) in the last chunk quote the redacted answer", (t) => {
  const text = `Über die Presse: ${CITED_EMAIL} antwortet schnell.`;
  const part = text.slice(0, 20);
  const rest = text.slice(20);
  const quoted = `Presse: ${CITED_EMAIL}`;
  const bytes = (s: string) => Buffer.byteLength(s, "utf8");
  const startIndex = bytes(text.slice(0, text.indexOf(quoted)));
  const chunk = (o: object) => `data: ${JSON.stringify(o)}\r\n\r\n`;
  const raw =
    chunk({ candidates: [{ index: 0, content: { role: "model", parts: [{ text: part }] } }] }) +
    chunk({
      candidates: [
        {
          index: 0,
          content: { role: "model", parts: [{ text: rest }] },
          finishReason: "STOP",
          groundingMetadata: {
            groundingSupports: [{ segment: { startIndex, endIndex: startIndex + bytes(quoted), text: quoted }, groundingChunkIndices: [0] }],
            groundingChunks: [{ web: { uri: "https://example.org", title: "x" } }],
            webSearchQueries: [`presse ${CITED_EMAIL}`],
            searchEntryPoint: { renderedContent: `<div>${CITED_EMAIL}</div>` },
          },
        },
      ],
      usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 9, totalTokenCount: 12 },
    });
  const out = run(governor("google", [policy("redact", { piiTypes: ["email"] })]), pieces(Buffer.from(raw), 9)).toString("utf8");
  t.false(out.includes("jo.smith"));
  const events = parseSse(out).events.map((e) => JSON.parse(e.data) as { candidates: { content?: { parts: { text: string }[] }; groundingMetadata?: { groundingSupports: { segment: { startIndex: number; endIndex: number; text: string } }[] } }[] });
  const answer = events.flatMap((e) => e.candidates.flatMap((c) => c.content?.parts.map((p) => p.text) ?? [])).join("");
  t.is(answer, text.replace(CITED_EMAIL, "[REDACTED:email]"));
  const segment = events.at(-1)!.candidates[0]!.groundingMetadata!.groundingSupports[0]!.segment;
  t.is(segment.text, "Presse: [REDACTED:email]");
  t.is(Buffer.from(answer, "utf8").subarray(segment.startIndex, segment.endIndex).toString("utf8"), segment.text, "byte offsets point at it");
});

// --- Offsets without text: OpenAI url_citation annotations, Gemini citationSources (Vertex AI: citations) ---

const cps = (s: string) => [...s].length;
/** `text` cut into deltas of `size` code points (no surrogate pair split). */
const deltasOf = (text: string, size: number) => {
  const all = [...text];
  const out: string[] = [];
  for (let i = 0; i < all.length; i += size) out.push(all.slice(i, i + size).join(""));
  return out;
};

test("openai: url_citation annotations in a late delta follow the redaction of held text (code points after emoji), the text they cover leaving first; with nothing redacted they pass byte for byte", (t) => {
  const link = "([example.com](https://example.com/page))";
  const chunk = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ id: "w1", object: "chat.completion.chunk", created: 1, model: "gpt-4o-search-preview", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const outside = { type: "url_citation", url_citation: { start_index: 5, end_index: 999, url: "https://example.com/x", title: "outside the text" } };
  const stream = (text: string, covered: [string, string][]) => {
    const annotations: object[] = covered.map(([part, url]) => {
      const at = text.indexOf(part);
      return { type: "url_citation", url_citation: { start_index: cps(text.slice(0, at)), end_index: cps(text.slice(0, at + part.length)), url, title: "t" } };
    });
    annotations.push(outside);
    let raw = chunk({ role: "assistant", content: "" });
    for (const d of deltasOf(text, 5)) raw += chunk({ content: d });
    return raw + chunk({ annotations }) + chunk({}, "stop") + "data: [DONE]\n\n";
  };
  const annotationEvent = (bytes: Buffer) => parseSse(bytes.toString("utf8")).events.findIndex((e) => e.data.includes('"annotations"'));
  const citations = (bytes: Buffer) =>
    (JSON.parse(parseSse(bytes.toString("utf8")).events[annotationEvent(bytes)]!.data) as { choices: { delta: { annotations: { url_citation: { start_index: number; end_index: number } }[] } }[] }).choices[0]!.delta.annotations.map((a) => a.url_citation);
  const text = `Zürich 🚀 office: mail ${CITED_EMAIL} for details ${link}. Bye.`;
  const raw = Buffer.from(stream(text, [[link, "https://example.com/page"], [CITED_EMAIL, "https://example.com/contact"], ["Zürich", "https://example.com/about"]]));
  for (const size of [raw.length, 7]) {
    const out = run(governor("openai", [policy("redact", { piiTypes: ["email"] })]), pieces(raw, size));
    t.false(out.toString("utf8").includes("jo.smith"));
    const answer = textOf("openai", out).completionText;
    t.is(answer, text.replace(CITED_EMAIL, "[REDACTED:email]"));
    const cites = citations(out);
    t.deepEqual(cites.slice(0, 3).map((c) => [...answer].slice(c.start_index, c.end_index).join("")), [link, "[REDACTED:email]", "Zürich"], "code point offsets point at the same text in what the client got");
    t.deepEqual(cites[2], citations(raw)[2], "a range before the redaction keeps its bytes");
    t.deepEqual(cites[3], outside.url_citation, "a range outside the text is left as it came");
    const events = parseSse(out.toString("utf8")).events;
    const upTo = textOf("openai", Buffer.from(events.slice(0, annotationEvent(out)).map((e) => `data: ${e.data}\n\n`).join(""))).completionText;
    t.true(upTo.startsWith(answer.slice(0, answer.indexOf(link) + link.length)), "the text an annotation covers reached the client before it");
  }
  const clean = Buffer.from(stream(`Zürich 🚀 office: ask the press office for details ${link}. Bye.`, [[link, "https://example.com/page"]]));
  const out = run(governor("openai", [policy("redact", { piiTypes: ["email"] })]), pieces(clean, 7));
  t.is(parseSse(out.toString("utf8")).events[annotationEvent(out)]!.data, parseSse(clean.toString("utf8")).events[annotationEvent(clean)]!.data, "nothing redacted: the annotation event as it came");
});

test("google: citationSources (UTF-8 bytes, no text) follow the redaction of held text; a missing startIndex is 0; with nothing redacted they pass byte for byte", (t) => {
  const bytes = (s: string) => Buffer.byteLength(s, "utf8");
  const sourceOf = (text: string, part: string, uri: string) => ({ startIndex: bytes(text.slice(0, text.indexOf(part))), endIndex: bytes(text.slice(0, text.indexOf(part) + part.length)), uri });
  const chunk = (o: object) => `data: ${JSON.stringify(o)}\r\n\r\n`;
  const stream = (text: string, tail: string, sources: object[]) => {
    let raw = "";
    for (const d of deltasOf(text, 9)) raw += chunk({ candidates: [{ index: 0, content: { role: "model", parts: [{ text: d }] } }] });
    raw += chunk({ candidates: [{ index: 0, content: { role: "model", parts: [{ text: "" }] }, citationMetadata: { citationSources: sources } }] });
    return raw + chunk({ candidates: [{ index: 0, content: { role: "model", parts: [{ text: tail }] }, finishReason: "STOP" }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 9 } });
  };
  type Chunk = { candidates: { content?: { parts: { text: string }[] }; citationMetadata?: { citationSources: { startIndex?: number; endIndex: number }[] } }[] };
  const parsed = (bytes: Buffer) => parseSse(bytes.toString("utf8")).events.map((e) => JSON.parse(e.data) as Chunk);
  const sourcesIn = (bytes: Buffer) => parsed(bytes).find((c) => c.candidates[0]!.citationMetadata)!.candidates[0]!.citationMetadata!.citationSources;
  const text = `Zürich 🚀 Presse: mail ${CITED_EMAIL} heute. Recited passage follows here`;
  const raw = Buffer.from(stream(text, ", word for word.", [sourceOf(text, "Recited passage", "https://example.org/a"), sourceOf(text, CITED_EMAIL, "https://example.org/b"), { endIndex: bytes("Zürich"), uri: "https://example.org/c" }]));
  for (const size of [raw.length, 9]) {
    const out = run(governor("google", [policy("redact", { piiTypes: ["email"] })]), pieces(raw, size));
    t.false(out.toString("utf8").includes("jo.smith"));
    const answer = parsed(out).flatMap((c) => c.candidates.flatMap((x) => x.content?.parts.map((p) => p.text) ?? [])).join("");
    t.is(answer, `${text}, word for word.`.replace(CITED_EMAIL, "[REDACTED:email]"));
    const sources = sourcesIn(out);
    t.deepEqual(sources.map((s) => Buffer.from(answer, "utf8").subarray(s.startIndex ?? 0, s.endIndex).toString("utf8")), ["Recited passage", "[REDACTED:email]", "Zürich"], "byte offsets point at the same text in what the client got");
    t.deepEqual(sources[2], sourcesIn(raw)[2], "a range before the redaction keeps its bytes (no startIndex added)");
  }
  const cleanText = "Zürich 🚀 Presse: ask the press office today. Recited passage follows here";
  const clean = Buffer.from(stream(cleanText, ".", [sourceOf(cleanText, "Recited passage", "https://example.org/a")]));
  const out = run(governor("google", [policy("redact", { piiTypes: ["email"] })]), pieces(clean, 9));
  const metadata = (bytes: Buffer) => {
    const data = parseSse(bytes.toString("utf8")).events.find((e) => e.data.includes("citationMetadata"))!.data;
    return data.slice(data.indexOf('"citationMetadata"'));
  };
  t.is(metadata(out), metadata(clean), "nothing redacted: the citation sources as they came (the chunk's text field carries released text)");
});

test("google (Vertex AI): citationMetadata.citations follow the redaction of held text like citationSources, uri and title redacted; with nothing redacted they pass byte for byte", (t) => {
  const bytes = (s: string) => Buffer.byteLength(s, "utf8");
  const citationOf = (text: string, part: string, uri: string, title: string) => ({ startIndex: bytes(text.slice(0, text.indexOf(part))), endIndex: bytes(text.slice(0, text.indexOf(part) + part.length)), uri, title, license: "" });
  const chunk = (o: object) => `data: ${JSON.stringify(o)}\r\n\r\n`;
  const candidate = (text: string, extra: object = {}) => ({ candidates: [{ index: 0, content: { role: "model", parts: [{ text }] }, ...extra }], modelVersion: "gemini-2.5-flash" });
  const stream = (text: string, citations: object[]) => {
    let raw = "";
    for (const d of deltasOf(text, 9)) raw += chunk(candidate(d));
    raw += chunk(candidate("", { citationMetadata: { citations } }));
    return raw + chunk({ ...candidate(".", { finishReason: "STOP" }), usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 9 } });
  };
  type Citation = { startIndex?: number; endIndex: number; uri: string; title: string };
  type Chunk = { candidates: { content?: { parts: { text: string }[] }; citationMetadata?: { citations: Citation[] } }[] };
  const parsed = (out: Buffer) => parseSse(out.toString("utf8")).events.map((e) => JSON.parse(e.data) as Chunk);
  const citationsIn = (out: Buffer) => parsed(out).find((c) => c.candidates[0]!.citationMetadata)!.candidates[0]!.citationMetadata!.citations;
  const text = `Zürich 🚀 Presse: mail ${CITED_EMAIL} heute. Recited passage follows here`;
  const raw = Buffer.from(
    stream(text, [citationOf(text, "Recited passage", `https://crm.example/find?u=${CITED_EMAIL}`, `Profile of ${CITED_EMAIL}`), citationOf(text, CITED_EMAIL, "https://example.org/b", "B"), { endIndex: bytes("Zürich"), uri: "https://example.org/c" }]),
  );
  for (const size of [raw.length, 9]) {
    const out = run(governor("google", [policy("redact", { piiTypes: ["email"] })]), pieces(raw, size));
    t.false(out.toString("utf8").includes("jo.smith"));
    const answer = parsed(out).flatMap((c) => c.candidates.flatMap((x) => x.content?.parts.map((p) => p.text) ?? [])).join("");
    t.is(answer, `${text}.`.replace(CITED_EMAIL, "[REDACTED:email]"));
    const citations = citationsIn(out);
    t.deepEqual(citations.map((s) => Buffer.from(answer, "utf8").subarray(s.startIndex ?? 0, s.endIndex).toString("utf8")), ["Recited passage", "[REDACTED:email]", "Zürich"], "byte offsets point at the same text in what the client got");
    t.is(citations[0]!.uri, "https://crm.example/find?u=[REDACTED:email]");
    t.is(citations[0]!.title, "Profile of [REDACTED:email]");
    t.deepEqual(citations[2], citationsIn(raw)[2], "a range before the redaction keeps its bytes (no startIndex added)");
  }
  const cleanText = "Zürich 🚀 Presse: ask the press office today. Recited passage follows here";
  const clean = Buffer.from(stream(cleanText, [citationOf(cleanText, "Recited passage", "https://example.org/a", "A")]));
  const out = run(governor("google", [policy("redact", { piiTypes: ["email"] })]), pieces(clean, 9));
  const metadata = (bytes: Buffer) => {
    const data = parseSse(bytes.toString("utf8")).events.find((e) => e.data.includes("citationMetadata"))!.data;
    return data.slice(data.indexOf('"citationMetadata"'));
  };
  t.is(metadata(out), metadata(clean), "nothing redacted: the citations as they came (the chunk's text field carries released text)");
});

test("openai-compatible reasoning_content (DeepSeek, vLLM behind PROVIDER_OPENAI_URL): held, redacted, its tail in a reasoning_content delta before the answer", (t) => {
  const reasoning = `The user wants mail sent to ${CITED_EMAIL}, so I will confirm it briefly.`;
  const answer = "Done, the mail is on its way.";
  const chunk = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "deepseek-reasoner", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  let raw = chunk({ role: "assistant", content: null, reasoning_content: "" });
  for (let i = 0; i < reasoning.length; i += 5) raw += chunk({ content: null, reasoning_content: reasoning.slice(i, i + 5) });
  for (let i = 0; i < answer.length; i += 5) raw += chunk({ content: answer.slice(i, i + 5), reasoning_content: null });
  raw += chunk({}, "stop") + "data: [DONE]\n\n";
  const out = run(governor("openai", [policy("redact", { piiTypes: ["email"] })]), pieces(Buffer.from(raw), 11));
  const text = out.toString("utf8");
  t.false(text.includes("jo.smith") || text.includes("example.com"));
  const facts = textOf("openai", out);
  t.is(facts.reasoningText, reasoning.replace(CITED_EMAIL, "[REDACTED:email]"));
  t.is(facts.completionText, answer);
  const deltas = parseSse(text).events.filter((e) => e.data !== "[DONE]").map((e) => (JSON.parse(e.data) as { choices: { delta: { content?: string | null; reasoning_content?: string | null } }[] }).choices[0]!.delta);
  const firstAnswer = deltas.findIndex((d) => typeof d.content === "string" && d.content !== "");
  t.true(deltas.slice(firstAnswer).every((d) => !d.reasoning_content), "no reasoning after the answer started");
});

test("cohere: a citation right after the cited address does not let it out under a block policy; unplaced quotes are judged before they leave and lose values found with context", (t) => {
  const stream = (deltas: string[], citation: Record<string, unknown>) => {
    let raw = cohereEvent("message-start", { id: "m3", delta: { message: { role: "assistant" } } });
    raw += cohereEvent("content-start", { index: 0, delta: { message: { content: { type: "text", text: "" } } } });
    for (const d of deltas) raw += cohereEvent("content-delta", { index: 0, delta: { message: { content: { text: d } } } });
    raw += cohereEvent("citation-start", { index: 0, delta: { message: { citations: citation } } });
    raw += cohereEvent("content-delta", { index: 0, delta: { message: { content: { text: " Thanks." } } } });
    raw += cohereEvent("content-end", { index: 0 }) + cohereEvent("message-end", { delta: { finish_reason: "COMPLETE" } });
    return Buffer.from(raw);
  };
  const text = "Please write to the press office at jo.smith@example.com";
  const cited = "press office at jo.smith@example.com";
  const placed = { start: text.indexOf(cited), end: text.length, text: cited, type: "TEXT_CONTENT", content_index: 0 };
  const deltas = ["Please write to the press office at ", "jo.smith", "@example", ".com"];
  // F1: the citation forces the release; the address touches the end of the text, a block policy must still see it.
  const blocked = run(governor("cohere", [policy("block", { piiTypes: ["email"] })]), [stream(deltas, placed)]).toString("utf8");
  t.false(blocked.includes("jo.smith"), "nothing of the address leaves");
  t.regex(blocked, /ERROR/);
  // F3: a quote that cannot be placed (no offsets) holding the address is judged before it leaves.
  const unplaced = run(governor("cohere", [policy("block", { piiTypes: ["email"] })]), [stream(["Hello there, all is well today."], { text: `mail ${CITED_EMAIL}` })]).toString("utf8");
  t.false(unplaced.includes("jo.smith"));
  t.is(citationsOf(Buffer.from(unplaced)).length, 0, "the stream ended before the citation");
  // F2: an SSN that needs its context word, quoted with offsets one off: placed where its text occurs.
  const ssnText = "The customer's SSN is 536 22 8410 and nothing else is on file for this customer today.";
  const ssn = run(governor("cohere", [policy("redact", { piiTypes: ["ssn"] })]), [stream([ssnText.slice(0, 30), ssnText.slice(30)], { start: 23, end: 34, text: "536 22 8410" })]);
  t.false(ssn.toString("utf8").includes("8410"));
  t.is(citationsOf(ssn)[0]!.text, "[REDACTED:ssn]");
  // ... and quoted from somewhere else entirely (not in the answer): the value the stream redacted is replaced.
  const elsewhere = run(governor("cohere", [policy("redact", { piiTypes: ["ssn"] })]), [stream([ssnText], { start: 0, end: 4, text: "id 536 22 8410" })]);
  t.false(elsewhere.toString("utf8").includes("8410"));
});

test("OpenRouter reasoning_details (text items) are governed with the reasoning they repeat", (t) => {
  const reasoning = `Mail goes to ${CITED_EMAIL} today, as the user asked me to do earlier on.`;
  const chunk = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ id: "g1", object: "chat.completion.chunk", created: 1, model: "anthropic/claude-sonnet-4.5", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  let raw = "";
  for (let i = 0; i < reasoning.length; i += 6) {
    const piece = reasoning.slice(i, i + 6);
    raw += chunk({ role: "assistant", content: "", reasoning: piece, reasoning_details: [{ type: "reasoning.text", text: piece, index: 0, format: "anthropic-claude-v1" }] });
  }
  raw += chunk({ content: "Sent." }) + chunk({}, "stop") + "data: [DONE]\n\n";
  const out = run(governor("openai", [policy("redact", { piiTypes: ["email"] })]), pieces(Buffer.from(raw), 13)).toString("utf8");
  t.false(out.includes("jo.smith") || out.includes("example.com"), "neither copy of the reasoning carries the address");
  const details = parseSse(out)
    .events.filter((e) => e.data !== "[DONE]")
    .flatMap((e) => ((JSON.parse(e.data) as { choices: { delta: { reasoning_details?: { text?: string }[] } }[] }).choices[0]!.delta.reasoning_details ?? []).map((d) => d.text ?? ""))
    .join("");
  t.is(details, reasoning.replace(CITED_EMAIL, "[REDACTED:email]"));
});

test("OpenRouter: each signed reasoning_details block is remembered with the text its signature covers, its held tail leaving before the signature", (t) => {
  const first = `Mail goes to ${CITED_EMAIL} today, as the user asked me to do earlier on.`;
  const second = "Nothing private in this second block of thoughts, it is plain text.";
  const third = `Then write to ${CITED_EMAIL} once more, before the end of this turn.`;
  const chunk = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ id: "g2", object: "chat.completion.chunk", created: 1, model: "anthropic/claude-sonnet-4.5", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const block = (text: string, signature: string) => {
    let raw = "";
    for (let i = 0; i < text.length; i += 6) raw += chunk({ role: "assistant", content: "", reasoning_details: [{ type: "reasoning.text", text: text.slice(i, i + 6), index: 0, format: "anthropic-claude-v1" }] });
    return raw + chunk({ role: "assistant", content: "", reasoning_details: [{ type: "reasoning.text", signature, index: 0, format: "anthropic-claude-v1" }] });
  };
  const raw = block(first, "sig-1") + block(second, "sig-2") + block(third, "sig-3") + chunk({ content: "Sent." }) + chunk({}, "stop") + "data: [DONE]\n\n";
  const store = new RedactedThinkingStore();
  const g = createStreamGovernor({ ...governorOptions("openai", [policy("redact", { piiTypes: ["email"] })]), redactedThinking: store.scoped("agt_t") });
  const out = run(g!, pieces(Buffer.from(raw), 13)).toString("utf8");
  t.false(out.includes("jo.smith"));
  // What the client got before each signature is exactly the (redacted) block that signature covers.
  let got = "";
  const before = new Map<string, string>();
  for (const e of parseSse(out).events) {
    if (e.data === "[DONE]") continue;
    for (const d of (JSON.parse(e.data) as { choices: { delta: { reasoning_details?: { text?: string; signature?: string }[] } }[] }).choices[0]!.delta.reasoning_details ?? []) {
      got += d.text ?? "";
      if (d.signature) {
        before.set(d.signature, got);
        got = "";
      }
    }
  }
  const redacted = (s: string) => s.replace(CITED_EMAIL, "[REDACTED:email]");
  t.deepEqual([...before], [["sig-1", redacted(first)], ["sig-2", second], ["sig-3", redacted(third)]]);
  t.is(store.size, 2, "the unchanged block is not remembered");
  t.is(store.restore("agt_t", "sig-1", redacted(first)), first);
  t.is(store.restore("agt_t", "sig-3", redacted(third)), third);
  t.is(store.restore("agt_t", "sig-2", second), undefined);
});

test("a quote that forces held text out never lets out the start of a value still arriving (Gemini citation source, OpenAI annotation, Cohere citation)", (t) => {
  const redact = [policy("redact", { piiTypes: ["email"] })];
  const head = "According to the registry the contact person can be reached by writing to jo.smith@exa";
  const rest = "mple.com during office hours. ";
  // Gemini: a citation source on a mid-stream chunk, covering everything so far.
  const gemini = (text: string, finish?: string, cite?: object) =>
    `data: ${JSON.stringify({ candidates: [{ index: 0, content: { role: "model", parts: [{ text }] }, ...(finish ? { finishReason: finish } : {}), ...(cite ? { citationMetadata: { citationSources: [cite] } } : {}) }] })}\r\n\r\n`;
  const g = run(governor("google", redact), [Buffer.from(gemini(head, undefined, { startIndex: 0, endIndex: Buffer.byteLength(head), uri: "https://r" }) + gemini(rest) + gemini("", "STOP"))]).toString("utf8");
  t.false(g.includes("jo.smith"), "gemini: no part of the address");
  t.true(g.includes("[REDACTED:email]"));
  // OpenAI: an annotation delta before the rest of the content.
  const oa = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "gpt-4o-search-preview", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const o = run(governor("openai", redact), [Buffer.from(oa({ content: head }) + oa({ annotations: [{ type: "url_citation", url_citation: { start_index: 0, end_index: head.length, url: "https://r", title: "r" } }] }) + oa({ content: rest }) + oa({}, "stop") + "data: [DONE]\n\n")]).toString("utf8");
  t.false(o.includes("jo.smith"), "openai: no part of the address");
  // Cohere: a citation (with text) ending in the middle of the address.
  const cited = head.slice(head.indexOf("writing"));
  let raw = cohereEvent("message-start", { id: "m9", delta: { message: { role: "assistant" } } });
  raw += cohereEvent("content-start", { index: 0, delta: { message: { content: { type: "text", text: "" } } } });
  raw += cohereEvent("content-delta", { index: 0, delta: { message: { content: { text: head } } } });
  raw += cohereEvent("citation-start", { index: 0, delta: { message: { citations: { start: head.indexOf("writing"), end: head.length, text: cited, type: "TEXT_CONTENT", content_index: 0 } } } });
  raw += cohereEvent("content-delta", { index: 0, delta: { message: { content: { text: rest } } } });
  raw += cohereEvent("content-end", { index: 0 }) + cohereEvent("message-end", { delta: { finish_reason: "COMPLETE" } });
  const c = run(governor("cohere", redact), [Buffer.from(raw)]).toString("utf8");
  t.false(c.includes("jo.smith"), "cohere: no part of the address");
});

test("a quote that forces held text out never lets out a date of birth whose year has not arrived", (t) => {
  const redact = [policy("redact", { piiTypes: ["date_of_birth"] })];
  const oa = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "gpt-4o-search-preview", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  for (const [head, rest] of [["The registry gives her date of birth: 3 March ", "1990, and her town."], ["The registry says she was born on March ", "3, 1990 in Ohio."], ["The registry says: DOB: 14th of ", "March 1985."]] as const) {
    const annotation = { type: "url_citation", url_citation: { start_index: 0, end_index: head.length, url: "https://r", title: "r" } };
    const out = run(governor("openai", redact), [Buffer.from(oa({ content: head }) + oa({ annotations: [annotation] }) + oa({ content: rest }) + oa({}, "stop") + "data: [DONE]\n\n")]).toString("utf8");
    const text = parseSse(out).events.filter((e) => e.data !== "[DONE]").map((e) => (JSON.parse(e.data) as { choices: { delta: { content?: string } }[] }).choices[0]!.delta.content ?? "").join("");
    t.true(text.includes("[REDACTED:date_of_birth]"), text);
    t.false(/March|14th|\b3\b/.test(text), `no part of the date: ${text}`);
  }
});

test("a PEM private key streamed a few characters at a time never leaves, with or without its END line", (t) => {
  const key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\naFDrBz9vFqU4yQ4N0ZcK0lhz0C0uUuB3n0LzWq0t6kWcM0n5tE2LxJ9Ry1l9+K2b\n";
  const gem = (text: string, finish?: string) => `data: ${JSON.stringify({ candidates: [{ index: 0, content: { role: "model", parts: [{ text }] }, ...(finish ? { finishReason: finish } : {}) }] })}\r\n\r\n`;
  for (const [label, body] of [["complete", `Here is the key:\n${key}-----END RSA PRIVATE KEY-----\nKeep it safe.`], ["cut by max_tokens", `Here is the key:\n${key}aFDrBz9vFq`]] as const) {
    let raw = "";
    for (let i = 0; i < body.length; i += 10) raw += gem(body.slice(i, i + 10));
    const out = run(governor("google", [policy("redact", { piiTypes: ["api_key"] })]), [Buffer.from(raw + gem("", "MAX_TOKENS"))]).toString("utf8");
    const text = parseSse(out).events.flatMap((e) => (JSON.parse(e.data) as { candidates: { content?: { parts: { text?: string }[] } }[] }).candidates[0]!.content?.parts.map((p) => p.text ?? "") ?? []).join("");
    t.false(text.includes("MIIEow") || text.includes("aFDrBz9"), `${label}: ${text}`);
    t.true(text.startsWith("Here is the key:\n[REDACTED:api_key]"), label);
  }
});

test("a cited page's URL and title are the model's output too: a value in them is redacted, in OpenAI annotations and Gemini citation sources", (t) => {
  const redact = [policy("redact", { piiTypes: ["email"] })];
  const text = "The registry lists the contact on its public page, see the link. ";
  const url = `https://registry.example.org/find?u=${CITED_EMAIL}`;
  const oa = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "gpt-4o-search-preview", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const annotation = { type: "url_citation", url_citation: { start_index: 0, end_index: 12, url, title: `Profile of ${CITED_EMAIL}` } };
  const o = run(governor("openai", redact), [Buffer.from(oa({ content: text }) + oa({ annotations: [annotation] }) + oa({}, "stop") + "data: [DONE]\n\n")]).toString("utf8");
  t.false(o.includes("jo.smith"));
  const cite = parseSse(o).events.filter((e) => e.data.includes("url_citation")).map((e) => (JSON.parse(e.data) as { choices: { delta: { annotations: { url_citation: { url: string; title: string } }[] } }[] }).choices[0]!.delta.annotations[0]!.url_citation)[0]!;
  t.is(cite.url, "https://registry.example.org/find?u=[REDACTED:email]");
  t.is(cite.title, "Profile of [REDACTED:email]");
  const gemini = (part: string, finish?: string, sources?: object[]) =>
    `data: ${JSON.stringify({ candidates: [{ index: 0, content: { role: "model", parts: [{ text: part }] }, ...(finish ? { finishReason: finish } : {}), ...(sources ? { citationMetadata: { citationSources: sources } } : {}) }] })}\r\n\r\n`;
  const g = run(governor("google", redact), [Buffer.from(gemini(text) + gemini("", "STOP", [{ startIndex: 0, endIndex: 12, uri: url, title: "Registry" }]))]).toString("utf8");
  t.false(g.includes("jo.smith"));
  t.true(g.includes("find?u=[REDACTED:email]"));
  // Nothing private in them: the event passes byte for byte.
  const clean = oa({ annotations: [{ type: "url_citation", url_citation: { start_index: 0, end_index: 12, url: "https://registry.example.org/", title: "Registry" } }] });
  t.true(run(governor("openai", redact), [Buffer.from(oa({ content: text }) + clean + oa({}, "stop") + "data: [DONE]\n\n")]).toString("utf8").includes(clean));
});

test("OpenRouter: a block whose signature comes with its first text is remembered; a held tail leaves in an item of its own block's index", (t) => {
  const first = `Mail goes to ${CITED_EMAIL} today, as the user asked me to do earlier on.`;
  const second = `Then write to ${CITED_EMAIL} once more, before the end of this turn.`;
  const chunk = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ id: "g3", object: "chat.completion.chunk", created: 1, model: "anthropic/claude-sonnet-4.5", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const item = (o: object) => ({ type: "reasoning.text", format: "anthropic-claude-v1", ...o });
  // Block 0 whole in one item with its signature; block 1 (index 1) streamed, then its signature alone.
  let raw = chunk({ role: "assistant", content: "", reasoning_details: [item({ text: first, signature: "sig-a", index: 0 })] });
  for (let i = 0; i < second.length; i += 6) raw += chunk({ content: "", reasoning_details: [item({ text: second.slice(i, i + 6), index: 1 })] });
  raw += chunk({ content: "", reasoning_details: [item({ signature: "sig-b", index: 1 })] }) + chunk({ content: "Sent." }) + chunk({}, "stop") + "data: [DONE]\n\n";
  const store = new RedactedThinkingStore();
  const g = createStreamGovernor({ ...governorOptions("openai", [policy("redact", { piiTypes: ["email"] })]), redactedThinking: store.scoped("agt_t") });
  const out = run(g!, pieces(Buffer.from(raw), 11)).toString("utf8");
  t.false(out.includes("jo.smith"));
  // What a client gets when it groups the items by index, as OpenRouter's clients do.
  const byIndex = new Map<number, { text: string; signature?: string }>();
  for (const e of parseSse(out).events) {
    if (e.data === "[DONE]") continue;
    for (const d of (JSON.parse(e.data) as { choices: { delta: { reasoning_details?: { text?: string; signature?: string; index: number; format?: string }[] } }[] }).choices[0]!.delta.reasoning_details ?? []) {
      const block = byIndex.get(d.index) ?? { text: "" };
      block.text += d.text ?? "";
      if (d.signature) block.signature = d.signature;
      t.is(d.format, "anthropic-claude-v1", "inserted items keep the block's format");
      byIndex.set(d.index, block);
    }
  }
  const redacted = (s: string) => s.replace(CITED_EMAIL, "[REDACTED:email]");
  t.deepEqual(byIndex.get(0), { text: redacted(first), signature: "sig-a" });
  t.is(byIndex.get(1)?.text, redacted(second), "the held tail of block 1 joins block 1, not block 0");
  t.is(store.restore("agt_t", "sig-a", redacted(first)), first, "signature and first text in one item: remembered");
  t.is(store.restore("agt_t", "sig-b", redacted(second)), second);
});

test("openai: url_citation annotations interleaved with the text deltas, each after the text it covers, point at that text in what the client got, redactions before and after them", (t) => {
  // A long answer's annotations may come one by one between its deltas (not all at the end): each is
  // moved onto the text released so far, which grows between them (the channel's offset index and its
  // kept runs grow with it, never rebuilt).
  const chunk = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ id: "w2", object: "chat.completion.chunk", created: 1, model: "gpt-4o-search-preview", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const sentences = Array.from({ length: 12 }, (_, i) => {
    const email = `agent.${i}@example.org`;
    const link = `([source ${i}](https://example.com/s${i}))`;
    return { email, link, text: `${i % 3 === 0 ? "Zürich 🚀 " : ""}Case ${i}: write to ${email} about it, as described ${link}. ` };
  });
  const text = sentences.map((s) => s.text).join("");
  const annotation = (covered: string, from: number) => {
    const at = text.indexOf(covered, from);
    return { type: "url_citation", url_citation: { start_index: cps(text.slice(0, at)), end_index: cps(text.slice(0, at + covered.length)), url: covered, title: "t" } };
  };
  // After each delta, an annotation for every link and address the text so far has gone past by at
  // least 20 characters (annotations come after the text they cover, not right at its end); the last
  // ones after the last delta.
  let raw = chunk({ role: "assistant", content: "" });
  let sofar = 0;
  const pending = sentences.flatMap((s) => [s.email, s.link].map((covered) => ({ covered, at: text.indexOf(covered) })));
  const expected: string[] = [];
  const annotate = (past: number) => {
    while (pending.length > 0 && pending[0]!.at + pending[0]!.covered.length + 20 <= past) {
      const { covered, at } = pending.shift()!;
      raw += chunk({ annotations: [annotation(covered, at)] });
      expected.push(covered.includes("@") ? "[REDACTED:email]" : covered);
    }
  };
  for (const d of deltasOf(text, 9)) {
    raw += chunk({ content: d });
    sofar += d.length;
    annotate(sofar);
  }
  annotate(Infinity);
  raw += chunk({}, "stop") + "data: [DONE]\n\n";
  const answerWanted = sentences.reduce((s, { email }) => s.replace(email, "[REDACTED:email]"), text);
  for (const size of [raw.length, 13]) {
    const out = run(governor("openai", [policy("redact", { piiTypes: ["email"] })]), pieces(Buffer.from(raw), size));
    const answer = [...textOf("openai", out).completionText];
    t.is(answer.join(""), answerWanted);
    const cites = parseSse(out.toString("utf8"))
      .events.filter((e) => e.data.includes("url_citation"))
      .map((e) => (JSON.parse(e.data) as { choices: { delta: { annotations: { url_citation: { start_index: number; end_index: number } }[] } }[] }).choices[0]!.delta.annotations[0]!.url_citation);
    t.deepEqual(
      cites.map((c) => answer.slice(c.start_index, c.end_index).join("")),
      expected,
      "each annotation's code point offsets point at the link, or the label of the address, it covered",
    );
  }
});

test("a provider's mid-stream error event: the text before the window leaves (redacted), the held tail is dropped, not released (fail closed), and the error event passes last", (t) => {
  const redact = [policy("redact", { piiTypes: ["email", "ssn"] })];
  // The failure splits an SSN: "536-22-87" is no detector's format, and was released as it came before.
  const TEXT = `Hello there, write to jo@example.com about the renewal. ${"The contract terms stay as they were agreed last spring. ".repeat(2)}Your number is 536-22-87`;
  const oa = (o: object) => `data: ${JSON.stringify(o)}\n\n`;
  const chunk = (content: string) => oa({ id: "c", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", choices: [{ index: 0, delta: { content } }] });
  const error = oa({ error: { message: "overloaded", type: "server_error", code: "overloaded" } });
  const anthropic =
    `event: message_start\ndata: ${JSON.stringify({ type: "message_start", message: { id: "m", type: "message", role: "assistant", model: "claude-3-5-haiku", content: [], usage: { input_tokens: 3, output_tokens: 1 } } })}\n\n` +
    `event: content_block_start\ndata: ${JSON.stringify({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } })}\n\n` +
    `event: content_block_delta\ndata: ${JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: TEXT } })}\n\n`;
  const anthropicError = `event: error\ndata: ${JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })}\n\n`;
  const gemini = (o: object) => `data: ${JSON.stringify(o)}\r\n\r\n`;
  const geminiError = gemini({ error: { code: 503, message: "overloaded", status: "UNAVAILABLE" } });
  const cohere = (type: string, o: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...o })}\n\n`;
  const cohereError = cohere("message-end", { delta: { finish_reason: "ERROR", error: "internal error" } });
  // Mistral's own failure: a chunk finishing with "error" (no text; its usage rides along).
  const mistralFinish = oa({ id: "c", object: "chat.completion.chunk", created: 1, model: "mistral-small-latest", usage: { prompt_tokens: 3, completion_tokens: 9 }, choices: [{ index: 0, delta: { content: "" }, finish_reason: "error" }] });
  for (const [provider, raw, err] of [
    ["openai", chunk(TEXT), error],
    ["mistral", chunk(TEXT), error],
    ["mistral", chunk(TEXT), mistralFinish],
    ["anthropic", anthropic, anthropicError],
    ["google", gemini({ candidates: [{ index: 0, content: { role: "model", parts: [{ text: TEXT }] } }] }), geminiError],
    ["cohere", cohere("content-start", { index: 0, delta: { message: { content: { type: "text", text: "" } } } }) + cohere("content-delta", { index: 0, delta: { message: { content: { text: TEXT } } } }), cohereError],
  ] as const) {
    for (const chunks of [[raw + err], [raw, err]]) {
      const out = run(governor(provider, redact), chunks.map((c) => Buffer.from(c))).toString("utf8");
      const at = out.indexOf(err);
      t.true(at >= 0, `${provider}: the error event passes`);
      t.true(out.endsWith(err), `${provider}: nothing after the error event: ${out.slice(at + err.length)}`);
      const before = out.slice(0, at);
      t.true(before.includes("Hello there, write to [REDACTED:email] about the renewal."), `${provider}: the text before the window leaves, redacted: ${before}`);
      t.false(out.includes("jo@example.com"));
      t.false(before.includes("536-22"), `${provider}: the split value held at the tail is dropped`);
      t.false(before.includes("Your number is"), `${provider}: the whole held tail is dropped`);
    }
  }
  // Mistral's [DONE] after its failure chunk passes too, and releases nothing that was held.
  const done = "data: [DONE]\n\n";
  const after = run(governor("mistral", redact), [Buffer.from(chunk(TEXT)), Buffer.from(mistralFinish), Buffer.from(done)]).toString("utf8");
  t.true(after.endsWith(mistralFinish + done), after.slice(-300));
  t.false(after.includes("536-22") || after.includes("Your number is"), "the held tail stays dropped");
  // A block policy that the held tail alone matches still ends the stream with its own error event.
  const blocked = run(governor("openai", [policy("block", { keywords: ["Your number"] })]), [Buffer.from(chunk(TEXT) + error)]).toString("utf8");
  t.regex(blocked, /policy_violation|response blocked/);
  t.false(blocked.includes("Your number"));
});

test("a Mistral chunk finishing with \"error\" that still carries text is governed as any finishing chunk: its text is judged and redacted, the held tail released", (t) => {
  const redact = [policy("redact", { piiTypes: ["ssn"] })];
  const data = (o: object) => `data: ${JSON.stringify(o)}\n\n`;
  const raw = data({ id: "c", object: "chat.completion.chunk", created: 1, model: "mistral-small-latest", choices: [{ index: 0, delta: { content: "Your number is 536-22-8726" }, finish_reason: "error" }] });
  const out = run(governor("mistral", redact), [Buffer.from(raw + "data: [DONE]\n\n")]).toString("utf8");
  t.false(out.includes("536-22-8726"));
  t.true(out.includes("Your number is [REDACTED:ssn]"), out);
  t.true(out.includes('"finish_reason":"error"'));
});

/** One OpenAI chat-completion chunk of choice 0 (the tool-call tests' streams). */
const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

// ---- Tool-call arguments: held until the call's arguments are complete, judged whole (block before any
// of them leaves), redacted leaf by leaf (the arguments stay valid JSON), every provider.

const SECRET_ARGS = { to: "jane.doe@example.com", note: "Customer SSN 536-22-8726, call back", count: 3, nested: { cc: ["ops@example.org"] } };
const SECRET_ARGS_REDACTED = { to: "[REDACTED:email]", note: "Customer SSN [REDACTED:ssn], call back", count: 3, nested: { cc: ["[REDACTED:email]"] } };
const CLEAN_ARGS = { city: "Paris", days: 3, units: "metric" };

/** The arguments of each tool call the client got, parsed (JSON text as the fragments join, or the object). */
function argsOf(provider: ProviderName, out: Buffer): unknown[] {
  return (textOf(provider, out).toolArguments ?? []).map((a) => (typeof a === "string" ? (JSON.parse(a) as unknown) : a));
}

for (const provider of PROVIDERS) {
  const script = (args: Record<string, unknown>[], extra: Partial<FakeScript> = {}): FakeScript => ({
    text: "",
    toolCalls: args.map((a, i) => ({ name: `tool_${i}`, arguments: a })),
    usage: { inputTokens: 10, outputTokens: 30 },
    argsChunkSize: 5,
    ...extra,
  });

  test.serial(`${provider}: PII in streamed tool-call arguments is redacted leaf by leaf; the arguments stay valid JSON, other calls intact`, async (t) => {
    const raw = await upstream(provider, script([CLEAN_ARGS, SECRET_ARGS]));
    t.deepEqual(argsOf(provider, raw), [CLEAN_ARGS, SECRET_ARGS], "the upstream really carried both calls");
    for (const [name, chunks] of [["whole", [raw]], ["7-byte writes", pieces(raw, 7)], ["1-byte writes", pieces(raw, 1)]] as const) {
      const out = run(governor(provider, [policy("redact", { piiTypes: ["email", "ssn"] })]), [...chunks]);
      t.deepEqual(argsOf(provider, out), [CLEAN_ARGS, SECRET_ARGS_REDACTED], name);
      t.deepEqual(
        textOf(provider, out).toolCalls.map((c) => c.name),
        ["tool_0", "tool_1"],
        `${name}: names and order kept`,
      );
      const text = out.toString("utf8");
      t.false(text.includes("jane") || text.includes("8726") || text.includes("ops@"), `${name}: no part of a value left`);
    }
  });

  test.serial(`${provider}: a block policy ends the stream before any of the offending call's arguments leave`, async (t) => {
    const raw = await upstream(provider, script([SECRET_ARGS], { argsChunkSize: 3 }));
    for (const chunks of [[raw], pieces(raw, 5)]) {
      const g = governor(provider, [policy("block", { piiTypes: ["ssn"] })]);
      const out = run(g, [...chunks]);
      t.true(g.stopped);
      const facts = textOf(provider, out);
      t.regex(facts.errorMessage ?? "", /blocked by policy/);
      const text = out.toString("utf8");
      t.false(text.includes("jane") || text.includes("536") || text.includes("Customer"), "no fragment of the arguments reached the client");
    }
  });

  test.serial(`${provider}: a keyword block policy judges the arguments too; clean arguments pass whole`, async (t) => {
    const raw = await upstream(provider, script([{ command: "rm -rf /var/lib/data", confirm: true }]));
    const g = governor(provider, [policy("block", { keywords: ["rm -rf"] })]);
    run(g, [raw]);
    t.true(g.stopped, "the keyword in the arguments blocked the stream");
    const clean = await upstream(provider, script([CLEAN_ARGS]));
    const g2 = governor(provider, [policy("block", { keywords: ["rm -rf"] }), policy("redact", { piiTypes: ["email"] })]);
    const out = run(g2, pieces(clean, 9));
    t.false(g2.stopped);
    t.deepEqual(argsOf(provider, out), [CLEAN_ARGS]);
  });

  test.serial(`${provider}: policies that read no text leave tool-call events byte for byte`, async (t) => {
    const raw = await upstream(provider, script([SECRET_ARGS]));
    const injection = create(PolicySchema, { id: "pol_inj", name: "injection", status: "active", action: "block", priority: 1, conditions: create(PolicyConditionsSchema, { direction: "outbound", injectionScoreGte: 0.9 }) });
    const g = createStreamGovernor(governorOptions(provider, [injection]));
    const out = g ? run(g, [raw]) : raw;
    t.is(out.toString("utf8"), raw.toString("utf8"));
  });
}

test("openai: arguments cut off by the stream's end are judged and released, redacted, in an inserted tool-call delta", (t) => {
  const raw =
    chunk({ role: "assistant", tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "send", arguments: "" } }] }) +
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"to": "jane.doe@exa' } }] }) +
    chunk({ tool_calls: [{ index: 0, function: { arguments: 'mple.com", "body": "hi' } }] }) +
    chunk({}, "tool_calls") +
    "data: [DONE]\n\n";
  const out = run(governor("openai", [policy("redact", { piiTypes: ["email"] })]), [Buffer.from(raw)]).toString("utf8");
  t.false(out.includes("jane"));
  const events = parseSse(out).events.map((e) => e.data);
  const inserted = events.findIndex((d) => d.includes("REDACTED:email"));
  t.true(inserted > 0);
  t.true(events[inserted + 1]!.includes('"finish_reason":"tool_calls"'), "inserted just before the finish chunk");
  const delta = (JSON.parse(events[inserted]!) as { choices: { delta: { tool_calls: { index: number; function: { arguments: string } }[] } }[] }).choices[0]!.delta;
  t.deepEqual(delta.tool_calls, [{ index: 0, function: { arguments: '{"to": "[REDACTED:email]", "body": "hi' } }], "not JSON: the text redacted as it is");
});

test("openai: a value redacted in the answer text is also redacted where a tool-call argument repeats it (in another form, found by the answer's context)", (t) => {
  const raw =
    chunk({ role: "assistant", content: "The customer's SSN is 536-22-8726, filing it now." }) +
    chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "file", arguments: '{"id": "536228726", "ref": "536-22-8726"}' } }] }) +
    chunk({}, "tool_calls") +
    "data: [DONE]\n\n";
  const out = run(governor("openai", [policy("redact", { piiTypes: ["ssn"] })]), [Buffer.from(raw)]);
  t.false(out.toString("utf8").includes("536-22-8726"));
  t.deepEqual(argsOf("openai", out), [{ id: "[REDACTED:ssn]", ref: "[REDACTED:ssn]" }]);
});

// Audit (session 16): a call's values were scanned alone, so a value whose context word was in the
// answer text ("the customer's SSN" then a bare number) left unredacted, although the whole-answer
// judgement (and the JSON path) found it; a block then came only after [DONE].
for (const provider of ["openai", "anthropic", "google"] as const) {
  const sse = (o: object, event?: string) => `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(o)}\n\n`;
  const streams: Record<typeof provider, string> = {
    openai:
      sse({ choices: [{ index: 0, delta: { role: "assistant", content: "Filing the customer's SSN now." } }] }) +
      sse({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "file", arguments: "" } }] } }] }) +
      sse({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"value":"536228726"}' } }] } }] }) +
      sse({ choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] }) +
      "data: [DONE]\n\n",
    anthropic:
      sse({ type: "message_start", message: { id: "m", type: "message", role: "assistant", model: "claude", content: [], usage: { input_tokens: 3, output_tokens: 1 } } }, "message_start") +
      sse({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }, "content_block_start") +
      sse({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Filing the customer's SSN now." } }, "content_block_delta") +
      sse({ type: "content_block_stop", index: 0 }, "content_block_stop") +
      sse({ type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "t1", name: "file", input: {} } }, "content_block_start") +
      sse({ type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"value":"536228726"}' } }, "content_block_delta") +
      sse({ type: "content_block_stop", index: 1 }, "content_block_stop") +
      sse({ type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 9 } }, "message_delta") +
      sse({ type: "message_stop" }, "message_stop"),
    google:
      sse({ candidates: [{ index: 0, content: { role: "model", parts: [{ text: "Filing the customer's SSN now." }] } }] }) +
      sse({ candidates: [{ index: 0, content: { role: "model", parts: [{ functionCall: { name: "file", args: { value: "536228726" } } }] }, finishReason: "STOP" }] }),
  };
  test(`${provider}: a tool-call value is scanned with the answer's context before it (redacted, or blocked before it leaves)`, (t) => {
    const out = run(governor(provider, [policy("redact", { piiTypes: ["ssn"] })]), [Buffer.from(streams[provider])]);
    t.false(out.toString("utf8").includes("536228726"));
    t.deepEqual(argsOf(provider, out), [{ value: "[REDACTED:ssn]" }]);
    const g = governor(provider, [policy("block", { piiTypes: ["ssn"] })]);
    const blocked = run(g, [Buffer.from(streams[provider])]).toString("utf8");
    t.true(g.stopped);
    t.false(blocked.includes("536228726"));
  });
}

test("openai: a custom tool's free-text input is judged as one text even when it parses as JSON, and a brace in it does not end it", (t) => {
  for (const input of ["4111111111111111", '{"jane.doe@example.com": true}', 'print({"to": "jane.doe@example.com"})\nprint("done")']) {
    let raw = chunk({ role: "assistant", tool_calls: [{ index: 0, id: "call_1", type: "custom", custom: { name: "run", input: "" } }] });
    for (let i = 0; i < input.length; i += 3) raw += chunk({ tool_calls: [{ index: 0, custom: { input: input.slice(i, i + 3) } }] });
    raw += chunk({}, "tool_calls") + "data: [DONE]\n\n";
    const out = run(governor("openai", [policy("redact", { piiTypes: ["credit_card", "email"] })]), [Buffer.from(raw)]).toString("utf8");
    t.false(out.includes("jane") || out.includes("41111111"), input);
    const got = parseSse(out)
      .events.filter((e) => e.data.includes('"custom"'))
      .map((e) => (JSON.parse(e.data) as { choices: { delta: { tool_calls: { custom: { input: string } }[] } }[] }).choices[0]!.delta.tool_calls[0]!.custom.input)
      .join("");
    t.true(got.includes("[REDACTED:"), `${input} → ${got}`);
  }
});

test("mistral: every tool call leaves whole in its own delta, with its name, even when its arguments are not complete JSON", (t) => {
  const ms = (o: object) => `data: ${JSON.stringify(o)}\n\n`;
  const raw =
    ms({ id: "x", object: "chat.completion.chunk", created: 1, model: "mistral-small-latest", choices: [{ index: 0, delta: { role: "assistant", content: "", tool_calls: [{ id: "a1", index: 0, function: { name: "send", arguments: '{"to": "jane.doe@example.com", "body": "Dear Jane, as discussed' } }] }, finish_reason: null }] }) +
    ms({ id: "x", object: "chat.completion.chunk", created: 1, model: "mistral-small-latest", choices: [{ index: 0, delta: { tool_calls: [{ id: "a2", index: 0, function: { name: "log", arguments: '{"note": "sent to ops@example.org"}' } }] }, finish_reason: null }] }) +
    ms({ id: "x", object: "chat.completion.chunk", created: 1, model: "mistral-small-latest", choices: [{ index: 0, delta: { content: "" }, finish_reason: "length" }] }) +
    "data: [DONE]\n\n";
  const out = run(governor("mistral", [policy("redact", { piiTypes: ["email"] })]), [Buffer.from(raw)]).toString("utf8");
  const calls = parseSse(out)
    .events.filter((e) => e.data.includes("tool_calls"))
    .map((e) => (JSON.parse(e.data) as { choices: { delta: { tool_calls: { id: string; function: { name: string; arguments: string } }[] } }[] }).choices[0]!.delta.tool_calls[0]!);
  t.deepEqual(
    calls.map((c) => [c.id, c.function.name, c.function.arguments]),
    [
      ["a1", "send", '{"to": "[REDACTED:email]", "body": "Dear Jane, as discussed'],
      ["a2", "log", '{"note": "sent to [REDACTED:email]"}'],
    ],
    "no inserted delta: each call in its own, whole",
  );
});

test("openai: brackets and escaped quotes inside string values do not end a call early; a call that never completes leaves when the next call starts", (t) => {
  const tricky = JSON.stringify({ code: 'function f() { return "}]"; } // \\"}', to: "jane.doe@example.com" });
  const broken = '{"to": "ops@example.org", "body": "unterminated';
  let raw = chunk({ role: "assistant", tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "run", arguments: "" } }] });
  for (const ch of broken) raw += chunk({ tool_calls: [{ index: 0, function: { arguments: ch } }] });
  raw += chunk({ tool_calls: [{ index: 1, id: "call_2", type: "function", function: { name: "mail", arguments: "" } }] });
  for (const ch of tricky) raw += chunk({ tool_calls: [{ index: 1, function: { arguments: ch } }] });
  raw += chunk({}, "tool_calls") + "data: [DONE]\n\n";
  const out = run(governor("openai", [policy("redact", { piiTypes: ["email"] })]), [Buffer.from(raw)]);
  const text = out.toString("utf8");
  t.false(text.includes("jane") || text.includes("ops@"));
  const events = parseSse(text).events.map((e) => e.data);
  const secondStart = events.findIndex((d) => d.includes('"call_2"'));
  const firstArgs = events.findIndex((d) => d.includes("unterminated"));
  t.is(firstArgs, secondStart - 1, "the first call's arguments leave just before the second call starts");
  const args = (textOf("openai", out).toolArguments ?? []) as string[];
  t.is(args[0], '{"to": "[REDACTED:email]", "body": "unterminated', "not JSON: redacted as text");
  t.deepEqual(JSON.parse(args[1]!), { code: 'function f() { return "}]"; } // \\"}', to: "[REDACTED:email]" });
  const lastFragment = events.findIndex((d) => d.includes("REDACTED:email") && d.includes("return"));
  t.is(events[lastFragment + 1]!.includes('"finish_reason":"tool_calls"'), true, "the whole arguments leave in the call's last fragment, before the finish");
});

test("streams: a card number written as a JSON number in tool-call arguments is redacted (OpenAI fragments, Gemini args)", (t) => {
  const raw =
    chunk({ role: "assistant", tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "charge", arguments: "" } }] }) +
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"card": 41111111' } }] }) +
    chunk({ tool_calls: [{ index: 0, function: { arguments: "11111111}" } }] }) +
    chunk({}, "tool_calls") +
    "data: [DONE]\n\n";
  const out = run(governor("openai", [policy("redact", { piiTypes: ["credit_card"] })]), [Buffer.from(raw)]);
  t.deepEqual(argsOf("openai", out), [{ card: "[REDACTED:credit_card]" }]);
  const gemini = `data: ${JSON.stringify({ candidates: [{ index: 0, content: { role: "model", parts: [{ functionCall: { name: "charge", args: { card: 4111111111111111 } } }] }, finishReason: "STOP" }] })}\r\n\r\n`;
  const g = run(governor("google", [policy("redact", { piiTypes: ["credit_card"] })]), [Buffer.from(gemini)]);
  t.deepEqual(argsOf("google", g), [{ card: "[REDACTED:credit_card]" }]);
});

// --- session 17 audit: a leading UTF-8 BOM hid the first event from the governor ---

test("a leading UTF-8 BOM (ignored by SSE parsers) does not let the first event pass ungoverned; it stays in front, unchanged events byte for byte", (t) => {
  const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
  const first = (provider: ProviderName, text: string) =>
    provider === "google"
      ? `data: ${JSON.stringify({ candidates: [{ index: 0, content: { role: "model", parts: [{ text }] }, finishReason: "STOP" }] })}\r\n\r\n`
      : `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model: "m", choices: [{ index: 0, delta: { content: text }, finish_reason: null }] })}\n\n`;
  const rest = (provider: ProviderName) => (provider === "google" ? "" : `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model: "m", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`);
  for (const provider of ["openai", "google"] as const) {
    const raw = Buffer.concat([BOM, Buffer.from(first(provider, SECRET) + rest(provider), "utf8")]);
    for (const size of [1, 2, 5, raw.length]) {
      const redacted = run(governor(provider, [policy("redact", { piiTypes: ["ssn", "credit_card"] })]), pieces(raw, size));
      t.false(redacted.toString("utf8").includes("8726"), `${provider} ${size}: the first event was governed`);
      t.true(redacted.subarray(0, 3).equals(BOM), `${provider} ${size}: the BOM is still the stream's first bytes`);
      t.is(textOf(provider, redacted).completionText, REDACTED, `${provider} ${size}`);
      const g = governor(provider, [policy("block", { piiTypes: ["ssn"] })]);
      const blocked = run(g, pieces(raw, size));
      t.true(g.stopped, `${provider} ${size}: the block policy saw the first event`);
      t.false(blocked.toString("utf8").includes("536"));
      // An event with nothing to change leaves as it came, behind the BOM (OpenAI: a role-only first chunk).
      const unchanged = provider === "google" ? first(provider, "Nothing to hide here.") : `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model: "m", choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] })}\n\n`;
      const clean = Buffer.concat([BOM, Buffer.from(unchanged + rest(provider), "utf8")]);
      const out = run(governor(provider, [policy("redact", { piiTypes: ["ssn"] })]), pieces(clean, size));
      t.true(out.subarray(0, 3 + Buffer.byteLength(unchanged)).equals(clean.subarray(0, 3 + Buffer.byteLength(unchanged))), `${provider} ${size}: BOM and first event byte for byte`);
    }
  }
});

test("openai chat: log probabilities are dropped from governed chunks and from a redacted JSON answer", (t) => {
  const chunk = (content: string) => `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content }, logprobs: { content: [{ token: content, logprob: -0.1, bytes: [...Buffer.from(content)], top_logprobs: [] }] }, finish_reason: null }] })}\n\n`;
  const stream = Buffer.from(chunk("SSN 536-22-") + chunk("8726 noted") + "data: [DONE]\n\n", "utf8");
  const out = run(governor("openai", [policy("redact", { piiTypes: ["ssn"] })]), [stream]).toString("utf8");
  t.false(out.includes("8726"), out);
  t.false(out.includes('"logprobs":{'), "every chunk's logprobs dropped");
  const json = { choices: [{ index: 0, message: { role: "assistant", content: "SSN 536-22-8726" }, logprobs: { content: [{ token: "536", logprob: -1 }] }, finish_reason: "stop" }] };
  const redacted = getProvider("openai")!.mapCompletionText(json, (s) => s.replace("536-22-8726", "[REDACTED:ssn]")) as typeof json;
  getProvider("openai")!.afterRedaction!(json, redacted, (s) => s);
  t.is(redacted.choices[0]!.logprobs as unknown, null);
});
