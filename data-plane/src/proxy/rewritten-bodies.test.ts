// A body the sidecar rewrites (an inbound or outbound redaction, the stream usage option it adds) keeps
// every byte's meaning outside what it changed: integers beyond 2^53 (a seed, a tool argument's order id)
// reach the provider and the client as sent, not rounded to a double (JSON.parse → JSON.stringify).
import test from "ava";
import { create } from "@bufbuild/protobuf";
import { PolicyConditionsSchema, PolicySchema, type Policy } from "@agentgov/proto";
import { governStream } from "../policy/stream/index.js";
import { governanceState, startInProcessProxy, type InProcessProxy } from "./testing/in-process-proxy.js";

const KEY = "sk_rewrite_test_key";
const AGENT = "agt_01REWRITE0000000000000000";
const BIG = "12345678901234567891";
const EMAIL = "jane.doe@example.com";

const redactEmail: Policy = create(PolicySchema, {
  id: "pol_email",
  name: "redact email",
  status: "active",
  action: "redact",
  priority: 1,
  conditions: create(PolicyConditionsSchema, { direction: "both", piiTypes: ["email"] }),
});

interface Setup extends InProcessProxy {
  received: string[];
}

/** The sidecar (every provider to one upstream answering `answer`), with the stream governor and OPENAI_STREAM_USAGE=budgeted. */
async function setup(policies: Policy[], answer: { type: string; body: string }): Promise<Setup> {
  const received: string[] = [];
  const proxy = await startInProcessProxy(
    governanceState({ tenant: "ten_rewrite", agent: AGENT, key: KEY }, policies),
    (body, res) => {
      received.push(body.toString());
      res.writeHead(200, { "content-type": answer.type });
      res.end(answer.body);
    },
    (deps) => {
      for (const p of ["anthropic", "google"]) deps.baseUrls[p] = deps.baseUrls.openai!;
      deps.streamGovernor = governStream;
      deps.askStreamUsage = "budgeted";
    },
  );
  return { ...proxy, received };
}

async function post(url: string, path: string, body: string): Promise<{ status: number; text: string }> {
  const r = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-x", "x-api-key": "sk-x", "x-service-key": KEY, "x-service-agent": AGENT },
    body,
  });
  return { status: r.status, text: await r.text() };
}

const OPENAI_ANSWER = { type: "application/json", body: JSON.stringify({ id: "c1", object: "chat.completion", created: 1, model: "gpt-4o-mini", choices: [{ index: 0, message: { role: "assistant", content: "fine" }, finish_reason: "stop" }], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } }) };
const OPENAI_SSE = {
  type: "text/event-stream",
  body: `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"fine"},"finish_reason":"stop"}],"usage":null}\n\ndata: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}\n\ndata: [DONE]\n\n`,
};

test("inbound redaction: the provider gets the body's large integers as sent (seed, a history tool call's object arguments)", async (t) => {
  const s = await setup([redactEmail], OPENAI_ANSWER);
  try {
    const body = `{"model":"gpt-4o-mini","seed":${BIG},"messages":[{"role":"user","content":"write to ${EMAIL}"}]}`;
    t.is((await post(s.url, "/v1/proxy/openai/v1/chat/completions", body)).status, 200);
    t.is(s.received[0], body.replace(EMAIL, "[REDACTED:email]"));

    const anthropic = `{"model":"claude-3-5-haiku-latest","max_tokens":10,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"refund","input":{"order_id":${BIG}}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"done"},{"type":"text","text":"mail ${EMAIL}"}]}]}`;
    await post(s.url, "/v1/proxy/anthropic/v1/messages", anthropic);
    t.is(s.received[1], anthropic.replace(EMAIL, "[REDACTED:email]"));
  } finally {
    await s.close();
  }
});

test("the stream usage option added for a budgeted agent changes nothing else of the body", async (t) => {
  const s = await setup([], OPENAI_SSE);
  try {
    const body = `{"model":"gpt-4o-mini","stream":true,"seed":${BIG},"messages":[{"role":"user","content":"hello"}]}`;
    const r = await post(s.url, "/v1/proxy/openai/v1/chat/completions", body);
    t.is(r.status, 200);
    t.is(s.received[0], `${body.slice(0, -1)},"stream_options":{"include_usage":true}}`);
  } finally {
    await s.close();
  }
});

test("outbound redaction: the client gets the answer's large integers as sent (JSON answer, and an SSE event rewritten by the stream governor)", async (t) => {
  const answer = `{"id":"m1","type":"message","role":"assistant","model":"claude-3-5-haiku-latest","content":[{"type":"text","text":"Refunding ${EMAIL}"},{"type":"tool_use","id":"t1","name":"refund","input":{"order_id":${BIG},"amount":1e2}}],"stop_reason":"tool_use","usage":{"input_tokens":3,"output_tokens":4}}`;
  const json = await setup([redactEmail], { type: "application/json", body: answer });
  try {
    const r = await post(json.url, "/v1/proxy/anthropic/v1/messages", `{"model":"claude-3-5-haiku-latest","max_tokens":10,"messages":[{"role":"user","content":"refund"}]}`);
    t.is(r.status, 200);
    t.is(r.text, answer.replace(EMAIL, "[REDACTED:email]"));
  } finally {
    await json.close();
  }

  const event = `{"candidates":[{"content":{"role":"model","parts":[{"text":"Refunding ${EMAIL}."},{"functionCall":{"name":"refund","args":{"order_id":${BIG}}}}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":4,"totalTokenCount":7}}`;
  const sse = await setup([redactEmail], { type: "text/event-stream", body: `data: ${event}\r\n\r\n` });
  try {
    const r = await post(sse.url, "/v1/proxy/google/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"refund"}]}]}`);
    t.is(r.status, 200);
    t.true(r.text.includes(`"order_id":${BIG}`), r.text);
    t.false(r.text.includes(EMAIL));
  } finally {
    await sse.close();
  }
});
