// For the proxy handler's tests only (never imported by the sidecar): the real handler in one process —
// governance state from a snapshot, rate limiter, budget ledger, undici — in front of an upstream
// HTTP server the test writes, and one plain node:http call against it.
import { createHash } from "node:crypto";
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent as UndiciAgent } from "undici";
import { create } from "@bufbuild/protobuf";
import { AgentSchema, ApiKeySchema, SnapshotSchema, type Policy, type Trace } from "@agentgov/proto";
import { fromSnapshot, type GovernanceState } from "../../state/governance-state.js";
import { RateLimiter } from "../../limits/rate-limiter.js";
import { BudgetLedger } from "../../limits/budget.js";
import { GatedServerResponse, type ResponseGate } from "../../trace/response-gate.js";
import { createProxyHandler, type ProxyDeps } from "../handler.js";

export function listen(server: Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

/** One tenant, one active openai agent (budgeted, PII detection on), one ingest key, and `policies`. */
export function governanceState(ids: { tenant: string; agent: string; key: string }, policies: Policy[] = []): GovernanceState {
  return fromSnapshot(
    1n,
    create(SnapshotSchema, {
      tenantId: ids.tenant,
      agents: [create(AgentSchema, { id: ids.agent, name: "test", status: "active", provider: "openai", model: "gpt-4o-mini", environment: "test", budgetLimitDaily: 100, hasBudget: true, piiDetection: true })],
      keys: [create(ApiKeySchema, { id: `key_${ids.agent.slice(4)}`, keyHash: createHash("sha256").update(ids.key).digest("hex"), scope: "ingest", userId: "usr_test" })],
      policies,
    }),
  );
}

const OPENAI_USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
/** An OpenAI chat completion chunk (SSE event) with `o` beside its id and model. */
export const openAiChunk = (o: object): string => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini", ...o })}\n\n`;
/** An OpenAI answer "fine" (10 + 5 tokens): JSON, and the same as an SSE stream with usage. */
export const OPENAI_COMPLETION = JSON.stringify({ id: "c1", object: "chat.completion", created: 1, model: "gpt-4o-mini", choices: [{ index: 0, message: { role: "assistant", content: "fine" }, finish_reason: "stop" }], usage: OPENAI_USAGE });
export const OPENAI_SSE = openAiChunk({ choices: [{ index: 0, delta: { content: "fine" }, finish_reason: "stop" }] }) + openAiChunk({ choices: [], usage: OPENAI_USAGE }) + "data: [DONE]\n\n";

/** An upstream that answers OPENAI_SSE to a streaming request and OPENAI_COMPLETION to the others. */
export function openAiUpstream(body: Buffer, res: ServerResponse): void {
  if (body.includes('"stream":true')) {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(OPENAI_SSE);
  } else {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(OPENAI_COMPLETION);
  }
}

/** A JSON answer "fine" (3 + 1 tokens) in the wire format the upstream path names: Anthropic messages, Gemini, Cohere v2, the Responses API, else OpenAI chat. */
export function fineAnswer(req: IncomingMessage, res: ServerResponse): void {
  const url = req.url ?? "";
  let body: unknown;
  if (url.includes("/v1/messages")) body = { id: "m1", type: "message", role: "assistant", model: "claude-3-5-haiku-latest", content: [{ type: "text", text: "fine" }], stop_reason: "end_turn", usage: { input_tokens: 3, output_tokens: 1 } };
  else if (url.includes(":generateContent")) body = { candidates: [{ content: { role: "model", parts: [{ text: "fine" }] }, finishReason: "STOP", index: 0 }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 1, totalTokenCount: 4 } };
  else if (url.includes("/v2/chat")) body = { id: "c1", finish_reason: "COMPLETE", message: { role: "assistant", content: [{ type: "text", text: "fine" }] }, usage: { billed_units: { input_tokens: 3, output_tokens: 1 } } };
  else if (url.includes("/v1/responses")) body = { id: "r1", object: "response", status: "completed", model: "gpt-4o-mini", output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "fine", annotations: [] }] }], usage: { input_tokens: 3, output_tokens: 1, total_tokens: 4 } };
  else body = { id: "c1", object: "chat.completion", created: 1, model: "gpt-4o-mini", choices: [{ index: 0, message: { role: "assistant", content: "fine" }, finish_reason: "stop" }], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } };
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** The n-th trace `s` emitted (1-based), once it is there (traces are emitted right after the answer). */
export async function traceOf(s: InProcessProxy, n: number): Promise<Trace> {
  for (let i = 0; i < 200 && s.traces.length < n; i++) await new Promise((r) => setTimeout(r, 10));
  if (s.traces.length < n) throw new Error("no trace");
  return s.traces[n - 1]!;
}

