// The hot path, top to bottom: authenticate, find the agent, limits, inbound policies, forward,
// stream or read the answer, outbound policies, headers, trace. Plain node:http + undici; the body is
// parsed once; nothing is held back on a stream.
import type { IncomingMessage, ServerResponse } from "node:http";
import { createHash, randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { Dispatcher } from "undici";
import type { Agent as AgentMsg } from "@agentgov/proto";
import { getProvider, estimateTokens, type ResponseFacts, type Usage } from "../providers/index.js";
import { priceFor, computeCost } from "../pricing/index.js";
import { detectPii, type PiiFinding } from "../policy/pii/index.js";
import { injectionScore } from "../policy/injection/index.js";
import { qualityScores } from "../policy/quality/index.js";
import { evaluatePhase, redactSpans, applyRedaction, type Evaluation } from "../policy/engine/evaluate.js";
import type { GovernanceState } from "../state/governance-state.js";
import type { RateLimiter } from "../limits/rate-limiter.js";
import type { BudgetLedger } from "../limits/budget.js";
import { buildTrace, newTraceId, type TraceDraft } from "../trace/builder.js";
import type { Trace } from "@agentgov/proto";
import { ProxyRefusal, sendJsonError } from "./outcomes.js";
import { downstreamResponseHeaders, upstreamRequestHeaders } from "./headers.js";

export const PROXY_BODY_LIMIT = 10 * 1024 * 1024;
const PREFIX = "/v1/proxy/";
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:\-]{1,128}$/;
const ZERO_USAGE: Usage = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0 };

