// OpenAI adapter: resolve, prompt text and redaction, completion redaction, native error event,
// url_citation annotations that follow an outbound redaction.
import test from "ava";
import { create } from "@bufbuild/protobuf";
import { PolicyConditionsSchema, PolicySchema } from "@agentgov/proto";
import OpenAI from "openai";
import { redactAnswer } from "../proxy/governance.js";
import { fetchWithAppendedEvent, startFakeProviders } from "../../../test/fakes/providers/index.js";
import { fakeStream } from "./testing/fake-stream.js";
import { chatAfterRedaction } from "./chat-completions.js";
import { openaiAdapter as adapter } from "./openai.js";
import { getProvider } from "./registry.js";
import { parseSse } from "./sse-parser.js";

const body = {
  model: "gpt-4o",
  messages: [
    { role: "user", content: "First question" },
    { role: "system", content: "System rules" },
    { role: "developer", content: [{ type: "text", text: "Dev note" }] },
    { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "lookup", arguments: "{\"city\": \"Paris\", \"n\": 2}" } }] },
    { role: "tool", tool_call_id: "c1", content: "tool output 42" },
    { role: "user", content: [{ type: "text", text: "Part A" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }, { type: "text", text: "Part B" }] },
  ],
};

test("resolve: spec path and native path map to /v1/chat/completions; other paths are not governed", (t) => {
  t.deepEqual(adapter.resolve("/chat/completions", "", { model: "gpt-4o", stream: true }), { path: "/v1/chat/completions", model: "gpt-4o", stream: true });
  t.deepEqual(adapter.resolve("/v1/chat/completions", "?trace=1", { model: "gpt-4o-mini" }), { path: "/v1/chat/completions?trace=1", model: "gpt-4o-mini", stream: false });
  t.deepEqual(adapter.resolve("//chat/completions/", "", {}), { path: "/v1/chat/completions", model: "", stream: false });
  t.is(adapter.resolve("/v1/models", "", undefined), null);
  t.is(adapter.resolve("/v1/embeddings", "", { model: "text-embedding-3-small" })?.adapter?.answersWithText, false, "embeddings resolve to their own adapter (embeddings/openai-style.test.ts)");
  t.is(adapter.resolve("/v1/audio/speech", "", { model: "tts-1" }), null);
  t.is(adapter.resolve("/v1/responses", "", { model: "gpt-4o" })?.adapter?.wire, "openai-responses", "the Responses API resolves to its own adapter (openai-responses.test.ts)");
  t.is(adapter.resolve("/v1/responses/resp_1", "", {}), null);
});

test("promptText: system and developer messages first, then the rest in order; only text parts", (t) => {
  const parts = ["System rules", "Dev note", "First question", "Paris", "2", "tool output 42", "Part A", "Part B"]; // "Paris", "2": the leaves of an earlier tool call's arguments (numbers as written)
  t.deepEqual(adapter.promptParts(body), parts);
  t.is(adapter.promptText(body), parts.join("\n\n"));
  t.is(adapter.promptText({}), "");
  t.is(adapter.promptText("not json"), "");
});

test("mapPromptText: fn once per part in promptParts order, a redacted copy, the original untouched", (t) => {
  const seen: string[] = [];
  const mapped = adapter.mapPromptText(body, (s) => {
    seen.push(s);
    return s.toUpperCase();
  });
  t.deepEqual(seen, adapter.promptParts(body));
  t.deepEqual(adapter.promptParts(mapped), adapter.promptParts(body).map((s) => s.toUpperCase()));
  t.is(body.messages[0]?.content, "First question");
  const m = mapped as typeof body;
  t.deepEqual(m.messages[5]?.content, [{ type: "text", text: "PART A" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }, { type: "text", text: "PART B" }]);
  t.is(m.messages[3]?.tool_calls?.[0]?.function.arguments, '{"city": "PARIS", "n": 2}', "only the changed literal is rewritten; other bytes as sent");
  t.is((adapter.mapPromptText(body, (s) => s) as typeof body).messages[3]?.tool_calls?.[0]?.function.arguments, body.messages[3]?.tool_calls?.[0]?.function.arguments, "unchanged arguments keep their bytes");
});

