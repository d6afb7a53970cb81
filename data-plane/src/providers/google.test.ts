// Google adapter: spec-path body rewrite, native paths, prompt text and redaction, error event.
import { ApiError, GoogleGenAI } from "@google/genai";
import test from "ava";
import { fetchWithAppendedEvent, startFakeProviders } from "../../../test/fakes/providers/index.js";
import { ProviderRequestError } from "./errors.js";
import { googleAdapter as adapter } from "./google.js";
import { parseSse } from "./sse-parser.js";

const contents = [
  { role: "user", parts: [{ text: "Question one" }, { inlineData: { mimeType: "image/png", data: "AAAA" } }] },
  { role: "model", parts: [{ text: "Answer one" }, { functionCall: { name: "lookup", args: { q: 1 } } }] },
  { role: "user", parts: [{ functionResponse: { name: "lookup", response: { ok: true } } }, { text: "Question two" }] },
];

test("resolve: spec path takes model/stream from the body, removes them, and picks the native action", (t) => {
  const spec = adapter.resolve("/chat/completions", "", { model: "gemini-2.5-flash", stream: true, contents, generationConfig: { temperature: 0 } });
  t.deepEqual(spec, {
    path: "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
    model: "gemini-2.5-flash",
    stream: true,
    body: { contents, generationConfig: { temperature: 0 } },
  });
  const json = adapter.resolve("/chat/completions", "?key=abc", { model: "models/gemini-2.5-pro", contents });
  t.deepEqual(json, { path: "/v1beta/models/gemini-2.5-pro:generateContent?key=abc", model: "gemini-2.5-pro", stream: false, body: { contents } });
  const err = t.throws(() => adapter.resolve("/chat/completions", "", { contents }));
  t.true(err instanceof ProviderRequestError);
  t.is((err as ProviderRequestError).code, "missing_model");
});

test("resolve: native paths carry model and streaming in the URL; the body is not rewritten", (t) => {
  t.deepEqual(adapter.resolve("/v1beta/models/gemini-2.5-flash:streamGenerateContent", "?alt=sse", { contents }), {
    path: "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
    model: "gemini-2.5-flash",
    stream: true,
  });
  t.deepEqual(adapter.resolve("/v1/models/gemini-2.0-flash-001:generateContent", "", { contents }), {
    path: "/v1/models/gemini-2.0-flash-001:generateContent",
    model: "gemini-2.0-flash-001",
    stream: false,
  });
  t.is(adapter.resolve("/v1beta/models/gemini-2.5-flash:countTokens", "", {}), null);
  t.is(adapter.resolve("/v1beta/models/text-embedding-004:embedContent", "", {}), null);
  t.is(adapter.resolve("/v1beta/models", "", undefined), null);
});

test("promptText: systemInstruction first (camelCase or snake_case), then text parts in order", (t) => {
  const parts = ["Be brief.", "Question one", "Answer one", "Question two"];
  t.deepEqual(adapter.promptParts({ systemInstruction: { parts: [{ text: "Be brief." }] }, contents }), parts);
  t.deepEqual(adapter.promptParts({ system_instruction: { parts: [{ text: "Be brief." }] }, contents }), parts);
  t.is(adapter.promptText({ contents }), parts.slice(1).join("\n\n"));
});

test("mapPromptText: copy with text parts mapped, other parts untouched", (t) => {
  const body = { systemInstruction: { parts: [{ text: "Be brief." }] }, contents };
  const mapped = adapter.mapPromptText(body, (s) => s.toUpperCase()) as typeof body;
  t.deepEqual(adapter.promptParts(mapped), adapter.promptParts(body).map((s) => s.toUpperCase()));
  t.deepEqual(mapped.contents[0]?.parts[1], contents[0]?.parts[1]);
  t.deepEqual(mapped.contents[2]?.parts[0], contents[2]?.parts[0]);
  t.is(contents[0]?.parts[0]?.text, "Question one");
});

