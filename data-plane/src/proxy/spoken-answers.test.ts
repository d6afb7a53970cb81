// Spoken answers (OpenAI chat completions with audio output): the transcript is the answer's text (traced,
// judged by outbound policies); the audio cannot be judged or rewritten, so a redaction that would change
// a transcript refuses the answer, and a streamed spoken answer is not requested under outbound
// block/redact policies (its audio chunks would leave before their transcript is judged).
import test from "ava";
import { create } from "@bufbuild/protobuf";
import { PolicyConditionsSchema, PolicySchema, type Policy, type Trace } from "@agentgov/proto";
import { governStream } from "../policy/stream/index.js";
import { callProxy, governanceState, startInProcessProxy, type InProcessProxy } from "./testing/in-process-proxy.js";

const KEY = "sk_spoken_test_key";
const AGENT = "agt_01SPOKEN00000000000000000";
const SSN = "536-22-8726";
const AUDIO = Buffer.from("RIFF....WAVEfmt spoken bytes").toString("base64");

const ssnPolicy = (action: "block" | "redact"): Policy =>
  create(PolicySchema, { id: `pol_${action}`, name: `${action} ssn`, status: "active", action, priority: 1, conditions: create(PolicyConditionsSchema, { direction: "outbound", piiTypes: ["ssn"] }) });

const spokenJson = (transcript: string) =>
  JSON.stringify({
    id: "c1",
    object: "chat.completion",
    created: 1,
    model: "gpt-4o-audio-preview",
    choices: [{ index: 0, message: { role: "assistant", content: null, refusal: null, audio: { id: "audio_1", expires_at: 1, data: AUDIO, transcript } }, finish_reason: "stop" }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  });
const chunk = (o: object) => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "gpt-4o-audio-preview", ...o })}\n\n`;
const spokenSse = (transcript: string) =>
  chunk({ choices: [{ index: 0, delta: { role: "assistant", audio: { id: "audio_1", transcript: transcript.slice(0, 12) } } }] }) +
  chunk({ choices: [{ index: 0, delta: { audio: { data: AUDIO } } }] }) +
  chunk({ choices: [{ index: 0, delta: { audio: { transcript: transcript.slice(12) } }, finish_reason: "stop" }] }) +
  chunk({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }) +
  "data: [DONE]\n\n";

interface Spoken extends InProcessProxy {
  /** Request bodies the upstream received. */
  received: string[];
}

async function setup(policies: Policy[], transcript: string): Promise<Spoken> {
  const received: string[] = [];
  const proxy = await startInProcessProxy(
    governanceState({ tenant: "ten_spoken", agent: AGENT, key: KEY }, policies),
    (body, res) => {
      received.push(body.toString());
      const stream = body.includes('"stream":true');
      res.writeHead(200, { "content-type": stream ? "text/event-stream" : "application/json" });
      if (!body.includes('"modalities"')) res.end(chunk({ choices: [{ index: 0, delta: { content: "fine" }, finish_reason: "stop" }] }) + "data: [DONE]\n\n");
      else res.end(stream ? spokenSse(transcript) : spokenJson(transcript));
    },
    (deps) => {
      deps.streamGovernor = governStream;
    },
  );
  return { ...proxy, received };
}

async function ask(url: string, stream: boolean): Promise<{ status: number; text: string }> {
  const r = await fetch(`${url}/v1/proxy/openai/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-x", "x-service-key": KEY, "x-service-agent": AGENT },
    body: JSON.stringify({ model: "gpt-4o-audio-preview", stream, modalities: ["text", "audio"], audio: { voice: "alloy", format: "wav" }, messages: [{ role: "user", content: "read me my SSN" }] }),
  });
  return { status: r.status, text: await r.text() };
}

async function traceOf(s: Spoken): Promise<Trace> {
  for (let i = 0; i < 200 && s.traces.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  return s.traces[0]!;
}

const transcript = `Your SSN is ${SSN}, as on file.`;

for (const stream of [false, true]) {
  test(`${stream ? "SSE" : "JSON"} without outbound policies: the spoken answer passes unchanged; its transcript is the trace's completion, PII masked`, async (t) => {
    const s = await setup([], transcript);
    try {
      const r = await ask(s.url, stream);
      t.is(r.status, 200);
      t.is(r.text, stream ? spokenSse(transcript) : spokenJson(transcript));
      const tr = await traceOf(s);
      t.is(tr.completion, `Your SSN is ${"*".repeat(SSN.length)}, as on file.`);
      t.deepEqual(tr.piiDetections.filter((d) => d.source === "completion").map((d) => d.entityType), ["ssn"]);
      t.true(tr.qualityScores.some((q) => q.scorer === "non_empty" && q.score === 1), "scored as an answer with text");
    } finally {
      await s.close();
    }
  });
}

test("JSON: an outbound block policy judges the transcript (403, traced blocked)", async (t) => {
  const s = await setup([ssnPolicy("block")], transcript);
  try {
    const r = await ask(s.url, false);
    t.is(r.status, 403);
    t.regex(r.text, /response blocked by policy \\?"block ssn\\?"/);
    t.false(r.text.includes(AUDIO), "no audio leaves");
    const tr = await traceOf(s);
    t.is(tr.status, "blocked");
    t.deepEqual(tr.policiesFired, ["block ssn"]);
  } finally {
    await s.close();
  }
});

test("JSON: a redaction that would change the transcript refuses the answer (the audio says it too); one that changes nothing passes it", async (t) => {
  const s = await setup([ssnPolicy("redact")], transcript);
  try {
    const r = await ask(s.url, false);
    t.is(r.status, 403);
    t.regex(r.text, /a spoken answer \(audio\) cannot be redacted/);
    t.false(r.text.includes(AUDIO));
    t.false(r.text.includes(SSN));
    const tr = await traceOf(s);
    t.is(tr.status, "blocked");
    t.is(tr.outputTokens, 5, "the provider's usage is on the trace (audio models are not in the price table: flagged)");
    t.true(tr.priceMissing);
  } finally {
    await s.close();
  }
  const clean = await setup([ssnPolicy("redact")], "Your order ships on Monday.");
  try {
    const r = await ask(clean.url, false);
    t.is(r.status, 200);
    t.is(r.text, spokenJson("Your order ships on Monday."));
  } finally {
    await clean.close();
  }
});

for (const action of ["block", "redact"] as const) {
  test(`SSE with an outbound ${action} policy: a streamed spoken answer is refused before it is requested`, async (t) => {
    const s = await setup([ssnPolicy(action)], transcript);
    try {
      const r = await ask(s.url, true);
      t.is(r.status, 403);
      t.regex(r.text, /streamed spoken answer \(audio output\) cannot be governed by policy/);
      t.deepEqual(s.received, [], "the provider was not called");
      const tr = await traceOf(s);
      t.is(tr.status, "blocked");
      t.deepEqual(tr.policiesFired, [`${action} ssn`], "the policy that refused it is on the trace");
      // Without audio the same stream request is served.
      const plain = await callProxy(s.url, { key: KEY, agent: AGENT }, true);
      t.is(plain.status, 200);
      t.false(plain.cut);
    } finally {
      await s.close();
    }
  });
}