export interface ProxyDeps {
  state(): GovernanceState;
  baseUrls: Record<string, string>;
  dispatcher: Dispatcher;
  limiter: RateLimiter;
  budget: BudgetLedger;
  emit(trace: Trace): void;
  storeRawPii: boolean;
  upstreamTimeoutMs: number;
  onError(e: unknown, where: string): void;
}

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"] ?? "0");
    if (declared > PROXY_BODY_LIMIT) {
      req.resume();
      reject(new ProxyRefusal(413, "payload_too_large", `request body is larger than ${PROXY_BODY_LIMIT} bytes`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > PROXY_BODY_LIMIT) {
        req.removeAllListeners("data");
        req.resume();
        reject(new ProxyRefusal(413, "payload_too_large", `request body is larger than ${PROXY_BODY_LIMIT} bytes`));
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

export function createProxyHandler(deps: ProxyDeps) {
  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const t0 = performance.now();
    const receivedAtMs = Date.now();
    const given = header(req, "x-request-id");
    const requestId = given && SAFE_REQUEST_ID.test(given) ? given : `req_${randomUUID().replace(/-/g, "")}`;
    const traceId = newTraceId(receivedAtMs);
    const serviceHeaders: Record<string, string> = { "x-service-trace-id": traceId, "x-service-cost": "0", "x-service-policies": "0", "x-request-id": requestId };

    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const pathname = q < 0 ? url : url.slice(0, q);
    const search = q < 0 ? "" : url.slice(q);
    if (!pathname.startsWith(PREFIX)) {
      sendJsonError(res, new ProxyRefusal(404, "not_found", `no route for ${req.method} ${pathname}`), requestId);
      return;
    }
    const rest = pathname.slice(PREFIX.length);
    const slash = rest.indexOf("/");
    const providerName = slash < 0 ? rest : rest.slice(0, slash);
    const subPath = slash < 0 ? "/" : rest.slice(slash);
    const adapter = getProvider(providerName);

    // Refusals before the agent is known are not traced (DESIGN.md §11).
    let state: GovernanceState;
    let agent: AgentMsg;
    let bodyBytes: Buffer;
    let body: unknown;
    try {
      if (!adapter) throw new ProxyRefusal(404, "not_found", `unknown provider "${providerName}"; use openai, anthropic, google, mistral or cohere`);
      if (req.method !== "POST") throw new ProxyRefusal(404, "not_found", `no route for ${req.method} ${pathname}`);
      state = deps.state();
      const key = header(req, "x-service-key");
      const keyRow = key ? state.keysByHash.get(createHash("sha256").update(key).digest("hex")) : undefined;
      if (!keyRow) throw new ProxyRefusal(401, "unauthorized", "missing or invalid X-Service-Key");
      if (keyRow.scope !== "ingest" && keyRow.scope !== "api") throw new ProxyRefusal(403, "forbidden", "this key may not use the proxy (needs scope ingest or api)");
      const agentId = header(req, "x-service-agent");
      const found = agentId ? state.agents.get(agentId) : undefined;
      if (!found || found.status === "archived") throw new ProxyRefusal(404, "not_found", `agent ${agentId ?? "(missing X-Service-Agent)"} not found`);
      agent = found;
      bodyBytes = await readBody(req);
      try {
        body = JSON.parse(bodyBytes.toString("utf8"));
      } catch {
        throw new ProxyRefusal(400, "bad_request", "request body is not valid JSON");
      }
    } catch (e) {
      if (e instanceof ProxyRefusal) sendJsonError(res, e, requestId, serviceHeaders);
      else {
        deps.onError(e, "proxy.prelude");
        sendJsonError(res, new ProxyRefusal(500, "internal_error", "internal error"), requestId, serviceHeaders);
      }
      return;
    }

    let target;
    try {
      target = adapter.resolve(subPath, search, body);
    } catch (e) {
      sendJsonError(res, new ProxyRefusal(400, "bad_request", (e as Error).message), requestId, serviceHeaders);
      return;
    }
    if (!target) {
      sendJsonError(res, new ProxyRefusal(404, "not_found", `${providerName} path ${subPath} is not a chat endpoint this proxy governs`), requestId, serviceHeaders);
      return;
    }

    const spans: Record<string, number> = {};
    const draft: TraceDraft = {
      id: traceId,
      tenantId: state.tenantId,
      agentId: agent.id,
      agentName: agent.name,
      environment: agent.environment,
      sessionId: header(req, "x-service-session"),
      provider: adapter.name,
      model: target.model || agent.model,
      requestId,
      receivedAtMs,
      streamed: target.stream,
      status: "success",
      httpStatus: 200,
      errorCode: "",
      prompt: "",
      completion: "",
      piiScanEnabled: agent.piiDetection,
      promptPii: [],
      completionPii: [],
      injectionScore: 0,
      evaluations: [],
      fired: [],
      blockedCount: 0,
      usage: ZERO_USAGE,
      tokensEstimated: false,
      cost: computeCost(priceFor(adapter.name, target.model || agent.model), ZERO_USAGE),
      timing: { totalMs: 0, providerMs: 0, spans },
      toolCalls: [],
      qualityScores: [],
    };
    const price = priceFor(adapter.name, draft.model);
    const finish = (status: number) => {
      draft.httpStatus = status;
      draft.timing.totalMs = performance.now() - t0;
      try {
        deps.emit(buildTrace(draft, deps.storeRawPii));
      } catch (e) {
        deps.onError(e, "trace.build");
      }
    };
    const refuse = (e: ProxyRefusal, fired: string) => {
      draft.status = "blocked";
      draft.errorCode = e.code;
      if (fired) draft.fired.push(fired);
      serviceHeaders["x-service-policies"] = String(draft.evaluations.length);
      serviceHeaders["x-service-overhead-ms"] = (performance.now() - t0).toFixed(3);
      sendJsonError(res, e, requestId, serviceHeaders);
      finish(e.status);
    };

    // Prompt text, PII and injection score.
    const prompt = adapter.promptText(body);
    draft.prompt = prompt;
    let tp = performance.now();
    const promptPii: PiiFinding[] | null = agent.piiDetection ? detectPii(prompt) : null;
    spans.pii_scan = performance.now() - tp;
    draft.promptPii = promptPii ?? [];
    draft.injectionScore = injectionScore(prompt).score;
    const estimatedInputTokens = estimateTokens(prompt);

    if (agent.status === "paused") return refuse(new ProxyRefusal(403, "agent_paused", `agent ${agent.id} is paused`), "agent_paused");
    const retryAfter = deps.limiter.take(agent.id, agent.rateLimit, receivedAtMs);
    if (retryAfter > 0) {
      return refuse(new ProxyRefusal(429, "rate_limit_exceeded", `rate limit of ${agent.rateLimit} requests per minute exceeded; retry in ${retryAfter} s`, {}, retryAfter), "rate_limit");
    }

    tp = performance.now();
    const inbound = evaluatePhase(state.orderedPolicies, {
      agent,
      phase: "inbound",
      text: prompt,
      model: draft.model,
      inputTokens: estimatedInputTokens,
      pii: promptPii,
      injectionScore: draft.injectionScore,
    });
    spans.policy_eval = performance.now() - tp;
    draft.evaluations = inbound.evaluations;
    draft.fired = inbound.fired;
    draft.blockedCount = inbound.blockedCount;
    if (inbound.blockedBy) {
      const p = inbound.blockedBy;
      return refuse(new ProxyRefusal(403, "policy_violation", `request blocked by policy "${p.name}"`, { policy_id: p.id, trace_id: traceId }), "");
    }

    // Budget: reserve the most this call can cost before forwarding; settle after.
    const day = utcDay(receivedAtMs);
    const maxOut = maxOutputTokens(body);
    const estimate = price ? computeCost(price, { ...ZERO_USAGE, inputTokens: estimatedInputTokens, outputTokens: maxOut }).totalCost : 0;
    const reserved = agent.hasBudget;
    if (agent.hasBudget && !deps.budget.tryReserve(agent.id, day, agent.budgetLimitDaily, estimate)) {
      return refuse(new ProxyRefusal(429, "budget_exceeded", `daily budget of $${agent.budgetLimitDaily} for agent ${agent.id} is used up; it resets at 00:00 UTC`, {}, secondsToUtcMidnight(receivedAtMs)), "budget");
    }

    let forwardBody: Buffer = bodyBytes;
    let changed = target.body !== undefined ? target.body : undefined;
    if (inbound.redactors.length > 0) {
      changed = adapter.mapPromptText(changed ?? body, (part) => {
        const partPii = agent.piiDetection ? detectPii(part) : null;
        return applyRedaction(part, redactSpans(part, inbound.redactors, partPii));
      });
    }
    if (changed !== undefined) forwardBody = Buffer.from(JSON.stringify(changed), "utf8");

    const inputCostNow = price ? computeCost(price, { ...ZERO_USAGE, inputTokens: estimatedInputTokens }).totalCost : 0;
    serviceHeaders["x-service-policies"] = String(draft.evaluations.length);

    // Forward.
    const abort = new AbortController();
    let clientGone = false;
    res.on("close", () => {
      if (!res.writableFinished) {
        clientGone = true;
        abort.abort();
      }
    });
    const base = deps.baseUrls[adapter.name]!.replace(/\/+$/, "");
    const tUp = performance.now();
    let upstream: Dispatcher.ResponseData;
    try {
      upstream = await deps.dispatcher.request({
        origin: new URL(base).origin,
        path: new URL(base).pathname.replace(/\/+$/, "") + target.path,
        method: "POST",
        headers: upstreamRequestHeaders(req.headers, forwardBody.length),
        body: forwardBody,
        signal: abort.signal,
        headersTimeout: deps.upstreamTimeoutMs,
        bodyTimeout: deps.upstreamTimeoutMs,
      });
    } catch (e) {
      if (reserved) deps.budget.settle(agent.id, day, estimate, 0);
      draft.timing.providerMs = performance.now() - tUp;
      spans.provider = draft.timing.providerMs;
      draft.status = "error";
      const timeout = (e as { code?: string }).code === "UND_ERR_HEADERS_TIMEOUT" || (e as { name?: string }).name === "TimeoutError";
      const refusal = timeout
        ? new ProxyRefusal(504, "upstream_timeout", `${adapter.name} did not answer in time`)
        : new ProxyRefusal(502, "upstream_unavailable", `${adapter.name} is unreachable: ${(e as Error).message}`);
      draft.errorCode = refusal.code;
      if (!clientGone) sendJsonError(res, refusal, requestId, serviceHeaders);
      finish(refusal.status);
      return;
    }

    const isSse = String(upstream.headers["content-type"] ?? "").includes("text/event-stream");
    let facts: ResponseFacts;
    const outHeaders = downstreamResponseHeaders(upstream.headers);
    if (isSse && upstream.statusCode < 300) {
      // Stream: headers leave now (cost known so far: the input estimate), every chunk is forwarded as it
      // arrives, and the final cost goes in the trace and an HTTP trailer.
      serviceHeaders["x-service-cost"] = inputCostNow.toFixed(10).replace(/\.?0+$/, "") || "0";
      serviceHeaders["x-service-overhead-ms"] = (tUp - t0).toFixed(3);
      res.writeHead(upstream.statusCode, { ...outHeaders, ...serviceHeaders, trailer: "X-Service-Cost" });
      res.flushHeaders();
      const observer = adapter.streamObserver();
      try {
        for await (const chunk of upstream.body) {
          observer.push(chunk as Buffer);
          if (!clientGone) res.write(chunk);
        }
      } catch {
        draft.status = "error";
        draft.errorCode = clientGone ? "client_closed" : "upstream_stream_error";
      }
      facts = observer.end();
      draft.timing.providerMs = performance.now() - tUp;
      spans.provider = draft.timing.providerMs;
      settleFacts(facts, draft, prompt, price, upstream.statusCode);
      if (clientGone && draft.status === "success") {
        draft.status = "error";
        draft.errorCode = "client_closed";
      }
      if (!clientGone) {
        res.addTrailers({ "X-Service-Cost": formatCost(draft.cost.totalCost) });
        res.end();
      }
    } else {
      let raw: Buffer;
      try {
        raw = Buffer.from(await upstream.body.arrayBuffer());
      } catch (e) {
        raw = Buffer.alloc(0);
        draft.status = "error";
        draft.errorCode = clientGone ? "client_closed" : "upstream_body_error";
        deps.onError(e, "proxy.upstream_body");
      }
      draft.timing.providerMs = performance.now() - tUp;
      spans.provider = draft.timing.providerMs;
      let json: unknown;
      try {
        json = JSON.parse(raw.toString("utf8"));
      } catch {
        json = undefined;
      }
      facts = json === undefined ? { completionText: "", toolCalls: [] } : adapter.parseResponse(json);
      settleFacts(facts, draft, prompt, price, upstream.statusCode);
      if (upstream.statusCode >= 400) {
        draft.status = "error";
        draft.errorCode = `upstream_${upstream.statusCode}`;
      }
      let outBody = raw;
      if (upstream.statusCode < 300 && json !== undefined) {
        const outcome = outboundPhase(draft, agent, state, facts.completionText);
        if (outcome.block) {
          if (reserved) deps.budget.settle(agent.id, day, estimate, draft.cost.totalCost);
          serviceHeaders["x-service-cost"] = formatCost(draft.cost.totalCost);
          return refuse(new ProxyRefusal(403, "policy_violation", `response blocked by policy "${outcome.block.name}"`, { policy_id: outcome.block.id, trace_id: traceId }), "");
        }
        if (outcome.redactors.length > 0) {
          const redacted = adapter.mapCompletionText(json, (part) => applyRedaction(part, redactSpans(part, outcome.redactors, agent.piiDetection ? detectPii(part) : null)));
          outBody = Buffer.from(JSON.stringify(redacted), "utf8");
        }
      }
      serviceHeaders["x-service-cost"] = formatCost(draft.cost.totalCost);
      serviceHeaders["x-service-policies"] = String(draft.evaluations.length);
      serviceHeaders["x-service-overhead-ms"] = (performance.now() - t0 - draft.timing.providerMs).toFixed(3);
      if (!clientGone) {
        res.writeHead(upstream.statusCode, { ...outHeaders, ...serviceHeaders, "content-length": String(outBody.length) });
        res.end(outBody);
      }
    }
    if (reserved) deps.budget.settle(agent.id, day, estimate, draft.cost.totalCost);
    draft.toolCalls = facts.toolCalls;
    // Quality scores after the answer has gone out.
    setImmediate(() => {
      const tq = performance.now();
      try {
        draft.qualityScores = qualityScores({ prompt, completion: facts.completionText, finishReason: facts.finishReason, status: draft.status });
      } catch (e) {
        deps.onError(e, "quality");
      }
      spans.quality_score = performance.now() - tq;
      finish(upstream.statusCode);
    });

    function outboundPhase(d: TraceDraft, a: AgentMsg, s: GovernanceState, completion: string) {
      const tpo = performance.now();
      const pii = a.piiDetection ? detectPii(completion) : null;
      d.completionPii = pii ?? [];
      const out = evaluatePhase(s.orderedPolicies, {
        agent: a,
        phase: "outbound",
        text: completion,
        model: d.model,
        inputTokens: d.usage.inputTokens,
        pii,
        injectionScore: d.injectionScore,
      });
      spans.policy_eval = (spans.policy_eval ?? 0) + (performance.now() - tpo);
      d.evaluations = [...d.evaluations, ...out.evaluations];
      d.fired = [...d.fired, ...out.fired];
      d.blockedCount += out.blockedCount;
      return { block: out.blockedBy, redactors: out.redactors };
    }
  };
}

function settleFacts(facts: ResponseFacts, draft: TraceDraft, prompt: string, price: ReturnType<typeof priceFor>, status: number): void {
  draft.completion = facts.completionText;
  if (facts.model && !draft.model) draft.model = facts.model;
  if (facts.usage) draft.usage = facts.usage;
  else if (status < 400) {
    draft.usage = { ...ZERO_USAGE, inputTokens: estimateTokens(prompt), outputTokens: estimateTokens(facts.completionText) };
    draft.tokensEstimated = true;
  }
  draft.cost = computeCost(price, draft.usage);
  draft.toolCalls = facts.toolCalls;
}

function formatCost(usd: number): string {
  if (usd === 0) return "0";
  return usd.toFixed(10).replace(/0+$/, "").replace(/\.$/, "");
}

function maxOutputTokens(body: unknown): number {
  if (!body || typeof body !== "object") return 1024;
  const b = body as Record<string, unknown>;
  const cfg = b.generationConfig as Record<string, unknown> | undefined;
  const v = b.max_completion_tokens ?? b.max_tokens ?? cfg?.maxOutputTokens;
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? Math.min(v, 1_000_000) : 4096;
}

function secondsToUtcMidnight(ms: number): number {
  const d = new Date(ms);
  const next = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - ms) / 1000));
}

export type { Evaluation };
