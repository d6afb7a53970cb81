// Google adapter: spec-path body rewrite, native paths, prompt text and redaction, error event,
// citationSources (Vertex AI: citations) that follow an outbound redaction.
import { ApiError, GoogleGenAI } from "@google/genai";
import test from "ava";
import { create } from "@bufbuild/protobuf";
import { PolicyConditionsSchema, PolicySchema } from "@agentgov/proto";
import { fetchWithAppendedEvent, nativeRequest, rawRequest, startFakeProviders } from "../../../test/fakes/providers/index.js";
import { ProviderRequestError } from "./errors.js";
import { googleAdapter as adapter } from "./google.js";
import { parseSse } from "./sse-parser.js";
import { mapSlots, readSlots } from "./text-slots.js";
import { redactAnswer } from "../proxy/governance.js";

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
  t.is(adapter.resolve("/v1beta/models/gemini-embedding-001:embedContent", "", {})?.adapter?.answersWithText, false, "embeddings resolve to their own adapter (embeddings/google.test.ts)");
  t.is(adapter.resolve("/v1beta/models", "", undefined), null);
});

test("resolve: a native model segment that decodes to a path (/, \\, a dot segment) or does not decode is refused; others go upstream re-encoded", (t) => {
  for (const model of ["..%2f..%2ffiles", "gemini-2.5-flash%2F..%2F..%2Fadmin", "%2e%2e", ".", "%2E", "a%5cb", "a\\b", "%E0%A4%A", "%zz"]) {
    t.is(adapter.resolve(`/v1beta/models/${model}:generateContent`, "", { contents }), null, model);
  }
  // What goes upstream is the model the policies see, encoded once.
  t.deepEqual(adapter.resolve("/v1beta/tunedModels/my%20model%3Fx:generateContent", "?alt=sse", { contents }), {
    path: "/v1beta/tunedModels/my%20model%3Fx:generateContent?alt=sse",
    model: "my model?x",
    stream: false,
  });
  t.is(adapter.resolve("/v1beta/models/gemini-2.5-flash%2D001:generateContent", "", { contents })?.path, "/v1beta/models/gemini-2.5-flash-001:generateContent");
  // The spec path puts the body's model into the URL: the same names are refused there (400).
  for (const model of ["../../files", "models/..", "a\\b"]) {
    const err = t.throws(() => adapter.resolve("/chat/completions", "", { model, contents }), undefined, model);
    t.is((err as ProviderRequestError).code, "invalid_body", model);
  }
});