export interface RecordingProxy extends InProcessProxy {
  /** Each body the upstream received, in order. */
  received: string[];
}

/** The handler with `state` in front of one upstream for all five providers, which records each body and answers fineAnswer. */
export async function startRecordingProxy(state: GovernanceState): Promise<RecordingProxy> {
  const received: string[] = [];
  const proxy = await startInProcessProxy(
    state,
    (body, res, req) => {
      received.push(body.toString());
      fineAnswer(req, res);
    },
    (deps) => {
      for (const p of ["anthropic", "google", "mistral", "cohere"]) deps.baseUrls[p] = deps.baseUrls.openai!;
    },
  );
  return { ...proxy, received };
}

export interface InProcessProxy {
  url: string;
  traces: Trace[];
  /** `where` of every error the handler reported. */
  errors: string[];
  budget: BudgetLedger;
  close(): Promise<void>;
}

/**
 * The handler with `state`, forwarding openai calls to an upstream that answers with `upstream(body, res)`
 * once the request body is in; `adjust` may change the dependencies first (inject a fault, a governor).
 * With `gate`, answers wait for their traces as in the sidecar (each trace is safe once emitted, as
 * with SPOOL_GATE=write).
 */
export async function startInProcessProxy(
  state: GovernanceState,
  upstream: (requestBody: Buffer, res: ServerResponse, req: IncomingMessage) => void,
  adjust: (deps: ProxyDeps) => void = () => {},
  gate?: ResponseGate,
): Promise<InProcessProxy> {
  const upstreamServer = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => upstream(Buffer.concat(parts), res, req));
  });
  const upstreamUrl = await listen(upstreamServer);
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
    emit: (t, res) => {
      traces.push(t);
      gate?.traceEmitted(res, null);
    },
    answersWaitForTraces: gate !== undefined,
    // as the spool does: the fields travel with the trace
    amend: (id, fields) => {
      const t = traces.find((x) => x.id === id);
      if (t) {
        t.qualityScores.push(...fields.qualityScores);
        t.spans.push(...fields.spans);
      }
    },
    storeRawPii: false,
    upstreamTimeoutMs: 5_000,
    onError: (_e, where) => errors.push(where),
  };
  adjust(deps);
  const handle = createProxyHandler(deps);
  const sidecar = gate
    ? createServer({ ServerResponse: GatedServerResponse }, (req, res) => void gate.run(res, () => handle(req, res)))
    : createServer((req, res) => void handle(req, res));
  const url = await listen(sidecar);
  return {
    url,
    traces,
    errors,
    budget,
    close: async () => {
      sidecar.close();
      upstreamServer.close();
      await dispatcher.close();
    },
  };
}

export interface ProxyAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text: string;
  /** The connection was cut before the answer ended (an outcome here, not an exception). */
  cut: boolean;
}

/** One OpenAI chat call ("hello") through the proxy at `url` with node:http. */
export function callProxy(url: string, auth: { key: string; agent: string }, stream = false): Promise<ProxyAnswer> {
  const body = JSON.stringify({ model: "gpt-4o-mini", stream, max_tokens: 100, messages: [{ role: "user", content: "hello" }] });
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}/v1/proxy/openai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-x", "x-service-key": auth.key, "x-service-agent": auth.agent },
    });
    req.on("response", (res) => {
      const parts: Buffer[] = [];
      let done = false;
      const finish = (cut: boolean) => {
        if (done) return;
        done = true;
        const bytes = Buffer.concat(parts);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: bytes, text: bytes.toString("utf8"), cut });
      };
      res.on("data", (c: Buffer) => parts.push(c));
      res.on("end", () => finish(false));
      res.on("error", () => finish(true));
      res.on("aborted", () => finish(true));
    });
    req.on("error", reject);
    req.end(body);
  });
}
