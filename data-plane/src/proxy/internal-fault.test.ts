// A fault of the sidecar's own (a throwing component, standing in for a bug) between admission and the
// trace must still answer the caller, settle the budget reservation and leave a trace: the handler's
// safety net. The faults are injected through the handler's dependencies; everything else is real
// (governance state, rate limiter, budget ledger, an upstream HTTP server, undici).
import test from "ava";
import { callProxy, governanceState, openAiChunk as chunk, openAiUpstream, OPENAI_SSE as sse, startInProcessProxy, type InProcessProxy } from "./testing/in-process-proxy.js";
import type { ProxyDeps } from "./handler.js";

const KEY = "sk_fault_test_key";
const AGENT = "agt_01FAULT00000000000000000000";
const state = governanceState({ tenant: "ten_fault", agent: AGENT, key: KEY });

/** The real handler before an upstream answering an OpenAI completion (JSON or SSE), with `fault` injected. */
function setup(fault: (deps: ProxyDeps) => void): Promise<InProcessProxy> {
  return startInProcessProxy(state, openAiUpstream, fault);
}

const call = (url: string, stream: boolean) => callProxy(url, { key: KEY, agent: AGENT }, stream);

const until = async (cond: () => boolean) => {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
};

test("a fault before the answer: 500 internal_error in the error shape, and one trace", async (t) => {
  const s = await setup((deps) => {
    deps.limiter.take = () => {
      throw new Error("injected fault");
    };
  });
  try {
    const r = await call(s.url, false);
    t.is(r.status, 500);
    t.is((JSON.parse(r.text) as { error: { code: string } }).error.code, "internal_error");
    await until(() => s.traces.length > 0);
    t.is(s.traces.length, 1);
    t.is(s.traces[0]!.status, "error");
    t.is(s.traces[0]!.errorCode, "internal_error");
    t.is(s.traces[0]!.httpStatus, 500);
    t.deepEqual(s.errors, ["proxy.internal"]);
  } finally {
    await s.close();
  }
});

test("a fault after a stream's headers went out: the connection is cut, the budget settled, one trace", async (t) => {
  const s = await setup((deps) => {
    deps.streamGovernor = () => {
      throw new Error("injected fault");
    };
  });
  try {
    const r = await call(s.url, true);
    t.is(r.status, 200);
    t.true(r.cut, "the answer had started: it cannot turn into an error, so it is cut short");
    await until(() => s.traces.length > 0);
    t.is(s.traces.length, 1);
    t.is(s.traces[0]!.status, "error");
    t.is(s.traces[0]!.errorCode, "internal_error");
    t.true(s.traces[0]!.streamed);
    t.deepEqual(s.errors, ["proxy.internal"]);
    // the reservation taken before forwarding (max_tokens of output) is not left holding budget
    t.is(s.budget.inFlight(AGENT, new Date().toISOString().slice(0, 10)), 0);
  } finally {
    await s.close();
  }
});

test("a fault while the provider is still streaming stops the provider's answer and charges the prompt it billed", async (t) => {
  let upstreamClosedAt = 0;
  let writes = 0;
  const startedAt = Date.now();
  const s = await startInProcessProxy(
    state,
    (_body, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const timer = setInterval(() => {
        writes++;
        res.write(chunk({ choices: [{ index: 0, delta: { content: "more " }, finish_reason: null }] }));
      }, 20);
      res.on("close", () => {
        clearInterval(timer);
        upstreamClosedAt = Date.now();
      });
      setTimeout(() => res.end(sse), 3_000);
    },
    (deps) => {
      deps.streamGovernor = () => {
        throw new Error("injected fault");
      };
    },
  );
  try {
    const r = await call(s.url, true);
    t.true(r.cut);
    await until(() => upstreamClosedAt > 0 && s.traces.length > 0);
    t.true(upstreamClosedAt > 0 && upstreamClosedAt - startedAt < 1_500, `the provider's stream was closed (after ${upstreamClosedAt - startedAt} ms, ${writes} writes)`);
    const trace = s.traces[0]!;
    t.is(trace.errorCode, "internal_error");
    t.true(trace.inputTokens > 0, "the prompt the provider billed is on the trace");
    t.true(trace.tokensEstimated);
    t.true(trace.costUsd > 0);
  } finally {
    await s.close();
  }
});
