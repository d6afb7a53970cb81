// Outbound policies judge the reasoning a JSON answer shows beside its text (Anthropic thinking blocks,
// Gemini thought parts, Mistral thinking chunks, Cohere tool plans), in one process (real handler,
// governance state, undici, an upstream HTTP server answering what each test sets):
// - a redact policy masks it, a block policy refuses the answer, no policy passes it byte for byte;
// - an Anthropic thinking block the sidecar redacted gets its original text back (its signature covers
//   the original) when the client sends it back in the next turn;
// - Cohere citations and Gemini grounding segments, which quote the answer by offset, follow their
//   redaction; one that cannot be placed is redacted on its own.
import test from "ava";
import { create } from "@bufbuild/protobuf";
import { PolicyConditionsSchema, PolicySchema, type Policy, type Trace } from "@agentgov/proto";
import { RedactedThinkingStore } from "../policy/thinking/index.js";
import { governanceState, startInProcessProxy, type InProcessProxy } from "./testing/in-process-proxy.js";

const KEY = "sk_reasoning_test_key";
const AGENT = "agt_01REASON00000000000000000";
const EMAIL = "jo.smith@example.com";

function policy(id: string, action: "block" | "redact"): Policy {
  return create(PolicySchema, { id, name: id, status: "active", action, priority: 1, conditions: create(PolicyConditionsSchema, { direction: "outbound", piiTypes: ["email"] }) });
}

type Provider = "anthropic" | "google" | "mistral" | "cohere";

interface Case {
  path: string;
  headers: Record<string, string>;
  request: object;
  /** A JSON answer whose reasoning (only) holds EMAIL. */
  answer: object;
  /** The reasoning text of an answer as the client got it. */
  reasoning(json: unknown): string;
}

type J = Record<string, unknown>;
/** The value at `path` inside parsed JSON (objects by key, arrays by index). */
const at = (v: unknown, ...path: (string | number)[]): unknown => path.reduce<unknown>((o, k) => (o as Record<string | number, unknown> | undefined)?.[k], v);
const hello = [{ role: "user", content: "hello" }];