test("promptParts / mapPromptText: string leaves of functionCall.args and functionResponse.response, in part order and key order", (t) => {
  const body = {
    contents: [
      { role: "user", parts: [{ text: "Look it up" }] },
      { role: "model", parts: [{ functionCall: { name: "lookup", args: { q: "jo" } } }] },
      {
        role: "user",
        parts: [
          { functionResponse: { id: "call-1", name: "lookup", response: { name: "Jo", record: { ssn: "on file", scores: [1, "two", { note: "deep" }] }, ok: true } } },
          { functionResponse: { name: "plain", response: { output: "second" } } },
          { functionResponse: { name: "empty", response: { count: 2 } } },
          { text: "And then?" },
        ],
      },
    ],
  };
  const original = structuredClone(body);
  const parts = ["Look it up", "jo", "Jo", "on file", "two", "deep", "second", "And then?"];
  t.deepEqual(adapter.promptParts(body), parts);
  const seen: string[] = [];
  const mapped = adapter.mapPromptText(body, (s) => {
    seen.push(s);
    return s.toUpperCase();
  }) as typeof body;
  t.deepEqual(seen, parts);
  t.deepEqual(adapter.promptParts(mapped), parts.map((s) => s.toUpperCase()));
  t.deepEqual(mapped.contents[2]?.parts[0], { functionResponse: { id: "call-1", name: "lookup", response: { name: "JO", record: { ssn: "ON FILE", scores: [1, "TWO", { note: "DEEP" }] }, ok: true } } }, "keys, id and name untouched");
  t.deepEqual(mapped.contents[1], { role: "model", parts: [{ functionCall: { name: "lookup", args: { q: "JO" } } }] }, "the earlier call's args are input text; its name is not");
  t.deepEqual(body, original, "the original is untouched");
});

test("parseResponse / mapCompletionText: thought parts are not output text; usage normalised", (t) => {
  const json = {
    candidates: [
      {
        index: 0,
        content: { role: "model", parts: [{ text: "thinking...", thought: true }, { text: "Mail " }, { text: "x@y.z" }, { functionCall: { name: "send", args: {} } }] },
        finishReason: "STOP",
      },
    ],
    usageMetadata: { promptTokenCount: 100, cachedContentTokenCount: 40, candidatesTokenCount: 20, thoughtsTokenCount: 30, toolUsePromptTokenCount: 5 },
    modelVersion: "gemini-2.5-flash",
  };
  const facts = adapter.parseResponse(json);
  t.is(facts.completionText, "Mail x@y.z");
  t.deepEqual(facts.toolCalls, [{ name: "send" }]);
  t.deepEqual(facts.usage, { inputTokens: 105, outputTokens: 50, cachedInputTokens: 40, cacheWriteTokens: 0 });
  const redacted = adapter.mapCompletionText(json, (s) => s.replace("x@y.z", "*****"));
  t.is(adapter.parseResponse(redacted).completionText, "Mail *****");
  t.is(adapter.parseResponse(json).completionText, "Mail x@y.z");
});

test("errorEvent: a data chunk with a google.rpc.Status error, thrown by the genai SDK as ApiError", async (t) => {
  const text = adapter.errorEvent("Blocked by policy", "policy_violation", { details: { trace_id: "tr_3" } });
  const { events } = parseSse(text);
  t.like(JSON.parse(events[0]?.data ?? "{}"), { error: { code: 403, status: "PERMISSION_DENIED", message: "Blocked by policy" } });
  const observer = adapter.streamObserver();
  observer.push(new TextEncoder().encode(text));
  t.is(observer.end().errorMessage, "Blocked by policy");

  const fake = await startFakeProviders({ text: "partial answer", truncate: { afterEvents: 2 } });
  try {
    const client = new GoogleGenAI({ apiKey: "k", httpOptions: { baseUrl: fake.urls.google, fetch: fetchWithAppendedEvent(text) } });
    const stream = await client.models.generateContentStream({ model: "gemini-2.5-flash", contents: "hi" });
    let got = "";
    const err = await t.throwsAsync(async () => {
      for await (const chunk of stream) got += chunk.text ?? "";
    });
    t.true(err instanceof ApiError);
    t.is((err as ApiError).status, 403);
    t.regex(err?.message ?? "", /policy_violation/);
    t.is(got, "partial ");
  } finally {
    await fake.close();
  }
});