test("promptText: systemInstruction first (camelCase or snake_case), then text parts in order", (t) => {
  const parts = ["Be brief.", "Question one", "Answer one", "1", "Question two"]; // "1": the earlier call's args (a number, as written)
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

test("stream usage is the answer's total only once it ended: a stream cut after running counts reports none (counted locally, flagged estimated)", (t) => {
  const sse = (o: object) => `data: ${JSON.stringify(o)}\r\n\r\n`;
  const chunk = (text: string, out: number, finishReason?: string) =>
    sse({ candidates: [{ index: 0, content: { role: "model", parts: [{ text }] }, ...(finishReason ? { finishReason } : {}) }], usageMetadata: { promptTokenCount: 1000, candidatesTokenCount: out, totalTokenCount: 1000 + out } });
  const facts = (raw: string) => {
    const o = adapter.streamObserver();
    o.push(new TextEncoder().encode(raw));
    return o.end();
  };
  t.is(facts(chunk("Hello ", 8) + chunk("there ", 20)).usage, undefined, "cut before the end: running counts are not the total");
  t.is(facts(chunk("Hello ", 8) + chunk("there", 50, "STOP")).usage?.outputTokens, 50);
  // The totals may come in a chunk of their own after the finishing one.
  t.is(facts(chunk("Hello", 8, "STOP") + sse({ usageMetadata: { promptTokenCount: 1000, candidatesTokenCount: 9, totalTokenCount: 1009 } })).usage?.outputTokens, 9);
  // A blocked prompt has no candidates: its usage (the prompt) is final.
  t.is(facts(sse({ promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 12, totalTokenCount: 12 } })).usage?.inputTokens, 12);
});

const EMAIL = "jo.smith@example.com";
const emailRedactor = create(PolicySchema, { id: "pol_email", name: "email", status: "active", action: "redact", priority: 1, conditions: create(PolicyConditionsSchema, { direction: "outbound", piiTypes: ["email"] }) });
type Source = { startIndex?: number; endIndex: number; uri: string; license?: string };
type Cited = { candidates: { index: number; content: { role: string; parts: { text: string; thought?: boolean }[] }; citationMetadata: { citationSources: Source[] } }[] };
const bytes = (s: string) => Buffer.byteLength(s, "utf8");
/** The source's range of `text`, in UTF-8 bytes. */
const sliceBytes = (text: string, s: { startIndex?: number; endIndex: number }) => Buffer.from(text, "utf8").subarray(s.startIndex ?? 0, s.endIndex).toString("utf8");
/** A source covering `covered` (found in `text`) in UTF-8 bytes. */
const sourceOf = (text: string, covered: string, uri: string): Source => ({ startIndex: bytes(text.slice(0, text.indexOf(covered))), endIndex: bytes(text.slice(0, text.indexOf(covered) + covered.length)), uri, license: "" });
const answerOf = (json: Cited) => json.candidates[0]!.content.parts.filter((p) => !p.thought).map((p) => p.text).join("");
const sourcesOf = (json: Cited) => json.candidates[0]!.citationMetadata.citationSources;

test("citationSources (UTF-8 bytes into the candidate's answer text) follow an outbound redaction; one covering the address covers its label; a missing startIndex is 0", (t) => {
  for (const head of ["Our office", "Zürich 🚀 Büro"]) {
    const text = `${head}: mail ${EMAIL} for details. Recited passage follows here, word for word.`;
    const split = text.indexOf(" for details");
    const json: Cited = {
      candidates: [
        {
          index: 0,
          content: { role: "model", parts: [{ text: "Thinking it over.", thought: true }, { text: text.slice(0, split) }, { text: text.slice(split) }] },
          citationMetadata: {
            citationSources: [
              sourceOf(text, "Recited passage follows here", "https://example.org/a"),
              sourceOf(text, EMAIL, "https://example.org/b"),
              { endIndex: bytes(head), uri: "https://example.org/c" },
            ],
          },
        },
      ],
    };
    const original = structuredClone(json);
    const out = redactAnswer(adapter, json, [emailRedactor], true, undefined, false) as Cited;
    const answer = answerOf(out);
    t.is(answer, text.replace(EMAIL, "[REDACTED:email]"));
    t.deepEqual(sourcesOf(out).map((s) => sliceBytes(answer, s)), ["Recited passage follows here", "[REDACTED:email]", head], "byte offsets point at the same text in the redacted answer");
    t.deepEqual(sourcesOf(out)[2], sourcesOf(original)[2], "a range before the redaction keeps its bytes (no startIndex added)");
    t.deepEqual(json, original, "the original answer is untouched");
  }
});

test("citationSources in a JSON array of chunks count bytes of the candidate's answer so far; with nothing redacted or a range that cannot be placed, they stay as they came", (t) => {
  const first = `Zürich 🚀: mail ${EMAIL} `;
  const second = "for details. Recited passage follows here.";
  const text = first + second;
  const chunk = (part: string, sources?: Source[]) => ({ candidates: [{ index: 0, content: { role: "model", parts: [{ text: part }] }, ...(sources ? { citationMetadata: { citationSources: sources } } : {}) }] });
  const bad: Source[] = [
    { startIndex: 0, endIndex: bytes(text) + 5, uri: "https://example.org/outside" },
    { startIndex: 1, endIndex: 2, uri: "https://example.org/inside-a-character" }, // byte 2 is inside "ü"
    { startIndex: 9, endIndex: 4, uri: "https://example.org/reversed" },
  ];
  const json = [chunk(first), chunk(second, [sourceOf(text, "Recited passage", "https://example.org/a"), ...structuredClone(bad)])];
  const out = redactAnswer(adapter, json, [emailRedactor], true, undefined, false) as unknown as Cited[];
  const answer = out.map((c) => answerOf(c)).join("");
  t.is(answer, text.replace(EMAIL, "[REDACTED:email]"));
  const [moved, ...rest] = sourcesOf(out[1]!);
  t.is(sliceBytes(answer, moved!), "Recited passage");
  t.deepEqual(rest, bad, "ranges that cannot be placed are left as they were");
  const clean = [chunk("Nothing private. "), chunk(second, [sourceOf("Nothing private. " + second, "Recited passage", "https://example.org/a")])];
  t.deepEqual(redactAnswer(adapter, clean, [emailRedactor], true, undefined, false), clean, "nothing redacted: the answer as it came");
});

type Segment = { partIndex?: number; startIndex?: number; endIndex: number; text: string };
type Grounded = { candidates: { index: number; content: { role: string; parts: { text: string; thought?: boolean }[] }; groundingMetadata?: { groundingSupports: { segment: Segment; groundingChunkIndices: number[] }[] } }[] };
/** A segment quoting `quoted` (found in `text`), offsets in UTF-8 bytes of `text`. */
const segmentOf = (text: string, quoted: string, partIndex?: number): Segment => ({ ...(partIndex === undefined ? {} : { partIndex }), ...sourceOf(text, quoted, ""), text: quoted });
const segmentsOf = (json: Grounded) => json.candidates[0]!.groundingMetadata!.groundingSupports.map((s) => s.segment);

test("grounding segments of a thinking model's answer (part 0 is the thought, no partIndex) are placed in the answer text and follow its redaction", (t) => {
  const text = `Zürich office: mail ${EMAIL} today. The contract ends in May.`;
  const json: Grounded = {
    candidates: [
      {
        index: 0,
        content: { role: "model", parts: [{ text: "Let me look this up first.", thought: true }, { text }] },
        groundingMetadata: { groundingSupports: [{ segment: segmentOf(text, "The contract ends in May"), groundingChunkIndices: [0] }, { segment: segmentOf(text, `mail ${EMAIL} today`), groundingChunkIndices: [0] }] },
      },
    ],
  };
  const out = redactAnswer(adapter, json, [emailRedactor], true, undefined, false) as Grounded;
  const answer = answerOf(out as unknown as Cited);
  t.is(answer, text.replace(EMAIL, "[REDACTED:email]"));
  const [contract, mail] = segmentsOf(out);
  t.is(contract!.text, "The contract ends in May");
  t.is(sliceBytes(answer, contract!), "The contract ends in May", "moved onto the redacted answer");
  t.is(mail!.text, "mail [REDACTED:email] today");
  t.is(sliceBytes(answer, mail!), "mail [REDACTED:email] today");
});

test("grounding segments in a JSON array of chunks count bytes of the candidate's answer so far, as a stream does", (t) => {
  const first = `Zürich 🚀: mail ${EMAIL} now. `;
  const second = "The contract ends in May, as agreed.";
  const text = first + second;
  const chunk = (part: string, segments?: Segment[]) => ({
    candidates: [{ index: 0, content: { role: "model", parts: [{ text: part }] }, ...(segments ? { groundingMetadata: { groundingSupports: segments.map((segment) => ({ segment, groundingChunkIndices: [0] })) } } : {}) }],
  });
  const json = [chunk(first), chunk(second, [segmentOf(text, "The contract ends in May")])];
  const out = redactAnswer(adapter, json, [emailRedactor], true, undefined, false) as unknown as Grounded[];
  const answer = out.map((c) => answerOf(c as unknown as Cited)).join("");
  t.is(answer, text.replace(EMAIL, "[REDACTED:email]"));
  const [segment] = segmentsOf(out[1]!);
  t.is(segment!.text, "The contract ends in May");
  t.is(sliceBytes(answer, segment!), "The contract ends in May", "offsets into the whole answer so far, moved by the redaction before them");
});

test("citationSources uri and title are model output: a value the answer had redacted is redacted there too; clean ones keep their bytes", (t) => {
  const text = `Zürich 🚀: see https://crm.example/find?u=${EMAIL} for the record. Recited passage follows here.`;
  type Titled = Source & { title?: string };
  const sources: Titled[] = [
    { ...sourceOf(text, "Recited passage follows here", `https://crm.example/find?u=${EMAIL}`), title: `Profile of ${EMAIL}` },
    { ...sourceOf(text, "for the record", "https://example.org/clean"), title: "Clean" },
    { startIndex: 1, endIndex: 2, uri: `https://example.org/inside-a-character?u=${EMAIL}` }, // cannot be placed
  ];
  const json = { candidates: [{ index: 0, content: { role: "model", parts: [{ text }] }, citationMetadata: { citationSources: sources } }] };
  const original = structuredClone(json);
  const out = redactAnswer(adapter, json, [emailRedactor], true, undefined, false) as Cited;
  const answer = answerOf(out);
  t.is(answer, text.replace(EMAIL, "[REDACTED:email]"));
  const [recited, clean, stray] = sourcesOf(out) as Titled[];
  t.deepEqual(recited, { ...sourceOf(answer, "Recited passage follows here", "https://crm.example/find?u=[REDACTED:email]"), title: "Profile of [REDACTED:email]" });
  t.deepEqual(clean, { ...sourceOf(answer, "for the record", "https://example.org/clean"), title: "Clean" });
  t.deepEqual(stray, { startIndex: 1, endIndex: 2, uri: "https://example.org/inside-a-character?u=[REDACTED:email]" }, "offsets left as they were");
  t.false(JSON.stringify(out).includes(EMAIL));
  t.deepEqual(json, original, "the original answer is untouched");
});

// Vertex AI (aiplatform.googleapis.com; `@google/genai` with `vertexai: true`) names the list
// `citationMetadata.citations`, same fields, plus `license` and `publicationDate`.
type VertexCitation = Source & { title?: string; publicationDate?: { year: number; month: number; day: number } };
type VertexCited = { candidates: { index: number; content: { role: string; parts: { text: string }[] }; citationMetadata?: { citations: VertexCitation[] } }[]; modelVersion?: string };
const vertexChunk = (part: string, citations?: VertexCitation[]): VertexCited => ({
  candidates: [{ index: 0, content: { role: "model", parts: [{ text: part }] }, ...(citations ? { citationMetadata: { citations } } : {}) }],
  modelVersion: "gemini-2.5-flash",
});
const citationsOf = (json: VertexCited) => json.candidates[0]!.citationMetadata!.citations;

test("Vertex AI citationMetadata.citations follow an outbound redaction like citationSources: offsets moved, uri and title redacted, other fields kept", (t) => {
  const text = `Zürich 🚀 Büro: mail ${EMAIL} for details. Recited passage follows here, word for word.`;
  const date = { year: 2021, month: 3, day: 9 };
  const citations: VertexCitation[] = [
    { ...sourceOf(text, "Recited passage follows here", `https://crm.example/find?u=${EMAIL}`), title: `Profile of ${EMAIL}`, license: "CC-BY-4.0", publicationDate: date },
    { ...sourceOf(text, EMAIL, "https://example.org/b"), title: "Clean" },
    { endIndex: bytes("Zürich"), uri: "https://example.org/c" },
    { startIndex: 1, endIndex: 2, uri: "https://example.org/inside-a-character" }, // byte 2 is inside "ü"
  ];
  const json = vertexChunk(text, citations);
  const original = structuredClone(json);
  const out = redactAnswer(adapter, json, [emailRedactor], true, undefined, false) as VertexCited;
  const answer = answerOf(out as unknown as Cited);
  t.is(answer, text.replace(EMAIL, "[REDACTED:email]"));
  const [recited, mail, head, stray] = citationsOf(out);
  t.deepEqual(recited, { ...sourceOf(answer, "Recited passage follows here", "https://crm.example/find?u=[REDACTED:email]"), title: "Profile of [REDACTED:email]", license: "CC-BY-4.0", publicationDate: date });
  t.is(sliceBytes(answer, mail!), "[REDACTED:email]", "a range covering the address covers its label");
  t.deepEqual(head, citationsOf(original)[2], "a range before the redaction keeps its bytes (no startIndex added)");
  t.deepEqual(stray, citationsOf(original)[3], "a range that cannot be placed is left as it was");
  t.false(JSON.stringify(out).includes(EMAIL));
  t.deepEqual(json, original, "the original answer is untouched");
});

test("Vertex AI citations in a JSON array of chunks count bytes of the answer so far; with nothing redacted the answer passes byte for byte", (t) => {
  const first = `Zürich 🚀: mail ${EMAIL} `;
  const second = "for details. Recited passage follows here.";
  const text = first + second;
  const json = [vertexChunk(first), vertexChunk(second, [sourceOf(text, "Recited passage", "https://example.org/a")])];
  const out = redactAnswer(adapter, json, [emailRedactor], true, undefined, false) as VertexCited[];
  const answer = out.map((c) => answerOf(c as unknown as Cited)).join("");
  t.is(answer, text.replace(EMAIL, "[REDACTED:email]"));
  t.is(sliceBytes(answer, citationsOf(out[1]!)[0]!), "Recited passage");
  const cleanText = "Zürich 🚀: ask the press office for details. Recited passage follows here.";
  const clean = vertexChunk(cleanText, [{ ...sourceOf(cleanText, "Recited passage", "https://example.org/a"), title: "A", publicationDate: { year: 2020, month: 1, day: 2 } }]);
  const raw = JSON.stringify(clean);
  t.is(JSON.stringify(redactAnswer(adapter, JSON.parse(raw), [emailRedactor], true, undefined, false)), raw, "nothing redacted: the answer as it came");
});

test("stream observer: a leading UTF-8 BOM (split across chunks or not) does not hide the JSON-array form: its text and the provider's usage are read", (t) => {
  const element = (text: string, finishReason?: string) => JSON.stringify({ candidates: [{ index: 0, content: { role: "model", parts: [{ text }] }, ...(finishReason ? { finishReason } : {}) }], usageMetadata: { promptTokenCount: 11, candidatesTokenCount: 29, totalTokenCount: 40 } });
  const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`[${element("Hello ")}\r\n,\r\n${element("there.", "STOP")}]`, "utf8")]);
  for (const size of [1, 2, 3, 4, 10, body.length]) {
    const o = adapter.streamObserver();
    for (let i = 0; i < body.length; i += size) o.push(body.subarray(i, i + size));
    const facts = o.end();
    t.is(facts.completionText, "Hello there.", `size ${size}`);
    t.is(facts.usage?.outputTokens, 29, `size ${size}: the provider's usage, not an estimate`);
    t.is(facts.finishReason, "STOP");
  }
  // SSE with a BOM is still SSE.
  const sse = adapter.streamObserver();
  sse.push(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`data: ${element("Hi.", "STOP")}\r\n\r\n`, "utf8")]));
  t.is(sse.end().completionText, "Hi.");
});