test("parseResponse and mapCompletionText over choices (content and refusal)", (t) => {
  const json = {
    model: "gpt-4o-2024-08-06",
    choices: [
      { index: 1, message: { role: "assistant", content: "Second choice" }, finish_reason: "stop" },
      { index: 0, message: { role: "assistant", content: "Call 555-0100", refusal: null }, finish_reason: "stop" },
    ],
  };
  const facts = adapter.parseResponse(json);
  t.is(facts.completionText, "Call 555-0100\n\nSecond choice");
  t.is(facts.model, "gpt-4o-2024-08-06");
  const redacted = adapter.mapCompletionText(json, (s) => s.replace(/\d/g, "#"));
  t.is(adapter.parseResponse(redacted).completionText, "Call ###-####\n\nSecond choice");
  t.is(json.choices[1]?.message.content, "Call 555-0100");
  t.is(adapter.parseResponse({ choices: [{ index: 0, message: { content: null, refusal: "I can't help with that." } }] }).completionText, "I can't help with that.");
});

test("errorEvent: a data chunk with an error object, parsed by our SSE parser and thrown by the openai SDK", async (t) => {
  const text = adapter.errorEvent("Blocked by policy", "policy_violation", { details: { trace_id: "tr_1" } });
  t.true(text.endsWith("\n\n"));
  const { events } = parseSse(text);
  t.like(JSON.parse(events[0]?.data ?? "{}"), { error: { message: "Blocked by policy", code: "policy_violation", trace_id: "tr_1" } });
  const observer = adapter.streamObserver();
  observer.push(new TextEncoder().encode(text));
  t.is(observer.end().errorMessage, "Blocked by policy");

  const fake = await startFakeProviders({ text: "partial answer", truncate: { afterEvents: 3 } });
  try {
    const client = new OpenAI({ apiKey: "k", baseURL: `${fake.urls.openai}/v1`, maxRetries: 0, fetch: fetchWithAppendedEvent(text) });
    const stream = await client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }], stream: true });
    let got = "";
    const err = await t.throwsAsync(async () => {
      for await (const chunk of stream) got += chunk.choices[0]?.delta.content ?? "";
    });
    t.true(err instanceof OpenAI.APIError);
    t.is((err as InstanceType<typeof OpenAI.APIError>).code, "policy_violation");
    t.regex(err?.message ?? "", /Blocked by policy/);
    t.is(got, "partial ");
  } finally {
    await fake.close();
  }
});

test("OpenAI-compatible reasoning fields (reasoning_content, reasoning) are reasoning: read, mapped, counted when usage is missing", (t) => {
  const json = { id: "c", object: "chat.completion", model: "deepseek-reasoner", choices: [{ index: 0, message: { role: "assistant", content: "Answer.", reasoning_content: "First I think." }, finish_reason: "stop" }] };
  const facts = adapter.parseResponse(json);
  t.is(facts.completionText, "Answer.");
  t.is(facts.reasoningText, "First I think.");
  t.true(facts.uncountedOutputText?.includes("First I think."));
  const mapped = adapter.mapReasoningText(json, (s) => s.toUpperCase()) as typeof json;
  t.is(mapped.choices[0]!.message.reasoning_content, "FIRST I THINK.");
  t.is(mapped.choices[0]!.message.content, "Answer.");
  t.is(adapter.parseResponse({ choices: [{ index: 0, message: { role: "assistant", content: "x", reasoning: "why" } }] }).reasoningText, "why");
  const details = { choices: [{ index: 0, message: { role: "assistant", content: "x", reasoning_details: [{ type: "reasoning.text", text: "step one" }, { type: "reasoning.encrypted", data: "opaque" }] } }] };
  t.is(adapter.parseResponse(details).reasoningText, "step one");
  t.deepEqual((adapter.mapReasoningText(details, (s) => s.toUpperCase()) as typeof details).choices[0]!.message.reasoning_details, [{ type: "reasoning.text", text: "STEP ONE" }, { type: "reasoning.encrypted", data: "opaque" }]);
  t.is(adapter.parseResponse({ choices: [{ index: 0, message: { role: "assistant", content: "x" } }] }).reasoningText, undefined);
});

const EMAIL = "jo.smith@example.com";
const emailRedactor = create(PolicySchema, { id: "pol_email", name: "email", status: "active", action: "redact", priority: 1, conditions: create(PolicyConditionsSchema, { direction: "outbound", piiTypes: ["email"] }) });
type UrlCitation = { start_index: number; end_index: number; url: string; title: string };
type Annotated = { choices: { index: number; message: { role: string; content: string; annotations: { type: string; url_citation: UrlCitation }[] } }[] };

/** A web search answer whose annotations cover `covered` (each found in `content`), offsets counted in `unit`. */
function annotated(content: string, covered: [string, string][], unit: "codepoints" | "utf16" = "codepoints"): Annotated {
  const count = (s: string) => (unit === "codepoints" ? [...s].length : s.length);
  const annotations = covered.map(([text, url]) => {
    const at = content.indexOf(text);
    return { type: "url_citation", url_citation: { start_index: count(content.slice(0, at)), end_index: count(content.slice(0, at + text.length)), url, title: "t" } };
  });
  return { choices: [{ index: 0, message: { role: "assistant", content, annotations } }] };
}

