// Refusals a retry cannot change say `x-should-retry: false`, which the openai and anthropic SDKs obey
// before their own rules (QA, session 27: with default settings both SDKs waited out a used-up budget's
// Retry-After — the hours to UTC midnight — and retried every 502 unreadable_answer, paying the
// provider three times for one call). Through the real handler, with the official SDKs as clients.
import test from "ava";
import { create } from "@bufbuild/protobuf";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { AgentSchema, PolicyConditionsSchema, PolicySchema, SnapshotSchema, type Policy } from "@agentgov/proto";
import { fromSnapshot } from "../state/governance-state.js";
import { governanceState, openAiUpstream, startInProcessProxy } from "./testing/in-process-proxy.js";

const KEY = "sk_final_refusals_key";
const AGENT = "agt_01F1NA1REFUSA1S0000000000";
const HEADERS = { "x-service-key": KEY, "x-service-agent": AGENT };

function stateWith(agent: { budgetLimitDaily?: number; rateLimit?: number }, policies: Policy[] = []) {
  const base = governanceState({ tenant: "ten_final", agent: AGENT, key: KEY }, policies);
  const a = base.agents.get(AGENT)!;
  return fromSnapshot(1n, create(SnapshotSchema, { tenantId: base.tenantId, agents: [create(AgentSchema, { ...a, ...agent })], keys: [...base.keysByHash.values()], policies }));
}

const blockOutbound = create(PolicySchema, { id: "pol_out", name: "out", status: "active", action: "block", priority: 1, conditions: create(PolicyConditionsSchema, { direction: "outbound", keywords: ["secret"] }) });

/** The rejection of `call`, which must come (the test's timeout catches an SDK waiting for hours). */
async function rejection(call: () => Promise<unknown>): Promise<{ status?: number }> {
  try {
    await call();
  } catch (e) {
    return e as { status?: number };
  }
  throw new Error("the call succeeded");
}

test("a used-up daily budget: the openai and anthropic SDKs (default retries) give up at once, one request each", async (t) => {
  t.timeout(30_000);
  const s = await startInProcessProxy(stateWith({ budgetLimitDaily: 0 }), openAiUpstream, (deps) => {
    deps.baseUrls.anthropic = deps.baseUrls.openai!;
  });
  t.teardown(() => s.close());
  const openai = new OpenAI({ apiKey: "sk-x", baseURL: `${s.url}/v1/proxy/openai/v1`, defaultHeaders: HEADERS });
  const anthropic = new Anthropic({ apiKey: "sk-x", baseURL: `${s.url}/v1/proxy/anthropic`, defaultHeaders: HEADERS });
  const o = await rejection(() => openai.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hello" }] }));
  const a = await rejection(() => anthropic.messages.create({ model: "claude-3-5-haiku-latest", max_tokens: 16, messages: [{ role: "user", content: "hello" }] }));
  t.is(o.status, 429);
  t.is(a.status, 429);
  t.is(s.traces.length, 2, "one request per SDK call (each refusal is traced)");
  t.deepEqual(s.traces.map((x) => x.errorCode), ["budget_exceeded", "budget_exceeded"]);
});

test("an answer the policies cannot read (502 unreadable_answer): the openai SDK does not call the provider again", async (t) => {
  t.timeout(30_000);
  let upstreamCalls = 0;
  const s = await startInProcessProxy(stateWith({}, [blockOutbound]), (_b, res) => {
    upstreamCalls++;
    res.writeHead(200, { "content-type": "application/json" });
    res.end("this is not json");
  });
  t.teardown(() => s.close());
  const openai = new OpenAI({ apiKey: "sk-x", baseURL: `${s.url}/v1/proxy/openai/v1`, defaultHeaders: HEADERS });
  const e = await rejection(() => openai.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hello" }] }));
  t.is(e.status, 502);
  t.is(upstreamCalls, 1);
});

test("refusals a retry can end differently (a rate limit, an unreachable provider) leave the SDKs' retry rules alone; final ones say x-should-retry: false", async (t) => {
  const s = await startInProcessProxy(stateWith({ rateLimit: 1 }, [create(PolicySchema, { id: "pol_in", name: "in", status: "active", action: "block", priority: 1, conditions: create(PolicyConditionsSchema, { direction: "inbound", keywords: ["forbidden"] }) })]), openAiUpstream);
  t.teardown(() => s.close());
  const post = (content: string) =>
    fetch(`${s.url}/v1/proxy/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-x", ...HEADERS },
      body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content }] }),
    });
  const blocked = await post("a forbidden word");
  t.is(blocked.status, 403);
  t.is(blocked.headers.get("x-should-retry"), "false");
  const limited = await post("hello");
  t.is(limited.status, 429);
  t.is(((await limited.json()) as { error: { code: string } }).error.code, "rate_limit_exceeded");
  t.is(limited.headers.get("x-should-retry"), null);
  const unknownAgent = await fetch(`${s.url}/v1/proxy/openai/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", "x-service-key": KEY, "x-service-agent": "agt_nobody" }, body: "{}" });
  t.is(unknownAgent.status, 404);
  t.is(unknownAgent.headers.get("x-should-retry"), "false");
});