test("stream observer: an SSE stream that ends cleanly without a candidate's finishReason, or a JSON array without its closing ], ended early; the input side of its running usage is kept", async (t) => {
  const fake = await startFakeProviders({ text: "A whole answer.", usage: { inputTokens: 30, outputTokens: 7 } });
  try {
    const req = nativeRequest("google", { stream: true }); // alt=sse
    const send = async (path = req.path) => (await rawRequest(fake.urls.google + path, { headers: req.headers, body: req.body })).text;
    const observe = (raw: string) => {
      const o = adapter.streamObserver();
      o.push(new TextEncoder().encode(raw));
      return o.end();
    };
    const whole = await send();
    const chunks = whole.split("\r\n\r\n").filter((e) => e !== "").map((e) => `${e}\r\n\r\n`);
    t.regex(chunks.at(-1)!, /"finishReason":"STOP"/, "the last chunk finishes the candidate");
    const complete = observe(whole);
    t.is(complete.endedEarly, undefined);
    t.is(complete.errorMessage, undefined);
    t.is(complete.partialUsage, undefined);

    // Every chunk but the finishing one: running counts only.
    const cut = observe(chunks.slice(0, -1).join(""));
    t.true(cut.endedEarly);
    t.regex(cut.errorMessage ?? "", /no candidate's finishReason/);
    t.true("A whole answer.".startsWith(cut.completionText) && cut.completionText !== "");
    t.is(cut.usage, undefined, "running counts are not the total");
    t.deepEqual(cut.partialUsage, { inputTokens: 30, cachedInputTokens: 0, cacheWriteTokens: 0 }, "the prompt count the chunks carried");
    // A blocked prompt has no candidates: its promptFeedback ends the answer.
    const blocked = observe(`data: ${JSON.stringify({ promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 12, totalTokenCount: 12 } })}\r\n\r\n`);
    t.is(blocked.endedEarly, undefined);
    // Gemini's own error chunk ended it: that error stays.
    fake.script({ text: "A whole answer.", streamError: { afterEvents: 2, message: "backend went away" } });
    const failed = observe(await send());
    t.is(failed.errorMessage, "backend went away");
    t.is(failed.endedEarly, undefined);
    t.is(observe("").endedEarly, undefined);

    // The JSON-array form (no alt=sse): its end is the array's closing "]".
    fake.script({ text: "A whole answer.", usage: { inputTokens: 30, outputTokens: 7 } });
    const arrayPath = req.path.replace("?alt=sse", "");
    const array = await send(arrayPath);
    t.true(array.startsWith("[") && array.endsWith("]"));
    t.is(observe(array).endedEarly, undefined);
    const open = observe(array.slice(0, -1)); // every element came, the finishing one included
    t.true(open.endedEarly);
    t.regex(open.errorMessage ?? "", /closing \]/);
    t.is(open.finishReason, "STOP");
    fake.script({ text: "A whole answer.", streamError: { afterEvents: 2, message: "backend went away" } });
    const failedArray = observe(await send(arrayPath));
    t.is(failedArray.errorMessage, "backend went away");
    t.is(failedArray.endedEarly, undefined);
  } finally {
    await fake.close();
  }
});