const redactEmail = (json: unknown) => redactAnswer(adapter, json, [emailRedactor], true, undefined, false) as Annotated;
const citationsOf = (json: Annotated) => json.choices[0]!.message.annotations.map((a) => a.url_citation);
const slice = (text: string, c: UrlCitation, unit: "codepoints" | "utf16" = "codepoints") => (unit === "codepoints" ? [...text].slice(c.start_index, c.end_index).join("") : text.slice(c.start_index, c.end_index));

test("url_citation annotations follow an outbound redaction of the content (code points after non-ASCII text); one covering the address covers its label; one before it keeps its bytes", (t) => {
  for (const head of ["Our office", "Zürich 🚀🚀 office"]) {
    const content = `${head}: mail ${EMAIL} for details ([example.com](https://example.com/page)). More at ([docs.example.org](https://docs.example.org/)).`;
    const json = annotated(content, [
      ["([example.com](https://example.com/page))", "https://example.com/page"],
      [EMAIL, "https://example.com/contact"],
      [head, "https://example.com/about"],
      ["([docs.example.org](https://docs.example.org/))", "https://docs.example.org/"],
    ]);
    const original = structuredClone(json);
    const out = redactEmail(json);
    const answer = out.choices[0]!.message.content;
    t.is(answer, content.replace(EMAIL, "[REDACTED:email]"));
    const cites = citationsOf(out);
    t.deepEqual(
      cites.map((c) => slice(answer, c)),
      ["([example.com](https://example.com/page))", "[REDACTED:email]", head, "([docs.example.org](https://docs.example.org/))"],
      "code point offsets point at the same text in the redacted content",
    );
    t.deepEqual(cites[2], citationsOf(original)[2], "a range before the redaction keeps its bytes");
    t.deepEqual(cites.map((c) => c.url), citationsOf(original).map((c) => c.url));
    t.deepEqual(json, original, "the original answer is untouched");
  }
});

test("url_citation annotations counted in UTF-16 are moved in UTF-16: a range that only fits in UTF-16, or whose UTF-16 slice alone holds its url", (t) => {
  const content = `${"🚀".repeat(12)} mail ${EMAIL} now ([a.b](https://a.b/x)) and ([c.d](https://c.d/y))`;
  const json = annotated(content, [["([a.b](https://a.b/x))", "https://a.b/x"], ["([c.d](https://c.d/y))", "https://c.d/y"]], "utf16");
  t.true(citationsOf(json)[1]!.end_index > [...content].length, "the last range fits the content in UTF-16 only");
  t.true(citationsOf(json)[0]!.end_index <= [...content].length && !slice(content, citationsOf(json)[0]!).includes("https://a.b/x"), "the first fits in code points too, but misses its url there");
  const out = redactEmail(json);
  const answer = out.choices[0]!.message.content;
  t.deepEqual(citationsOf(out).map((c) => slice(answer, c, "utf16")), ["([a.b](https://a.b/x))", "([c.d](https://c.d/y))"]);
});

test("url_citation annotations: with nothing redacted the answer is unchanged; ranges that cannot be placed are left as they were", (t) => {
  const clean = annotated("Nothing private here ([a.b](https://a.b/x)).", [["([a.b](https://a.b/x))", "https://a.b/x"]]);
  t.deepEqual(redactEmail(clean), clean, "nothing redacted: the answer as it came");
  const content = `Mail ${EMAIL} now ([a.b](https://a.b/x)).`;
  const json = annotated(content, [["([a.b](https://a.b/x))", "https://a.b/x"]]);
  const bad = [
    { start_index: 30, end_index: 200, url: "https://a.b/x", title: "outside the text" },
    { start_index: 9, end_index: 4, url: "https://a.b/x", title: "end before start" },
    { start_index: 1.5, end_index: 4, url: "https://a.b/x", title: "not an integer" },
    { start_index: "5", end_index: 9, url: "https://a.b/x", title: "not a number" },
  ];
  json.choices[0]!.message.annotations.push(...bad.map((b) => ({ type: "url_citation", url_citation: b as unknown as UrlCitation })));
  const out = redactEmail(json);
  const answer = out.choices[0]!.message.content;
  const [moved, ...rest] = citationsOf(out);
  t.is(slice(answer, moved!), "([a.b](https://a.b/x))");
  t.deepEqual(rest, bad as unknown as UrlCitation[]);
});