const CASES: Record<Provider, Case> = {
  anthropic: {
    path: "/v1/proxy/anthropic/v1/messages",
    headers: { "x-api-key": "sk-ant-x", "anthropic-version": "2023-06-01" },
    request: { model: "claude-sonnet-4-5", max_tokens: 100, messages: hello },
    answer: {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [
        { type: "thinking", thinking: `The user is ${EMAIL}; I will look them up.`, signature: "sig-anthropic-1" },
        { type: "tool_use", id: "toolu_1", name: "lookup", input: { who: "the user" } },
      ],
      stop_reason: "tool_use",
      usage: { input_tokens: 10, output_tokens: 5 },
    },
    reasoning: (j) => String(at(j, "content", 0, "thinking")),
  },
  google: {
    path: "/v1/proxy/google/v1beta/models/gemini-2.5-flash:generateContent",
    headers: { "x-goog-api-key": "g-x" },
    request: { contents: [{ role: "user", parts: [{ text: "hello" }] }] },
    answer: {
      candidates: [{ index: 0, content: { role: "model", parts: [{ text: `Summary: mail ${EMAIL}.`, thought: true }, { text: "Done." }] }, finishReason: "STOP" }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      modelVersion: "gemini-2.5-flash",
    },
    reasoning: (j) => String(at(j, "candidates", 0, "content", "parts", 0, "text")),
  },
  mistral: {
    path: "/v1/proxy/mistral/v1/chat/completions",
    headers: { authorization: "Bearer m-x" },
    request: { model: "magistral-medium-latest", messages: hello },
    answer: {
      id: "c1",
      object: "chat.completion",
      created: 1,
      model: "magistral-medium-2509",
      choices: [{ index: 0, message: { role: "assistant", content: [{ type: "thinking", thinking: [{ type: "text", text: `Write to ${EMAIL}.` }] }, { type: "text", text: "Done." }] }, finish_reason: "stop" }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    },
    reasoning: (j) => String(at(j, "choices", 0, "message", "content", 0, "thinking", 0, "text")),
  },
  cohere: {
    path: "/v1/proxy/cohere/v2/chat",
    headers: { authorization: "Bearer c-x" },
    request: { model: "command-a-03-2025", messages: hello },
    answer: {
      id: "c1",
      finish_reason: "TOOL_CALL",
      message: { role: "assistant", tool_plan: `I will mail ${EMAIL}.`, tool_calls: [{ id: "mail_1", type: "function", function: { name: "mail", arguments: "{}" } }] },
      usage: { billed_units: { input_tokens: 10, output_tokens: 5 }, tokens: { input_tokens: 74, output_tokens: 5 } },
    },
    reasoning: (j) => String(at(j, "message", "tool_plan")),
  },
};

interface Setup extends InProcessProxy {
  /** What the upstream answers next (an object as JSON, a string as it is). */
  answer(body: object | string): void;
  /** The request bodies the upstream received, in order. */
  received: unknown[];
}

async function setup(policies: Policy[], thinking?: RedactedThinkingStore): Promise<Setup> {
  let next: object | string = {};
  const received: unknown[] = [];
  const proxy = await startInProcessProxy(
    governanceState({ tenant: "ten_reason", agent: AGENT, key: KEY }, policies),
    (body, res) => {
      received.push(JSON.parse(body.toString("utf8")));
      res.writeHead(200, { "content-type": "application/json" });
      res.end(typeof next === "string" ? next : JSON.stringify(next));
    },
    (deps) => {
      const url = deps.baseUrls.openai!;
      deps.baseUrls = { openai: url, anthropic: url, google: url, mistral: url, cohere: url };
      if (thinking) deps.redactedThinking = thinking;
    },
  );
  return { ...proxy, received, answer: (b) => (next = b) };
}

async function send(s: Setup, c: Case, body: object = c.request): Promise<{ status: number; text: string }> {
  const res = await fetch(`${s.url}${c.path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-service-key": KEY, "x-service-agent": AGENT, ...c.headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

async function traceOf(s: Setup, n: number): Promise<Trace> {
  for (let i = 0; i < 200 && s.traces.length < n; i++) await new Promise((r) => setTimeout(r, 10));
  if (s.traces.length < n) throw new Error("no trace");
  return s.traces[n - 1]!;
}

for (const [provider, c] of Object.entries(CASES) as [Provider, Case][]) {
  test(`${provider}: an outbound redact policy masks e-mail in the reasoning of a JSON answer; the trace records the finding`, async (t) => {
    const s = await setup([policy("pol_redact", "redact")]);
    try {
      s.answer(c.answer);
      const r = await send(s, c);
      t.is(r.status, 200);
      t.false(r.text.includes(EMAIL), "the client never gets the address");
      const json = JSON.parse(r.text) as unknown;
      t.is(c.reasoning(json), c.reasoning(c.answer).replace(EMAIL, "[REDACTED:email]"));
      const tr = await traceOf(s, 1);
      t.true(tr.piiDetections.some((d) => d.entityType === "email" && d.source === "completion"));
      t.true(tr.policiesFired.includes("pol_redact"));
      t.false(tr.completion.includes(EMAIL));
    } finally {
      await s.close();
    }
  });

  test(`${provider}: an outbound block policy refuses an answer whose reasoning holds e-mail`, async (t) => {
    const s = await setup([policy("pol_block", "block")]);
    try {
      s.answer(c.answer);
      const r = await send(s, c);
      t.is(r.status, 403);
      t.false(r.text.includes(EMAIL));
      t.is((JSON.parse(r.text) as { error: { code: string; policy_id: string } }).error.policy_id, "pol_block");
      t.is((await traceOf(s, 1)).status, "blocked");
    } finally {
      await s.close();
    }
  });

  test(`${provider}: without outbound policies the answer's reasoning passes byte for byte, unscanned`, async (t) => {
    const s = await setup([]);
    try {
      s.answer(c.answer);
      const r = await send(s, c);
      t.is(r.status, 200);
      t.is(r.text, JSON.stringify(c.answer));
      const tr = await traceOf(s, 1);
      t.deepEqual(tr.piiDetections.filter((d) => d.source === "completion"), [], "reasoning is scanned only when an outbound policy judges it");
    } finally {
      await s.close();
    }
  });
}

test("anthropic: a thinking block the sidecar redacted is restored to its signed original when the client sends it back; other blocks go as sent", async (t) => {
  const store = new RedactedThinkingStore();
  const s = await setup([policy("pol_redact", "redact")], store);
  const c = CASES.anthropic;
  try {
    s.answer(c.answer);
    const first = JSON.parse((await send(s, c)).text) as { content: J[] };
    const given = first.content[0]!;
    t.is(given.signature, "sig-anthropic-1", "the signature goes to the client unchanged");
    t.true(String(given.thinking).includes("[REDACTED:email]"));
    t.is(store.size, 1);

    // The tool loop's next turn: the assistant turn as the client got it, then the tool result.
    const toolResult = { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "found" }] };
    const unknown = { type: "thinking", thinking: "Other thoughts.", signature: "sig-other" };
    const next = { ...c.request, messages: [...hello, { role: "assistant", content: [given, first.content[1]] }, toolResult, { role: "assistant", content: [unknown] }, toolResult] };
    s.answer({ ...c.answer, content: [{ type: "text", text: "Found them." }] });
    const r = await send(s, c, next);
    t.is(r.status, 200);
    const forwarded = s.received[1] as { messages: { content: J[] }[] };
    t.deepEqual(forwarded.messages[1]!.content[0], (c.answer as { content: J[] }).content[0], "the provider gets back the block it signed");
    t.deepEqual(forwarded.messages[3]!.content[0], unknown, "a block the sidecar did not redact goes as sent");

    // A block whose text the client changed is not restored (the signature would not match it either).
    const edited = { ...c.request, messages: [...hello, { role: "assistant", content: [{ ...given, thinking: "edited" }, first.content[1]] }, toolResult] };
    await send(s, c, edited);
    t.is((s.received[2] as { messages: { content: J[] }[] }).messages[1]!.content[0]!.thinking, "edited");
  } finally {
    await s.close();
  }
});