// --- session 25 QA (F1, F3): native slots that were never scanned ---

const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");

test("promptParts / mapPromptText: snake_case parts, code execution code and output, and text files (inlineData, base64) are input text; a redaction rewrites exactly that field", (t) => {
  const body = {
    contents: [
      { role: "model", parts: [{ function_call: { name: "f", args: { q: "snake call" } } }, { executableCode: { language: "PYTHON", code: "print(1)" } }, { code_execution_result: { outcome: "OUTCOME_OK", output: "code out" } }] },
      {
        role: "user",
        parts: [
          { function_response: { name: "f", response: { r: "snake response" }, parts: [{ inline_data: { mime_type: "text/plain", data: b64("attached é") } }] } },
          { functionResponse: { name: "g", response: {}, parts: [{ inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } }, { inlineData: { mimeType: "text/csv", data: b64("a,b") } }] } },
          { inlineData: { mimeType: "text/plain; charset=utf-8", data: b64("file text") } },
          { inlineData: { mimeType: "application/pdf", data: b64("%PDF") } },
          { executable_code: { language: "PYTHON", code: "x = 2" } },
          { text: "go on" },
        ],
      },
    ],
  };
  const original = structuredClone(body);
  const parts = ["snake call", "print(1)", "code out", "snake response", "attached é", "a,b", "file text", "x = 2", "go on"];
  t.deepEqual(adapter.promptParts(body), parts);
  const mapped = adapter.mapPromptText(body, (s) => (s === "attached é" ? "[REDACTED:x] é" : s.toUpperCase())) as typeof body;
  t.deepEqual(adapter.promptParts(mapped), parts.map((s) => (s === "attached é" ? "[REDACTED:x] é" : s.toUpperCase())));
  const user = mapped.contents[1]!.parts as Record<string, unknown>[];
  t.deepEqual(user[0], { function_response: { name: "f", response: { r: "SNAKE RESPONSE" }, parts: [{ inline_data: { mime_type: "text/plain", data: b64("[REDACTED:x] é") } }] } }, "the text file is the base64 of the redacted text");
  t.deepEqual((user[1] as { functionResponse: { parts: unknown[] } }).functionResponse.parts[0], { inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } }, "an image is no text");
  t.deepEqual(user[3], original.contents[1]!.parts[3], "a PDF is no text");
  t.deepEqual(mapped.contents[0]!.parts[1], { executableCode: { language: "PYTHON", code: "PRINT(1)" } });
  t.deepEqual(body, original, "the original is untouched");
  // Unchanged text files keep their bytes (base64 written only by a redaction).
  const same = adapter.mapPromptText({ contents: [{ role: "user", parts: [{ inlineData: { mimeType: "text/plain", data: "aGk" } }] }] }, (s) => s);
  t.deepEqual(same, { contents: [{ role: "user", parts: [{ inlineData: { mimeType: "text/plain", data: "aGk" } }] }] });
});

