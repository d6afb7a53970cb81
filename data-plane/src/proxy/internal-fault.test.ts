// A fault of the sidecar's own (a throwing component, standing in for a bug) between admission and the
// trace must still answer the caller, settle the budget reservation and leave a trace: the handler's
// safety net. The faults are injected through the handler's dependencies; everything else is real
// (governance state, rate limiter, budget ledger, an upstream HTTP server, undici).
import test from "ava";
import { createHash } from "node:crypto";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent as UndiciAgent } from "undici";
import { create } from "@bufbuild/protobuf";
import { AgentSchema, ApiKeySchema, SnapshotSchema, type Trace } from "@agentgov/proto";
import { fromSnapshot } from "../state/governance-state.js";
import { RateLimiter } from "../limits/rate-limiter.js";
import { BudgetLedger } from "../limits/budget.js";
import { createProxyHandler, type ProxyDeps } from "./handler.js";

const KEY = "sk_fault_test_key";
const AGENT = "agt_01FAULT00000000000000000000";
const state = fromSnapshot(
  1n,
  create(SnapshotSchema, {
    tenantId: "ten_fault",
    agents: [create(AgentSchema, { id: AGENT, name: "fault", status: "active", provider: "openai", model: "gpt-4o-mini", environment: "test", budgetLimitDaily: 100, hasBudget: true, piiDetection: true })],
    keys: [create(ApiKeySchema, { id: "key_01FAULT0000000000000000000", keyHash: createHash("sha256").update(KEY).digest("hex"), scope: "ingest", userId: "usr_fault" })],
  }),
);

const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
const completion = JSON.stringify({ id: "c1", object: "chat.completion", created: 1, model: "gpt-4o-mini", choices: [{ index: 0, message: { role: "assistant", content: "fine" }, finish_reason: "stop" }], usage });
const chunk = (o: object) => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", ...o })}\n\n`;
const sse = chunk({ choices: [{ index: 0, delta: { content: "fine" }, finish_reason: "stop" }] }) + chunk({ choices: [], usage }) + "data: [DONE]\n\n";

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

interface Setup {
  url: string;
  traces: Trace[];
  errors: string[];
  budget: BudgetLedger;
  close(): Promise<void>;
}

async function setup(fault: (deps: ProxyDeps) => void): Promise<Setup> {
  const upstream = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      if (Buffer.concat(parts).includes('"stream":true')) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(sse);
      } else {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(completion);
      }
    });
  });
  const upstreamUrl = await listen(upstream);
  const traces: Trace[] = [];
  const errors: string[] = [];
  const budget = new BudgetLedger({ controlPlaneSpend: () => 0 });
  const dispatcher = new UndiciAgent();
  const deps: ProxyDeps = {
    state: () => state,
    baseUrls: { openai: upstreamUrl },
    dispatcher,
    limiter: new RateLimiter(),
    budget,
    emit: (t) => traces.push(t),
    storeRawPii: false,
    upstreamTimeoutMs: 5_000,
    onError: (_e, where) => errors.push(where),
  };
  fault(deps);
  const handle = createProxyHandler(deps);
  const sidecar = createServer((req, res) => void handle(req, res));
  const url = await listen(sidecar);
  return {
    url,
    traces,
    errors,
    budget,
    close: async () => {
      sidecar.close();
      upstream.close();
      await dispatcher.close();
    },
  };
}

/** One request with node:http (a cut connection is an outcome here, not an exception). */
function call(url: string, stream: boolean): Promise<{ status: number; body: string; cut: boolean }> {
  const body = JSON.stringify({ model: "gpt-4o-mini", stream, max_tokens: 100, messages: [{ role: "user", content: "hello" }] });
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}/v1/proxy/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-x", "x-service-key": KEY, "x-service-agent": AGENT },
    });
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text, cut: false }));
      res.on("error", () => resolve({ status: res.statusCode ?? 0, body: text, cut: true }));
      res.on("aborted", () => resolve({ status: res.statusCode ?? 0, body: text, cut: true }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

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
    t.is((JSON.parse(r.body) as { error: { code: string } }).error.code, "internal_error");
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