test("openai (OpenRouter): a signed reasoning_details block the sidecar redacted is restored when the client sends it back; others go as sent", async (t) => {
  const store = new RedactedThinkingStore();
  const s = await setup([policy("pol_redact", "redact")], store);
  const c: Case = {
    path: "/v1/proxy/openai/v1/chat/completions",
    headers: { authorization: "Bearer or-x" },
    request: { model: "anthropic/claude-sonnet-4.5", messages: hello },
    answer: {},
    reasoning: (j) => String(at(j, "choices", 0, "message", "reasoning_details", 0, "text")),
  };
  const thought = `The user is ${EMAIL}; I will look them up.`;
  const signed = { type: "reasoning.text", text: thought, signature: "sig-or-1", format: "anthropic-claude-v1", index: 0 };
  const call = { id: "call_1", type: "function", function: { name: "lookup", arguments: '{"who":"the user"}' } };
  try {
    s.answer({
      id: "gen-1",
      object: "chat.completion",
      created: 1,
      model: "anthropic/claude-sonnet-4.5",
      choices: [{ index: 0, message: { role: "assistant", content: "", reasoning: thought, reasoning_details: [signed], tool_calls: [call] }, finish_reason: "tool_calls" }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    });
    const first = JSON.parse((await send(s, c)).text) as { choices: { message: J }[] };
    const message = first.choices[0]!.message;
    const given = (message.reasoning_details as J[])[0]!;
    t.is(given.signature, "sig-or-1", "the signature goes to the client unchanged");
    t.is(given.text, thought.replace(EMAIL, "[REDACTED:email]"));
    t.is(message.reasoning, thought.replace(EMAIL, "[REDACTED:email]"));
    t.is(store.size, 1);

    // The tool loop's next turn: the assistant message as the client got it, then the tool result; and a
    // signed block the sidecar never changed.
    const unknown = { type: "reasoning.text", text: "Other thoughts.", signature: "sig-other" };
    const toolResult = { role: "tool", tool_call_id: "call_1", content: "found" };
    const next = { ...c.request, messages: [...hello, message, toolResult, { role: "assistant", content: "", reasoning_details: [unknown] }, { role: "user", content: "thanks" }] };
    s.answer({ id: "gen-2", object: "chat.completion", created: 2, model: "anthropic/claude-sonnet-4.5", choices: [{ index: 0, message: { role: "assistant", content: "Found them." }, finish_reason: "stop" }], usage: { prompt_tokens: 20, completion_tokens: 3, total_tokens: 23 } });
    t.is((await send(s, c, next)).status, 200);
    const forwarded = s.received[1] as { messages: J[] };
    t.deepEqual((forwarded.messages[1]!.reasoning_details as J[])[0], signed, "the provider gets back the block it signed");
    t.deepEqual((forwarded.messages[3]!.reasoning_details as J[])[0], unknown, "a block the sidecar did not redact goes as sent");

    // A block whose text the client changed is not restored.
    const edited = { ...c.request, messages: [...hello, { ...message, reasoning_details: [{ ...given, text: "edited" }] }, toolResult] };
    await send(s, c, edited);
    t.is(((s.received[2] as { messages: J[] }).messages[1]!.reasoning_details as J[])[0]!.text, "edited");
  } finally {
    await s.close();
  }
});

test("cohere: citations of a redacted answer and plan quote the redacted text at moved offsets", async (t) => {
  const s = await setup([policy("pol_redact", "redact")]);
  const c = CASES.cohere;
  try {
    const text = `Write to ${EMAIL} about the renewal; the contract ends in May.`;
    const plan = `Look up ${EMAIL} in the CRM.`;
    const span = (whole: string, part: string) => ({ start: whole.indexOf(part), end: whole.indexOf(part) + part.length, text: part });
    const sources = [{ type: "document", id: "doc-0", document: { id: "doc-0", text: "CRM record" } }];
    s.answer({
      id: "c2",
      finish_reason: "COMPLETE",
      message: {
        role: "assistant",
        tool_plan: plan,
        content: [{ type: "text", text }],
        citations: [
          { ...span(text, `Write to ${EMAIL}`), sources, type: "TEXT_CONTENT", content_index: 0 },
          { ...span(text, "the contract ends in May"), sources, type: "TEXT_CONTENT", content_index: 0 },
          { ...span(plan, "in the CRM"), sources, type: "PLAN" },
          { ...span(plan, EMAIL), sources, type: "PLAN" },
        ],
      },
      usage: { billed_units: { input_tokens: 10, output_tokens: 5 }, tokens: { input_tokens: 74, output_tokens: 5 } },
    });
    const r = await send(s, c);
    t.is(r.status, 200);
    t.false(r.text.includes(EMAIL), "no citation carries the address back");
    const message = (JSON.parse(r.text) as { message: { tool_plan: string; content: { text: string }[]; citations: { start: number; end: number; text: string; sources: unknown }[] } }).message;
    const answer = message.content[0]!.text;
    t.is(answer, "Write to [REDACTED:email] about the renewal; the contract ends in May.");
    const quoted = message.citations.map((x, i) => (i < 2 ? answer : message.tool_plan).slice(x.start, x.end));
    t.deepEqual(quoted, ["Write to [REDACTED:email]", "the contract ends in May", "in the CRM", "[REDACTED:email]"], "offsets point at the text the client has");
    t.deepEqual(message.citations.map((x) => x.text), quoted, "each citation quotes what its offsets point at");
    t.deepEqual(message.citations[1]!.sources, sources, "sources are the client's own documents, as sent");
  } finally {
    await s.close();
  }
});

test("cohere: a citation that cannot be placed (no offsets; no content_index with a thinking item first) is redacted on its own", async (t) => {
  const s = await setup([policy("pol_redact", "redact")]);
  try {
    const text = `Write to ${EMAIL} soon.`;
    s.answer({
      id: "c3",
      finish_reason: "COMPLETE",
      message: {
        role: "assistant",
        content: [{ type: "thinking", thinking: "Let me think." }, { type: "text", text }],
        citations: [{ text: EMAIL, sources: [] }, { start: 0, end: text.indexOf(" soon"), text: `Write to ${EMAIL}`, type: "TEXT_CONTENT", sources: [] }],
      },
      usage: { billed_units: { input_tokens: 10, output_tokens: 5 } },
    });
    const r = await send(s, CASES.cohere);
    t.false(r.text.includes(EMAIL));
    const cites = (JSON.parse(r.text) as { message: { citations: { start?: number; end?: number; text: string }[] } }).message.citations;
    t.is(cites[0]!.text, "[REDACTED:email]");
    t.deepEqual([cites[1]!.start, cites[1]!.end, cites[1]!.text], [0, "Write to [REDACTED:email]".length, "Write to [REDACTED:email]"], "the first text item is the default");
  } finally {
    await s.close();
  }
});

test("google: grounding segments (UTF-8 byte offsets) of a redacted answer quote the redacted text", async (t) => {
  const s = await setup([policy("pol_redact", "redact")]);
  try {
    const text = `Die Pressestelle (${EMAIL}) antwortet schnell; Übersicht folgt.`;
    const quoted = `Pressestelle (${EMAIL})`;
    const bytes = (x: string) => Buffer.byteLength(x, "utf8");
    const after = (x: string) => ({ startIndex: bytes(text.slice(0, text.indexOf(x))), endIndex: bytes(text.slice(0, text.indexOf(x) + x.length)), text: x });
    s.answer({
      candidates: [
        {
          index: 0,
          content: { role: "model", parts: [{ text }] },
          finishReason: "STOP",
          groundingMetadata: {
            groundingChunks: [{ web: { uri: "https://example.org/presse", title: "example.org" } }],
            webSearchQueries: [`Pressestelle ${EMAIL}`, "Pressestelle Kontakt"],
            searchEntryPoint: { renderedContent: `<style>.x{}</style><div class="chip">${EMAIL}</div>` },
            groundingSupports: [
              { segment: after(quoted), groundingChunkIndices: [0] },
              { segment: after("Übersicht folgt"), groundingChunkIndices: [0] },
              { segment: { endIndex: 3, text: `not in the answer: ${EMAIL}` }, groundingChunkIndices: [0] },
            ],
          },
        },
      ],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      modelVersion: "gemini-2.5-flash",
    });
    const r = await send(s, CASES.google);
    t.false(r.text.includes(EMAIL));
    const c = (JSON.parse(r.text) as { candidates: { content: { parts: { text: string }[] }; groundingMetadata: { groundingSupports: { segment: { startIndex?: number; endIndex: number; text: string } }[] } }[] }).candidates[0]!;
    const answer = Buffer.from(c.content.parts[0]!.text, "utf8");
    const segments = c.groundingMetadata.groundingSupports.map((x) => x.segment);
    t.deepEqual(segments.map((x) => x.text), ["Pressestelle ([REDACTED:email])", "Übersicht folgt", "not in the answer: [REDACTED:email]"]);
    t.deepEqual((c.groundingMetadata as unknown as { webSearchQueries: string[] }).webSearchQueries, ["Pressestelle [REDACTED:email]", "Pressestelle Kontakt"], "the model's search queries are its output too");
    for (const x of segments.slice(0, 2)) t.is(answer.subarray(x.startIndex ?? 0, x.endIndex).toString("utf8"), x.text);
  } finally {
    await s.close();
  }
});

test("cohere JSON: a citation with wrong offsets is placed where its text occurs; one quoting a value only found with context, or malformed, is redacted", async (t) => {
  const s = await setup([create(PolicySchema, { id: "pol_ssn", name: "ssn", status: "active", action: "redact", priority: 1, conditions: create(PolicyConditionsSchema, { direction: "outbound", piiTypes: ["ssn"] }) })]);
  try {
    const text = "The customer's SSN is 536 22 8410 and nothing else is on file.";
    s.answer({
      id: "c4",
      finish_reason: "COMPLETE",
      message: {
        role: "assistant",
        content: [{ type: "text", text }],
        citations: [
          { start: 23, end: 34, text: "536 22 8410", type: "TEXT_CONTENT", content_index: 0, sources: [] },
          { start: 0, end: 3, text: "record 536 22 8410", sources: [] },
          { start: 0, end: 3, text: ["536 22 8410"], sources: [] },
        ],
      },
      usage: { billed_units: { input_tokens: 10, output_tokens: 5 } },
    });
    const r = await send(s, CASES.cohere);
    t.false(r.text.includes("8410"));
    const message = (JSON.parse(r.text) as { message: { content: { text: string }[]; citations: { start: number; end: number; text: unknown }[] } }).message;
    const placed = message.citations[0]!;
    t.is(placed.text, "[REDACTED:ssn]");
    t.is(message.content[0]!.text.slice(placed.start, placed.end), "[REDACTED:ssn]");
    t.is(message.citations[1]!.text, "record [REDACTED:ssn]");
    t.is(typeof message.citations[2]!.text, "string");
  } finally {
    await s.close();
  }
});

test("a request nested too deeply to be rewritten by an inbound redaction is refused (400, traced), not forwarded unredacted", async (t) => {
  const s = await setup([create(PolicySchema, { id: "pol_in", name: "in", status: "active", action: "redact", priority: 1, conditions: create(PolicyConditionsSchema, { direction: "inbound", piiTypes: ["email"] }) })]);
  try {
    s.answer({ id: "c", object: "chat.completion", created: 1, model: "gpt-4o-mini", choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
    const c: Case = { ...CASES.mistral, path: "/v1/proxy/openai/v1/chat/completions", request: {} };
    // Built by hand: JSON.stringify of the body itself would overflow here too.
    const body = `{"model":"gpt-4o-mini","metadata":${'{"d":'.repeat(20_000)}"leaf"${"}".repeat(20_000)},"messages":[{"role":"user","content":"mail ${EMAIL}"}]}`;
    const res = await fetch(`${s.url}${c.path}`, { method: "POST", headers: { "content-type": "application/json", "x-service-key": KEY, "x-service-agent": AGENT, authorization: "Bearer sk-x" }, body });
    const text = await res.text();
    t.is(res.status, 400, text);
    t.is((JSON.parse(text) as { error: { code: string } }).error.code, "bad_request");
    t.is(s.received.length, 0, "nothing was forwarded");
    const tr = await traceOf(s, 1);
    t.is(tr.errorCode, "bad_request");
  } finally {
    await s.close();
  }
});

test("JSON answers: a block policy sees a value only a quote carries (Cohere citation, Gemini search query, a cited page's url or title); the trace keeps the answer's findings only", async (t) => {
  const s = await setup([policy("pol_block", "block")]);
  try {
    s.answer({
      id: "c5",
      finish_reason: "COMPLETE",
      message: { role: "assistant", content: [{ type: "text", text: "Write to the press office." }], citations: [{ text: `press office ${EMAIL}`, sources: [] }] },
      usage: { billed_units: { input_tokens: 10, output_tokens: 5 } },
    });
    const cohere = await send(s, CASES.cohere);
    t.is(cohere.status, 403);
    t.false(cohere.text.includes(EMAIL));
    s.answer({
      candidates: [{ index: 0, content: { role: "model", parts: [{ text: "The press office answers quickly." }] }, finishReason: "STOP", groundingMetadata: { webSearchQueries: [`press ${EMAIL}`] } }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    });
    const google = await send(s, CASES.google);
    t.is(google.status, 403);
    t.false(google.text.includes(EMAIL));
    // The page a citation names is the model's output too (a stream judges it the same way).
    const text = "The registry lists the contact on its public page.";
    s.answer({
      id: "chatcmpl-9", object: "chat.completion", created: 1, model: "gpt-4o-search-preview",
      choices: [{ index: 0, message: { role: "assistant", content: text, annotations: [{ type: "url_citation", url_citation: { start_index: 0, end_index: 12, url: `https://registry.example.org/find?u=${EMAIL}`, title: "Registry" } }] }, finish_reason: "stop" }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    });
    const openai = await send(s, { ...CASES.mistral, path: "/v1/proxy/openai/v1/chat/completions", headers: { authorization: "Bearer sk-x" }, request: { model: "gpt-4o-search-preview", messages: hello } });
    t.is(openai.status, 403, "openai: a url_citation's url");
    t.false(openai.text.includes(EMAIL));
    s.answer({
      candidates: [{ index: 0, content: { role: "model", parts: [{ text }] }, finishReason: "STOP", citationMetadata: { citations: [{ startIndex: 0, endIndex: 12, uri: "https://registry.example.org/", title: `Profile of ${EMAIL}` }] } }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    });
    const vertex = await send(s, CASES.google);
    t.is(vertex.status, 403, "google: a citation source's title (Vertex AI's citations)");
    t.false(vertex.text.includes(EMAIL));
  } finally {
    await s.close();
  }
  const r = await setup([policy("pol_redact", "redact")]);
  try {
    const text = `Write to ${EMAIL} now.`;
    r.answer({ id: "c6", finish_reason: "COMPLETE", message: { role: "assistant", content: [{ type: "text", text }], citations: [{ start: 0, end: text.length - 5, text: text.slice(0, -5), sources: [] }] }, usage: { billed_units: { input_tokens: 10, output_tokens: 5 } } });
    t.is((await send(r, CASES.cohere)).status, 200);
    const tr = await traceOf(r, 1);
    t.is(tr.piiDetections.filter((d) => d.source === "completion").length, 1, "the citation repeating the address adds no second finding");
  } finally {
    await r.close();
  }
});

test("an answer nested too deeply for an outbound redaction to rewrite is refused (502 unreadable_answer, traced, charged)", async (t) => {
  const s = await setup([policy("pol_redact", "redact")]);
  try {
    const deep = `${'{"d":'.repeat(20_000)}"leaf"${"}".repeat(20_000)}`;
    s.answer(`{"id":"c","object":"chat.completion","created":1,"model":"magistral-medium-2509","extra":${deep},"choices":[{"index":0,"message":{"role":"assistant","content":"mail ${EMAIL}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`);
    const r = await send(s, CASES.mistral);
    t.is(r.status, 502, r.text);
    t.false(r.text.includes(EMAIL));
    t.is((JSON.parse(r.text) as { error: { code: string } }).error.code, "unreadable_answer");
    const tr = await traceOf(s, 1);
    t.is(tr.errorCode, "unreadable_answer");
    t.true(tr.costUsd > 0, "the provider was paid: the trace carries the cost");
  } finally {
    await s.close();
  }
});

/** A JSON answer per provider whose tool call (only) carries EMAIL, in the provider's native shape. */
const TOOL_ANSWERS: [string, Case, object, (j: unknown) => string][] = [
  [
    "openai",
    { ...CASES.mistral, path: "/v1/proxy/openai/v1/chat/completions", headers: { authorization: "Bearer sk-x" }, request: { model: "gpt-4o", messages: hello } },
    { id: "c7", object: "chat.completion", created: 1, model: "gpt-4o", choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "send_email", arguments: `{"to": "${EMAIL}",  "n": 12345678901234567891}` } }] }, finish_reason: "tool_calls" }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } },
    (j) => String(at(j, "choices", 0, "message", "tool_calls", 0, "function", "arguments")),
  ],
  [
    "anthropic",
    CASES.anthropic,
    { id: "msg_7", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [{ type: "text", text: "Sending." }, { type: "tool_use", id: "toolu_7", name: "send_email", input: { to: EMAIL, cc: [`x ${EMAIL}`] } }], stop_reason: "tool_use", usage: { input_tokens: 10, output_tokens: 5 } },
    (j) => JSON.stringify(at(j, "content", 1, "input")),
  ],
  [
    "google",
    CASES.google,
    { candidates: [{ index: 0, content: { role: "model", parts: [{ functionCall: { name: "send_email", args: { to: EMAIL } } }] }, finishReason: "STOP" }], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 } },
    (j) => JSON.stringify(at(j, "candidates", 0, "content", "parts", 0, "functionCall", "args")),
  ],
  [
    "mistral",
    CASES.mistral,
    { id: "c8", object: "chat.completion", created: 1, model: "mistral-large-latest", choices: [{ index: 0, message: { role: "assistant", content: "", tool_calls: [{ id: "call_8", function: { name: "send_email", arguments: { to: EMAIL } } }] }, finish_reason: "tool_calls" }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } },
    (j) => JSON.stringify(at(j, "choices", 0, "message", "tool_calls", 0, "function", "arguments")),
  ],
  [
    "cohere",
    CASES.cohere,
    { id: "c9", finish_reason: "TOOL_CALL", message: { role: "assistant", tool_calls: [{ id: "mail_9", type: "function", function: { name: "send_email", arguments: `{"to":"${EMAIL}"}` } }] }, usage: { billed_units: { input_tokens: 10, output_tokens: 5 } } },
    (j) => String(at(j, "message", "tool_calls", 0, "function", "arguments")),
  ],
];