test("answerToolSlots: an answer's code execution code and output, text files and snake_case function_call args are judged and redacted leaf by leaf (JSON and JSON array of chunks)", (t) => {
  const answer = (parts: unknown[]) => ({ candidates: [{ index: 0, content: { role: "model", parts }, finishReason: "STOP" }] });
  const json = answer([
    { executableCode: { language: "PYTHON", code: 'print("jo@x.io")' } },
    { codeExecutionResult: { outcome: "OUTCOME_OK", output: "jo@x.io\n" } },
    { inlineData: { mimeType: "text/plain", data: b64("mail jo@x.io") } },
    { function_call: { name: "f", args: { to: "jo@x.io" } } },
    { text: "done" },
  ]);
  t.deepEqual(readSlots(json, adapter.answerToolSlots!), ['print("jo@x.io")', "jo@x.io\n", "mail jo@x.io", "jo@x.io"]);
  const out = mapSlots(json, adapter.answerToolSlots!, (s) => s.replaceAll("jo@x.io", "[E]")) as ReturnType<typeof answer>;
  t.deepEqual(out.candidates[0]!.content.parts, [
    { executableCode: { language: "PYTHON", code: 'print("[E]")' } },
    { codeExecutionResult: { outcome: "OUTCOME_OK", output: "[E]\n" } },
    { inlineData: { mimeType: "text/plain", data: b64("mail [E]") } },
    { function_call: { name: "f", args: { to: "[E]" } } },
    { text: "done" },
  ]);
  t.deepEqual(readSlots([answer([{ executableCode: { code: "a" } }]), answer([{ codeExecutionResult: { output: "b" } }])], adapter.answerToolSlots!), ["a", "b"]);
  t.deepEqual(adapter.parseResponse(json).toolCalls, [{ name: "f" }]);
});

