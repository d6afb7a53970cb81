// The official @google/genai SDK pointed directly at the fake: JSON, SSE, function calls, native errors.
import { ApiError, GoogleGenAI } from "@google/genai";
import test from "ava";
import { rawRequest, startFakeProviders } from "./index.js";
import type { FakeProviders } from "./index.js";

async function withFake(run: (fake: FakeProviders, client: GoogleGenAI) => Promise<void>): Promise<void> {
  const fake = await startFakeProviders();
  try {
    await run(fake, new GoogleGenAI({ apiKey: "g-test", httpOptions: { baseUrl: fake.urls.google } }));
  } finally {
    await fake.close();
  }
}

const params = { model: "gemini-2.5-flash", contents: "Say hello.", config: { systemInstruction: "Be brief." } };

test("generateContent: text, usageMetadata, native path and x-goog-api-key recorded", async (t) => {
  await withFake(async (fake, client) => {
    fake.script({ text: "Hello!", usage: { inputTokens: 40, outputTokens: 12, cachedInputTokens: 16, reasoningTokens: 5 } });
    const res = await client.models.generateContent(params);
    t.is(res.text, "Hello!");
    t.is(res.usageMetadata?.promptTokenCount, 40);
    t.is(res.usageMetadata?.candidatesTokenCount, 7);
    t.is(res.usageMetadata?.thoughtsTokenCount, 5);
    t.is(res.usageMetadata?.cachedContentTokenCount, 16);
    t.is(res.modelVersion, "gemini-2.5-flash");
    const recorded = fake.requests[0];
    t.is(recorded?.path, "/v1beta/models/gemini-2.5-flash:generateContent");
    t.is(recorded?.headers["x-goog-api-key"], "g-test");
    t.like(recorded?.json, { systemInstruction: { parts: [{ text: "Be brief." }] }, contents: [{ role: "user", parts: [{ text: "Say hello." }] }] });
  });
});

test("generateContentStream: alt=sse, CRLF-delimited chunks rebuild the text; the last chunk holds the usage", async (t) => {
  await withFake(async (fake, client) => {
    fake.script({ text: "Streaming from Gemini.", usage: { inputTokens: 33, outputTokens: 8 }, comments: true, split: 3 });
    const stream = await client.models.generateContentStream(params);
    let text = "";
    let output: number | undefined;
    for await (const chunk of stream) {
      text += chunk.text ?? "";
      output = chunk.usageMetadata?.candidatesTokenCount ?? output;
    }
    t.is(text, "Streaming from Gemini.");
    t.is(output, 8);
    t.is(fake.requests[0]?.path, "/v1beta/models/gemini-2.5-flash:streamGenerateContent");
    t.is(fake.requests[0]?.query, "?alt=sse");
  });
});

test("function calls are exposed by the SDK, in JSON and in a stream", async (t) => {
  await withFake(async (fake, client) => {
    const toolCalls = [
      { name: "get_weather", arguments: { city: "Rome" } },
      { name: "get_time", arguments: { tz: "Europe/Rome" } },
    ];
    fake.script({ text: "", toolCalls });
    const res = await client.models.generateContent(params);
    t.deepEqual(res.functionCalls?.map((c) => [c.name, c.args]), toolCalls.map((c) => [c.name, c.arguments]));
    const names: string[] = [];
    for await (const chunk of await client.models.generateContentStream(params)) {
      for (const call of chunk.functionCalls ?? []) names.push(call.name ?? "");
    }
    t.deepEqual(names, ["get_weather", "get_time"]);
  });
});

test("native errors surface as ApiError with the status", async (t) => {
  await withFake(async (fake, client) => {
    for (const status of [400, 401, 429, 500] as const) {
      fake.script({ error: { status } });
      const err = await t.throwsAsync(client.models.generateContent(params));
      t.true(err instanceof ApiError, `status ${status}`);
      t.is((err as ApiError).status, status);
    }
    fake.script({ error: { status: 400 } });
    const err = await t.throwsAsync(client.models.generateContent(params));
    t.regex(err?.message ?? "", /API_KEY_INVALID/);
  });
});

test("a mid-stream error chunk makes the SDK throw", async (t) => {
  await withFake(async (fake, client) => {
    fake.script({ text: "Half an answer.", streamError: { afterEvents: 2, message: "backend failure" } });
    const stream = await client.models.generateContentStream(params);
    const err = await t.throwsAsync(async () => {
      for await (const _chunk of stream) {
        // consume
      }
    });
    t.true(err instanceof ApiError);
    t.regex(err?.message ?? "", /backend failure/);
  });
});

test("without alt=sse the stream is a JSON array; ?key= authenticates; unknown fields are refused", async (t) => {
  await withFake(async (fake) => {
    fake.script({ text: "Array mode." });
    const body = { contents: [{ role: "user", parts: [{ text: "hi" }] }] };
    const res = await rawRequest(`${fake.urls.google}/v1beta/models/gemini-2.5-flash:streamGenerateContent?key=k`, { body });
    t.is(res.status, 200);
    const elements = JSON.parse(res.text) as { candidates: { content: { parts: { text: string }[] } }[] }[];
    t.is(elements.map((e) => e.candidates[0]?.content.parts[0]?.text ?? "").join(""), "Array mode.");
    const bad = await rawRequest(`${fake.urls.google}/v1beta/models/gemini-2.5-flash:generateContent`, {
      body: { ...body, model: "gemini-2.5-flash" },
      headers: { "x-goog-api-key": "k" },
    });
    t.is(bad.status, 400);
    t.regex(bad.text, /Unknown name \\"model\\"/);
    const anonymous = await rawRequest(`${fake.urls.google}/v1beta/models/gemini-2.5-flash:generateContent`, { body });
    t.is(anonymous.status, 403);
  });
});