test("JSON answers: outbound policies judge the model's tool-call arguments (a block refuses, a redact rewrites each argument), for every provider", async (t) => {
  const block = await setup([policy("pol_block", "block")]);
  try {
    for (const [name, c, answer] of TOOL_ANSWERS) {
      block.answer(answer);
      const r = await send(block, c);
      t.is(r.status, 403, `${name}: the call is not handed to the agent`);
      t.false(r.text.includes(EMAIL), name);
    }
  } finally {
    await block.close();
  }
  const redact = await setup([policy("pol_redact", "redact")]);
  try {
    for (const [name, c, answer, args] of TOOL_ANSWERS) {
      redact.answer(answer);
      const r = await send(redact, c);
      t.is(r.status, 200, name);
      t.false(r.text.includes(EMAIL), `${name}: ${r.text}`);
      t.true(args(JSON.parse(r.text)).includes("[REDACTED:email]"), `${name}: ${args(JSON.parse(r.text))}`);
    }
    // Arguments sent as JSON text keep their bytes but the redacted string (numbers, spacing).
    redact.answer(TOOL_ANSWERS[0]![2]);
    const openai = await send(redact, TOOL_ANSWERS[0]![1]);
    t.is(TOOL_ANSWERS[0]![3](JSON.parse(openai.text)), `{"to": "[REDACTED:email]",  "n": 12345678901234567891}`);
  } finally {
    await redact.close();
  }
});