test("url_citation url and title are model output: a value the content had redacted is redacted there too (placed by its original url first); clean ones keep their bytes", (t) => {
  const link = `[profile](https://crm.example/find?u=${EMAIL})`;
  // emoji first: the range is counted in UTF-16, which only the original url tells apart from code points
  // (read in code points, it would end inside the address that follows it)
  const content = `${"🚀".repeat(12)} The record is at ${link} ${EMAIL}, see it. Also [docs](https://docs.example.org/).`;
  const json = annotated(content, [[link, `https://crm.example/find?u=${EMAIL}`], ["[docs](https://docs.example.org/)", "https://docs.example.org/"]], "utf16");
  json.choices[0]!.message.annotations[0]!.url_citation.title = `Profile of ${EMAIL}`;
  const [before] = citationsOf(json);
  t.true(before!.end_index <= [...content].length && !slice(content, before!).includes(before!.url), "the range fits in code points too, but misses its url there");
  const original = structuredClone(json);
  const out = redactEmail(json);
  const answer = out.choices[0]!.message.content;
  t.is(answer, content.replaceAll(EMAIL, "[REDACTED:email]"));
  const [profile, docs] = citationsOf(out);
  t.is(profile!.url, "https://crm.example/find?u=[REDACTED:email]");
  t.is(profile!.title, "Profile of [REDACTED:email]");
  t.is(slice(answer, profile!, "utf16"), "[profile](https://crm.example/find?u=[REDACTED:email])", "still placed in UTF-16, by the url as it came");
  t.is(slice(answer, docs!, "utf16"), "[docs](https://docs.example.org/)");
  t.is(docs!.url, "https://docs.example.org/");
  t.is(docs!.title, "t");
  t.false(JSON.stringify(out).includes(EMAIL));
  t.deepEqual(json, original, "the original answer is untouched");
  // a citation that cannot be placed (range outside the content) gets its url and title redacted all the same
  const unplaced = annotated(`Mail ${EMAIL} now.`, []);
  const stray = { start_index: 90, end_index: 99, url: `mailto:${EMAIL}`, title: 7 as unknown as string };
  unplaced.choices[0]!.message.annotations.push({ type: "url_citation", url_citation: stray });
  const c = citationsOf(redactEmail(unplaced))[0]!;
  t.deepEqual(c, { ...stray, url: "mailto:[REDACTED:email]" }, "offsets left as they were; a non-string title untouched");
  // a choice the original lacks (nothing to place against): url and title redacted all the same
  const orphan = { choices: [{ index: 0, message: { content: "x", annotations: [{ type: "url_citation", url_citation: { start_index: 0, end_index: 1, url: `https://a.b/?u=${EMAIL}`, title: EMAIL } }] } }] };
  chatAfterRedaction({ choices: [] }, orphan, (s) => s.replaceAll(EMAIL, "[REDACTED:email]"));
  t.deepEqual(orphan.choices[0]!.message.annotations[0]!.url_citation, { start_index: 0, end_index: 1, url: "https://a.b/?u=[REDACTED:email]", title: "[REDACTED:email]" });
});

test("stream observer: a stream that ends cleanly before data: [DONE] ended early, even after its finish and usage chunks; with [DONE], an error event of its own or no event at all it did not", async (t) => {
  const fake = await startFakeProviders({ text: "A whole answer.", usage: { inputTokens: 30, outputTokens: 7 } });
  try {
    const { send, whole, events, observe } = await fakeStream(fake, "openai", () => adapter.streamObserver()); // stream_options.include_usage: a usage chunk after the finish chunk
    t.is(events.at(-1), "data: [DONE]\n\n", "the provider's stream ends with its marker");
    const complete = observe(whole);
    t.is(complete.endedEarly, undefined);
    t.is(complete.errorMessage, undefined);

    // Everything but [DONE]: the finish chunk and the usage chunk came; the usage is kept.
    const beforeDone = observe(events.slice(0, -1).join(""));
    t.true(beforeDone.endedEarly);
    t.regex(beforeDone.errorMessage ?? "", /ended before its end marker \(data: \[DONE\]\)/);
    t.is(beforeDone.completionText, "A whole answer.");
    t.is(beforeDone.finishReason, "stop");
    t.like(beforeDone.usage, { inputTokens: 30, outputTokens: 7 });
    // Up to the finish chunk: a finish_reason is no end marker.
    const atFinish = observe(events.slice(0, -2).join(""));
    t.is(atFinish.finishReason, "stop");
    t.true(atFinish.endedEarly);
    t.is(atFinish.usage, undefined);
    // Mid-answer, as the fake cuts it (a clean end after 3 events).
    fake.script({ text: "A whole answer.", truncate: { afterEvents: 3 } });
    const mid = observe(await send());
    t.true(mid.endedEarly);
    t.true("A whole answer.".startsWith(mid.completionText) && mid.completionText !== "");

    // The provider's own error event ended it: that error stays, the stream is not "ended early".
    fake.script({ text: "A whole answer.", streamError: { afterEvents: 3, message: "backend went away" } });
    const failed = observe(await send());
    t.is(failed.errorMessage, "backend went away");
    t.is(failed.endedEarly, undefined);
    // A body with no event (empty, comments only, a JSON answer to a stream request) is not a stream.
    for (const raw of ["", ": keep-alive\n\n", JSON.stringify({ id: "c", object: "chat.completion", choices: [] })]) {
      const f = observe(raw);
      t.is(f.endedEarly, undefined, JSON.stringify(raw));
      t.is(f.errorMessage, undefined);
    }
  } finally {
    await fake.close();
  }
});

