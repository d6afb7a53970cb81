// n>1 choices (OpenAI/Mistral) or candidates (Gemini): JSON and stream report the same finish reason,
// that of the lowest index that has one, whatever order the choices finish in on the stream.
import test from "ava";
import { googleAdapter } from "./google.js";
import { mistralAdapter } from "./mistral.js";
import { openaiAdapter } from "./openai.js";
import type { ProviderAdapter, ResponseFacts } from "./types.js";

function observe(adapter: ProviderAdapter, events: unknown[], eol = "\n"): ResponseFacts {
  const observer = adapter.streamObserver();
  for (const e of events) observer.push(Buffer.from(`data: ${JSON.stringify(e)}${eol}${eol}`));
  return observer.end();
}

for (const adapter of [openaiAdapter, mistralAdapter]) {
  test(`${adapter.name}: two choices, choice 1 finishes last — stream and JSON both report choice 0's reason`, (t) => {
    const json = {
      model: "m",
      choices: [
        { index: 1, message: { role: "assistant", content: "b" }, finish_reason: "stop" },
        { index: 0, message: { role: "assistant", content: "a" }, finish_reason: "length" },
      ],
    };
    const stream = [
      { model: "m", choices: [{ index: 0, delta: { content: "a" } }, { index: 1, delta: { content: "b" } }] },
      { model: "m", choices: [{ index: 0, delta: {}, finish_reason: "length" }] },
      { model: "m", choices: [{ index: 1, delta: {}, finish_reason: "stop" }] },
    ];
    t.is(adapter.parseResponse(json).finishReason, "length");
    t.is(observe(adapter, stream).finishReason, "length");
    // the other order of arrival gives the same
    t.is(observe(adapter, [stream[0], stream[2], stream[1]]).finishReason, "length");
  });

  test(`${adapter.name}: only a higher choice finished (interrupted stream) — its reason is reported, as from JSON`, (t) => {
    const stream = [{ choices: [{ index: 0, delta: { content: "a" } }] }, { choices: [{ index: 1, delta: { content: "b" }, finish_reason: "stop" }] }];
    t.is(observe(adapter, stream).finishReason, "stop");
    t.is(adapter.parseResponse({ choices: [{ index: 0, message: { content: "a" }, finish_reason: null }, { index: 1, message: { content: "b" }, finish_reason: "stop" }] }).finishReason, "stop");
  });
}

test("google: two candidates, candidate 1 finishes last — SSE, JSON array and JSON report candidate 0's reason", (t) => {
  const json = {
    candidates: [
      { index: 1, content: { role: "model", parts: [{ text: "b" }] }, finishReason: "STOP" },
      { index: 0, content: { role: "model", parts: [{ text: "a" }] }, finishReason: "MAX_TOKENS" },
    ],
  };
  const chunks = [
    { candidates: [{ index: 0, content: { role: "model", parts: [{ text: "a" }] } }, { index: 1, content: { role: "model", parts: [{ text: "b" }] } }] },
    { candidates: [{ index: 0, content: { role: "model", parts: [] }, finishReason: "MAX_TOKENS" }] },
    { candidates: [{ index: 1, content: { role: "model", parts: [] }, finishReason: "STOP" }] },
  ];
  t.is(googleAdapter.parseResponse(json).finishReason, "MAX_TOKENS");
  t.is(observe(googleAdapter, chunks, "\r\n").finishReason, "MAX_TOKENS");
  t.is(observe(googleAdapter, [chunks[0], chunks[2], chunks[1]], "\r\n").finishReason, "MAX_TOKENS");
  t.is(googleAdapter.parseResponse(chunks).finishReason, "MAX_TOKENS"); // buffered streamGenerateContent array
});

test("google: one candidate over several chunks — the last finish reason of that candidate is kept", (t) => {
  const chunks = [
    { candidates: [{ content: { role: "model", parts: [{ text: "a" }] } }] },
    { candidates: [{ content: { role: "model", parts: [{ text: "b" }] }, finishReason: "STOP" }] },
  ];
  t.is(observe(googleAdapter, chunks, "\r\n").finishReason, "STOP");
});