test("stream observer: code execution code and output and text files are judged with the tool calls' arguments (SSE and JSON array)", (t) => {
  const chunk = (parts: unknown[], finish?: string) => ({ candidates: [{ index: 0, content: { role: "model", parts }, ...(finish ? { finishReason: finish } : {}) }] });
  const chunks = [chunk([{ executableCode: { language: "PYTHON", code: "print(2)" } }]), chunk([{ codeExecutionResult: { outcome: "OUTCOME_OK", output: "2" } }, { inlineData: { mimeType: "text/plain", data: b64("f") } }]), chunk([{ text: "two" }], "STOP")];
  const sse = adapter.streamObserver();
  sse.push(new TextEncoder().encode(chunks.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join("")));
  t.deepEqual(sse.end().toolArguments, [{ text: "print(2)" }, { text: "2" }, { text: "f" }]);
  t.deepEqual(adapter.parseResponse(chunks).toolArguments, [{ text: "print(2)" }, { text: "2" }, { text: "f" }]);
});

test("afterRedaction: a redacted answer's logprobsResult (chosen tokens and top candidates) is dropped from every candidate, JSON and JSON array", (t) => {
  const lp = { chosenCandidates: [{ token: "jo@x.io", logProbability: -0.1 }], topCandidates: [{ candidates: [{ token: "jo@x.io", logProbability: -0.1 }] }] };
  const json = { candidates: [{ index: 0, content: { role: "model", parts: [{ text: "mail jo@x.io" }] }, logprobsResult: lp, avgLogprobs: -0.1, finishReason: "STOP" }] };
  const redacted = adapter.mapCompletionText(json, (s) => s.replace("jo@x.io", "[E]")) as typeof json;
  adapter.afterRedaction!(json, redacted, (s) => s);
  t.false("logprobsResult" in redacted.candidates[0]!);
  t.is(redacted.candidates[0]!.avgLogprobs, -0.1);
  t.true("logprobsResult" in json.candidates[0]!, "the original is untouched");
  const array = [structuredClone(json), structuredClone(json)];
  adapter.afterRedaction!(array, array, (s) => s);
  t.false(array.some((r) => "logprobsResult" in r.candidates[0]!));
});

test("redactAnswer (the JSON answer path): code execution code and output redacted leaf by leaf, logprobsResult dropped, the answer text redacted", (t) => {
  const json = {
    candidates: [
      {
        index: 0,
        content: { role: "model", parts: [{ executableCode: { language: "PYTHON", code: `send("${EMAIL}")` } }, { codeExecutionResult: { outcome: "OUTCOME_OK", output: `sent to ${EMAIL}` } }, { text: `Done: ${EMAIL}` }] },
        logprobsResult: { chosenCandidates: [{ token: EMAIL, logProbability: -0.1 }] },
        finishReason: "STOP",
      },
    ],
  };
  const out = JSON.stringify(redactAnswer(adapter, json, [emailRedactor], true, undefined, false, undefined, true));
  t.false(out.includes(EMAIL), out);
  t.false(out.includes("logprobsResult"));
  t.true(out.includes('send(\\"[REDACTED:email]\\")'));
});