test("spoken answers: a request asks for one by modalities or an audio object; transcripts are output text, in JSON and in streams, after content and refusal", (t) => {
  t.true(adapter.asksForSpeech!({ modalities: ["text", "audio"] }));
  t.true(adapter.asksForSpeech!({ audio: { voice: "alloy", format: "wav" } }));
  t.false(adapter.asksForSpeech!({ modalities: ["text"] }));
  t.false(adapter.asksForSpeech!({ messages: [{ role: "user", content: [{ type: "input_audio", input_audio: { data: "AAA", format: "wav" } }] }] }), "audio input is not a spoken answer");
  const json = {
    choices: [
      { index: 1, message: { role: "assistant", content: null, audio: { id: "a2", data: "BBB", transcript: "second" } } },
      { index: 0, message: { role: "assistant", content: "text too", audio: { id: "a1", data: "AAA", transcript: "first" } } },
    ],
  };
  t.is(adapter.parseResponse(json).completionText, "text too\n\nfirst\n\nsecond");
  t.is(adapter.spokenText!(json), "first\n\nsecond");
  const upper = adapter.mapCompletionText(json, (s) => s.toUpperCase());
  t.is(adapter.spokenText!(upper), "FIRST\n\nSECOND", "a redaction reaches the transcripts");
  const chunk = (delta: object) => `data: ${JSON.stringify({ choices: [{ index: 0, delta }] })}\n\n`;
  const observer = adapter.streamObserver();
  for (const c of [chunk({ audio: { id: "a1", transcript: "Hel" } }), chunk({ audio: { data: "AAA" } }), chunk({ audio: { transcript: "lo" } }), "data: [DONE]\n\n"]) observer.push(Buffer.from(c));
  t.is(observer.end().completionText, "Hello");
});

test("askStreamUsage: a stream request that does not ask for usage gets include_usage, other options kept, the body untouched", (t) => {
  const ask = adapter.askStreamUsage!;
  const messages = [{ role: "user", content: "hi" }];
  t.deepEqual(ask({ model: "gpt-4o", stream: true, messages }), { model: "gpt-4o", stream: true, messages, stream_options: { include_usage: true } });
  t.deepEqual(ask({ stream: true, stream_options: null }), { stream: true, stream_options: { include_usage: true } });
  const asked = { stream: true, stream_options: { include_usage: false, include_obfuscation: false } };
  t.deepEqual(ask(asked), { stream: true, stream_options: { include_usage: true, include_obfuscation: false } });
  t.deepEqual(asked.stream_options, { include_usage: false, include_obfuscation: false }, "the request body is not changed in place");
  t.is(ask({ stream: true, stream_options: { include_usage: true } }), undefined, "asks already");
  t.is(ask({ model: "gpt-4o", messages }), undefined, "no stream");
  t.is(ask({ stream: "true" }), undefined);
  t.is(ask({ stream: true, stream_options: "usage" }), undefined, "invalid options: the provider answers that body as it came");
  t.is(ask([1, 2]), undefined);
});

test("askStreamUsage is OpenAI chat's alone: Mistral streams carry usage, the Responses API's always does", (t) => {
  t.is(getProvider("mistral")!.askStreamUsage, undefined);
  const responses = adapter.resolve("/v1/responses", "", { model: "gpt-4o", stream: true, input: "hi" });
  t.truthy(responses?.adapter);
  t.is(responses?.adapter?.askStreamUsage, undefined);
});
