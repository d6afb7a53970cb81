// The fakes' embeddings endpoints driven by each official SDK pointed directly at them: the SDK parses
// the native answer (vectors, usage), the fake records what the SDK sent, native errors surface as the
// SDK's own.
import test from "ava";
import OpenAI from "openai";
import { Mistral } from "@mistralai/mistralai";
import { CohereClientV2, CohereError } from "cohere-ai";
import { GoogleGenAI } from "@google/genai";
import { fakeVector, startFakeProviders } from "./index.js";
import type { FakeProviders } from "./index.js";

async function withFake(run: (fake: FakeProviders) => Promise<void>): Promise<void> {
  const fake = await startFakeProviders();
  try {
    await run(fake);
  } finally {
    await fake.close();
  }
}

const float32 = (values: number[]) => values.map((v) => Math.fround(v));

test("openai embeddings.create: base64 by default (decoded by the SDK), float on request, usage, body recorded", async (t) => {
  await withFake(async (fake) => {
    const openai = new OpenAI({ apiKey: "sk-test", baseURL: `${fake.urls.openai}/v1`, maxRetries: 0 });
    fake.script({ usage: { inputTokens: 11, outputTokens: 0 } });
    const r = await openai.embeddings.create({ model: "text-embedding-3-small", input: ["alpha", "beta"] });
    t.deepEqual(
      r.data.map((d) => Array.from(d.embedding)),
      [float32(fakeVector("alpha")), float32(fakeVector("beta"))],
    );
    t.deepEqual(r.usage, { prompt_tokens: 11, total_tokens: 11 });
    t.is(r.model, "text-embedding-3-small");
    t.is(fake.requests[0]?.path, "/v1/embeddings");
    t.deepEqual(fake.requests[0]?.json, { model: "text-embedding-3-small", input: ["alpha", "beta"], encoding_format: "base64" });
    const f = await openai.embeddings.create({ model: "text-embedding-3-small", input: "gamma", encoding_format: "float", dimensions: 4 });
    t.deepEqual(f.data[0]?.embedding, fakeVector("gamma", 4));
    fake.script({ error: { status: 429 } });
    const err = await t.throwsAsync(openai.embeddings.create({ model: "text-embedding-3-small", input: "x" }), { instanceOf: OpenAI.APIError });
    t.is((err as InstanceType<typeof OpenAI.APIError>).status, 429);
  });
});

test("mistral embeddings.create: vectors, usage, `input` on the wire", async (t) => {
  await withFake(async (fake) => {
    const mistral = new Mistral({ apiKey: "m-test", serverURL: fake.urls.mistral });
    fake.script({ usage: { inputTokens: 7, outputTokens: 0 } });
    const r = await mistral.embeddings.create({ model: "mistral-embed", inputs: ["un", "deux"] });
    t.deepEqual(
      r.data.map((d) => d.embedding),
      [fakeVector("un"), fakeVector("deux")],
    );
    t.is(r.usage.promptTokens, 7);
    t.deepEqual(fake.requests[0]?.json, { model: "mistral-embed", input: ["un", "deux"] });
  });
});

test("cohere embed (CohereClientV2, v2 API): texts and images, embedding types, billed units, native errors", async (t) => {
  await withFake(async (fake) => {
    const cohere = new CohereClientV2({ token: "c-test", environment: fake.urls.cohere, maxRetries: 0 });
    fake.script({ usage: { inputTokens: 5, outputTokens: 0 } });
    const r = await cohere.embed({ model: "embed-v4.0", texts: ["hello", "goodbye"], inputType: "search_document", embeddingTypes: ["float", "int8"] });
    t.deepEqual(r.embeddings.float, [fakeVector("hello"), fakeVector("goodbye")]);
    t.is(r.embeddings.int8?.length, 2);
    t.is(r.meta?.billedUnits?.inputTokens, 5);
    t.deepEqual(r.texts, ["hello", "goodbye"]);
    t.deepEqual(fake.requests[0]?.json, { model: "embed-v4.0", texts: ["hello", "goodbye"], input_type: "search_document", embedding_types: ["float", "int8"] });
    const img = await cohere.embed({ model: "embed-v4.0", inputType: "image", embeddingTypes: ["float"], images: ["data:image/png;base64,iVBORw0KGgo="] });
    t.is(img.embeddings.float?.length, 1);
    t.is(img.meta?.billedUnits?.images, 1);
    fake.script({ error: { status: 400, message: "invalid request: bad" } });
    const err = await t.throwsAsync(cohere.embed({ model: "embed-v4.0", texts: ["x"], inputType: "classification" }));
    t.true(err instanceof CohereError);
    t.is((err as CohereError).statusCode, 400);
  });
});

test("google models.embedContent: the SDK calls :batchEmbedContents with one request per content; no usage", async (t) => {
  await withFake(async (fake) => {
    const ai = new GoogleGenAI({ apiKey: "g-test", httpOptions: { baseUrl: fake.urls.google } });
    const r = await ai.models.embedContent({ model: "gemini-embedding-001", contents: ["first text", "second text"], config: { outputDimensionality: 4, taskType: "RETRIEVAL_DOCUMENT" } });
    t.deepEqual(
      r.embeddings?.map((e) => e.values),
      [fakeVector("first text", 4), fakeVector("second text", 4)],
    );
    const sent = fake.requests[0]!;
    t.is(sent.path, "/v1beta/models/gemini-embedding-001:batchEmbedContents");
    t.deepEqual(sent.json, {
      requests: [
        { content: { role: "user", parts: [{ text: "first text" }] }, taskType: "RETRIEVAL_DOCUMENT", outputDimensionality: 4, model: "models/gemini-embedding-001" },
        { content: { role: "user", parts: [{ text: "second text" }] }, taskType: "RETRIEVAL_DOCUMENT", outputDimensionality: 4, model: "models/gemini-embedding-001" },
      ],
    });
    t.is(sent.headers["x-goog-api-key"], "g-test");
  });
});

test("google :embedContent (REST): one embedding; unknown fields and a batch request of another model are refused", async (t) => {
  await withFake(async (fake) => {
    const post = (path: string, body: unknown) =>
      fetch(`${fake.urls.google}${path}`, { method: "POST", headers: { "content-type": "application/json", "x-goog-api-key": "g" }, body: JSON.stringify(body) });
    const one = await post("/v1beta/models/gemini-embedding-001:embedContent", { content: { parts: [{ text: "doc" }] }, title: "T" });
    t.deepEqual(await one.json(), { embedding: { values: fakeVector("T\ndoc") } });
    t.is((await post("/v1beta/models/gemini-embedding-001:embedContent", { content: { parts: [{ text: "doc" }] }, stream: true })).status, 400);
    t.is((await post("/v1beta/models/gemini-embedding-001:batchEmbedContents", { requests: [{ model: "models/other", content: { parts: [{ text: "doc" }] } }] })).status, 400);
  });
});
