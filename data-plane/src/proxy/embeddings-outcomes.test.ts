// The handler's treatment of an answer without text (embeddings, `answersWithText: false`), in one
// process (real handler, governance state, budget ledger, undici, an upstream HTTP server): the budget
// reservation holds no output tokens (a model the table does not know is reserved at the provider's
// ceiling, whose output rate would otherwise reserve dollars for output that never comes), and the trace
// has the provider's usage and no quality scores (nor their span).
import test from "ava";
import { request as httpRequest } from "node:http";
import type { Trace } from "@agentgov/proto";
import { ceilingPrice, computeCost, priceFor } from "../pricing/index.js";
import { governanceState, startInProcessProxy } from "./testing/in-process-proxy.js";

const KEY = "sk_embeddings_test_key";
const AGENT = "agt_01EMBEDDINGS0000000000000";
const day = () => new Date().toISOString().slice(0, 10);
const ZERO = { outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0 };

const answer = (model: string) => JSON.stringify({ object: "list", data: [{ object: "embedding", index: 0, embedding: [0.25, -0.5] }], model, usage: { prompt_tokens: 3, total_tokens: 3 } });

function post(url: string, path: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-x", "x-service-key": KEY, "x-service-agent": AGENT },
    });
    req.on("response", (res) => {
      const parts: Buffer[] = [];
      res.on("data", (c: Buffer) => parts.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString("utf8") }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

async function traceOf(traces: Trace[], n: number): Promise<Trace> {
  for (let i = 0; i < 200 && traces.length < n; i++) await new Promise((r) => setTimeout(r, 10));
  if (traces.length < n) throw new Error("no trace");
  return traces[n - 1]!;
}

test("an embeddings call reserves its input only (no output tokens), settles at the provider's usage, and its trace has no quality scores", async (t) => {
  let release: () => void = () => {};
  let arrived: () => void = () => {};
  const upstreamHas = new Promise<void>((r) => (arrived = r));
  const s = await startInProcessProxy(governanceState({ tenant: "ten_embed", agent: AGENT, key: KEY }), (_body, res) => {
    const model = /"model":"([^"]+)"/.exec(_body.toString("utf8"))?.[1] ?? "";
    const send = () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(answer(model));
    };
    if (model === "text-embedding-next") {
      release = send;
      arrived();
    } else send();
  });
  try {
    // A name the table does not know: reserved at the provider's ceiling, input only.
    const unknown = JSON.stringify({ model: "text-embedding-next", input: ["hello world", "second text"], encoding_format: "float" });
    const pending = post(s.url, "/v1/proxy/openai/v1/embeddings", unknown);
    await upstreamHas;
    const reservedInputOnly = computeCost(ceilingPrice("openai"), { inputTokens: Buffer.byteLength(unknown), ...ZERO }).totalCost;
    t.true(reservedInputOnly > 0);
    t.is(s.budget.spent(AGENT, day()), reservedInputOnly, "the body's bytes as input tokens, no output");
    release();
    const r = await pending;
    t.is(r.status, 200);
    t.deepEqual(JSON.parse(r.text), JSON.parse(answer("text-embedding-next")), "the answer as the provider sent it");
    const first = await traceOf(s.traces, 1);
    t.is(first.inputTokens, 3);
    t.is(first.outputTokens, 0);
    t.deepEqual(first.qualityScores, []);
    t.is(s.budget.spent(AGENT, day()), computeCost(ceilingPrice("openai"), { inputTokens: 3, ...ZERO }).totalCost, "settled at the ceiling for the 3 input tokens");

    // A priced model: exact cost, no quality scores, no quality_score span; a chat call still scores.
    const known = await post(s.url, "/v1/proxy/openai/v1/embeddings", JSON.stringify({ model: "text-embedding-3-small", input: "hello" }));
    t.is(known.status, 200);
    const second = await traceOf(s.traces, 2);
    t.is(second.status, "success");
    t.is(second.costUsd, computeCost(priceFor("openai", "text-embedding-3-small"), { inputTokens: 3, ...ZERO }).totalCost);
    t.false(second.tokensEstimated);
    t.is(second.completion, "");
    t.deepEqual(second.qualityScores, []);
    t.false(second.spans.some((x) => x.stage === "quality_score"));
    t.deepEqual(second.toolCalls, []);
    t.is(s.budget.inFlight(AGENT, day()), 0);
  } finally {
    await s.close();
  }
});

test("a token-array input is refused with 400 before the provider is called, untraced", async (t) => {
  let called = 0;
  const s = await startInProcessProxy(governanceState({ tenant: "ten_embed", agent: AGENT, key: KEY }), (_body, res) => {
    called++;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(answer("text-embedding-3-small"));
  });
  try {
    const r = await post(s.url, "/v1/proxy/openai/v1/embeddings", JSON.stringify({ model: "text-embedding-3-small", input: [[9906, 1917]] }));
    t.is(r.status, 400);
    t.regex(r.text, /token arrays cannot be judged/);
    t.is(called, 0);
    t.is(s.traces.length, 0, "an admission refusal is not traced (DESIGN.md §11)");
  } finally {
    await s.close();
  }
});