test("JSON answers: a card number the model wrote as a JSON number in tool-call arguments is judged and redacted (a string then), JSON text and objects alike (review, session 16)", async (t) => {
  const card = create(PolicySchema, { id: "pol_card", name: "pol_card", status: "active", action: "redact", priority: 1, conditions: create(PolicyConditionsSchema, { direction: "outbound", piiTypes: ["credit_card"] }) });
  const s = await setup([card]);
  try {
    s.answer({ id: "c10", object: "chat.completion", created: 1, model: "gpt-4o", choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [{ id: "call_10", type: "function", function: { name: "charge", arguments: '{"card": 4111111111111111, "amount": 12.5}' } }] }, finish_reason: "tool_calls" }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
    const openai = await send(s, TOOL_ANSWERS[0]![1]);
    t.is(TOOL_ANSWERS[0]![3](JSON.parse(openai.text)), '{"card": "[REDACTED:credit_card]", "amount": 12.5}');
    s.answer({ id: "msg_10", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [{ type: "tool_use", id: "toolu_10", name: "charge", input: { card: 4111111111111111, amount: 12.5 } }], stop_reason: "tool_use", usage: { input_tokens: 10, output_tokens: 5 } });
    const anthropic = await send(s, CASES.anthropic);
    t.deepEqual(at(JSON.parse(anthropic.text), "content", 0, "input"), { card: "[REDACTED:credit_card]", amount: 12.5 });
  } finally {
    await s.close();
  }
});
