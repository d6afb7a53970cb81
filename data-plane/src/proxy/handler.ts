// The hot path, top to bottom (DESIGN.md §7): admit (provider, key, agent, body), scan the prompt,
// traced refusals (paused, rate limit), inbound policies, budget reservation, forward with undici,
// then either relay the stream chunk by chunk or pass the JSON answer through (outbound policies),
// settle cost and budget, and build the trace once the answer is out. Plain node:http + undici; the
// request body is parsed once, the answer once; nothing of a stream is held back.
import { EventEmitter } from "node:events";
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import type { Dispatcher } from "undici";
import type { Trace } from "@agentgov/proto";
import { estimateTokens, type ResponseFacts } from "../providers/index.js";
import { readSlots } from "../providers/text-slots.js";
import { detectPii, withFindingsAcrossParts } from "../policy/pii/index.js";
import { injectionScore } from "../policy/injection/index.js";
import { qualityScores } from "../policy/quality/index.js";
import { evaluatePhase } from "../policy/engine/evaluate.js";
import { applicablePolicies } from "../policy/engine/applicable.js";
import type { GovernanceState } from "../state/governance-state.js";
import type { RateLimiter } from "../limits/rate-limiter.js";
import type { BudgetLedger, Reservation } from "../limits/budget.js";
import { buildTrace, qualityAmendment, type TraceDraft } from "../trace/builder.js";
import type { TraceAmendment } from "../trace/queue.js";
import { newTraceId } from "./trace-id.js";
import { ProxyRefusal, sendJsonError } from "./outcomes.js";
import { addServiceHeaders, downstreamResponseHeaders, upstreamRequestHeaders } from "./headers.js";
import { parseProxyUrl } from "./route.js";
import { ClientGoneError } from "./read-body.js";
import { admit, firstHeader, type Admission } from "./admission.js";
import { budgetCharge, type ChargedCall, type Price } from "../pricing/index.js";
import { answerPrice, cachedPrice, costOf, formatUsd, inputCost, requestedPrice, reservationPrice, settleUsage, unansweredUsage, ZERO_USAGE } from "./cost.js";
import { maxOutputTokens, modelContextWindow, requestAttachments, secondsToUtcMidnight, utcDay } from "./budget-reservation.js";
import { governedOutputText, type RedactedThinkingStore } from "../policy/thinking/index.js";
import { actsOnAnswers, answerActor, judgedInput, outboundPhase, policiesNeedInputTokens, recordInputExtras, redactAnswer, redactInputExtras, redactPrompt, scanInputExtras } from "./governance.js";
import { isAbort, neverReachedProvider, readUpstreamBody, upstreamEndpoints, upstreamFailure, upstreamFailureDetail } from "./upstream.js";
import { decodableEncoding, decodeStream, decodeSync, undecodableEncoding } from "./content-decoding.js";
import { relayStream } from "./stream-relay.js";
import { stringifyKeepingNumbers } from "../providers/json-keeping-numbers.js";
import { AddedUsageFilter } from "./added-usage-filter.js";
import type { StreamGovernorFactory } from "./stream-governor.js";

export { PROXY_BODY_LIMIT } from "./read-body.js";
export type { StreamGovernor, StreamGovernorContext, StreamGovernorFactory } from "./stream-governor.js";

export interface ProxyDeps {
  state(): GovernanceState;
  /** PROVIDER_*_URL per provider name. */
  baseUrls: Record<string, string>;
  /** The undici pool (UPSTREAM_CONNECTIONS, UPSTREAM_CONNECT_TIMEOUT_MS). */
  dispatcher: Dispatcher;
  limiter: RateLimiter;
  budget: BudgetLedger;
  /** Spools the trace of the request answered by `res` (the response gate holds `res` until it is safe). */
  emit(trace: Trace, res: ServerResponse): void;
  /** Adds fields to the trace `emit` spooled in this turn (its quality scores, computed once the answer has left). */
  amend(traceId: string, fields: TraceAmendment): void;
  /** The response gate is on (SPOOL_COMMIT_WAIT_MS > 0): answers' last bytes wait for their trace. */
  answersWaitForTraces?: boolean;
  storeRawPii: boolean;
  /** UPSTREAM_TIMEOUT_MS: the longest wait for the provider's response headers, and the longest silence inside its body. */
  upstreamTimeoutMs: number;
  /** SSE_KEEPALIVE_MS: an SSE comment is sent after this long without a byte on a stream; 0 = never. Default 15 000. */
  sseKeepAliveMs?: number;
  /**
   * OPENAI_STREAM_USAGE: which OpenAI chat streams that do not ask for usage are forwarded asking for it
   * (what that adds is taken out of the client's stream: added-usage-filter.ts), so that their trace and
   * budget charge carry the provider's usage instead of a local count: `budgeted` — those of agents with
   * a daily budget; `add` — all; `pass` (or absent) — none, the body passes as is.
   */
  askStreamUsage?: "pass" | "budgeted" | "add";
  /** Outbound governance inside streamed answers; absent = streams are passed through as they come. */
  streamGovernor?: StreamGovernorFactory;
  /** Originals of redacted Anthropic thinking blocks, restored when the client sends them back; absent = not kept. */
  redactedThinking?: RedactedThinkingStore;
  onError(e: unknown, where: string): void;
}

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const KEEPALIVE_LF = Buffer.from(": keep-alive\n\n");
const KEEPALIVE_CRLF = Buffer.from(": keep-alive\r\n\r\n"); // Gemini frames its SSE with CRLF
/** Trace http status of a request whose client went away before any answer. */
const CLIENT_CLOSED = 499;

const ms = (v: number) => v.toFixed(3);
const chargedCall = (d: TraceDraft): ChargedCall => ({
  provider: d.provider,
  costUsd: d.cost.totalCost,
  priceMissing: d.cost.priceMissing,
  inputTokens: d.usage.inputTokens,
  outputTokens: d.usage.outputTokens,
});
const hasUtf8Bom = (b: Buffer) => b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf;

/** A 400 whose error names `stream_options` (decoded when compressed; an undecodable body names nothing). */
function refusesAddedOption(raw: Buffer, contentEncoding: string | string[] | undefined): boolean {
  const encoding = decodableEncoding(contentEncoding);
  try {
    return (encoding ? decodeSync(raw, encoding) : raw).includes("stream_options");
  } catch {
    return false;
  }
}

/** The service tier a provider names in a response header (Gemini), when its body named none. */
function servedTierFromHeader(facts: ResponseFacts, headers: IncomingHttpHeaders, name: string): void {
  const value = headers[name];
  const tier = Array.isArray(value) ? value[0] : value;
  // "SERVICE_TIER_PRIORITY" (the enum's name, as some clients send it) names the tier "priority".
  if (tier !== undefined && tier !== "") facts.serviceTier = tier.trim().toLowerCase().replace(/^service_tier_/, "");
}

/** What an answer (JSON or stream) puts on the trace: its tool calls, usage (the provider's, else counted) and cost by the answering model at its served tier and region. */
function recordAnswer(draft: TraceDraft, facts: ResponseFacts, promptTokens: () => number, status: number, price: Price | undefined): void {
  draft.toolCalls = facts.toolCalls;
  const settled = settleUsage(facts, promptTokens, status);
  draft.usage = settled.usage;
  draft.tokensEstimated = settled.estimated;
  draft.cost = costOf(answerPrice(draft.provider, price, facts.model, facts.serviceTier, facts.region), draft.usage);
}

export function createProxyHandler(deps: ProxyDeps) {
  const endpoints = upstreamEndpoints(deps.baseUrls);
  const keepAliveMs = deps.sseKeepAliveMs ?? 15_000;
  const keepAliveLf = keepAliveMs > 0 ? { intervalMs: keepAliveMs, comment: KEEPALIVE_LF } : undefined;
  const keepAliveCrlf = keepAliveMs > 0 ? { intervalMs: keepAliveMs, comment: KEEPALIVE_CRLF } : undefined;
  /** Providers whose server refused the `stream_options` the sidecar added (askStreamUsage): not asked again until restart. */
  const refusesStreamUsage = new Set<string>();

  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const t0 = performance.now();
    const receivedAtMs = Date.now();
    const traceId = newTraceId(receivedAtMs);
    const given = firstHeader(req, "x-request-id");
    const requestId = given !== undefined && SAFE_REQUEST_ID.test(given) ? given : `req_${traceId.slice(4)}`;
    // On every answer, refusals included (the trace id of an untraced refusal names no stored trace).
    const service: Record<string, string> = {
      "x-service-trace-id": traceId,
      "x-service-cost": "0",
      "x-service-policies": "0",
      "x-service-overhead-ms": "0",
      "x-request-id": requestId,
    };

    // 1. Admission. Refusals here are not traced (DESIGN.md §11).
    let admission: Admission;
    try {
      const route = parseProxyUrl(req.url ?? "/");
      if (!route) throw new ProxyRefusal(404, "not_found", `no route for ${req.method ?? "?"} ${req.url ?? "/"}`);
      admission = await admit(req, route, deps.state());
    } catch (e) {
      if (e instanceof ClientGoneError) return;
      let refusal: ProxyRefusal;
      if (e instanceof ProxyRefusal) refusal = e;
      else {
        deps.onError(e, "proxy.admission");
        refusal = new ProxyRefusal(500, "internal_error", "internal error");
      }
      service["x-service-overhead-ms"] = ms(performance.now() - t0);
      sendJsonError(res, refusal, requestId, service);
      return;
    }
    const { state, agent, adapter, target, body } = admission;
    const model = target.model || agent.model;
    const price = cachedPrice(adapter.name, model);
    /** The price as requested (a priority or fast tier's rates, a US-only region's): what is known before an answer. */
    const askedPrice = requestedPrice(price, body);
    const spans: Record<string, number> = {};
    const draft: TraceDraft = {
      id: traceId,
      tenantId: state.tenantId,
      agentId: agent.id,
      agentName: agent.name,
      environment: agent.environment,
      sessionId: firstHeader(req, "x-service-session"),
      provider: adapter.name,
      model,
      requestId,
      keyId: admission.keyId,
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
      inputExtras: "",
      inputExtrasPii: [],
      injectionScore: 0,
      evaluations: [],
      fired: [],
      blockedCount: 0,
      usage: ZERO_USAGE,
      tokensEstimated: false,
      cost: costOf(price, ZERO_USAGE),
      timing: { totalMs: 0, providerMs: 0, spans },
      toolCalls: [],
    };
    let emitted = false;
    const emit = () => {
      if (emitted) return; // at most one trace per request, also when a fault interrupts the answer
      emitted = true;
      try {
        deps.emit(buildTrace(draft, deps.storeRawPii), res);
      } catch (e) {
        deps.onError(e, "trace.build");
      }
    };
    /** A traced refusal (status blocked): answered at once, trace emitted right after. */
    const refuse = (e: ProxyRefusal, fired: string): void => {
      draft.status = "blocked";
      draft.errorCode = e.code;
      draft.httpStatus = e.status;
      if (fired) draft.fired.push(fired);
      service["x-service-policies"] = String(draft.evaluations.length);
      draft.timing.totalMs = performance.now() - t0;
      service["x-service-overhead-ms"] = ms(draft.timing.totalMs - draft.timing.providerMs);
      sendJsonError(res, e, requestId, service);
      emit();
    };

    /**
     * A 2xx answer outbound block/redact policies cannot judge or rewrite: refused (502, fail closed). The
     * provider was paid: its cost is on the trace and charged to the budget. Trace status error.
     */
    const unreadable = (message: string, clientGone: boolean): void => {
      draft.status = "error";
      draft.errorCode = "unreadable_answer";
      draft.httpStatus = 502;
      settleBudget();
      draft.timing.totalMs = performance.now() - t0;
      service["x-service-overhead-ms"] = ms(draft.timing.totalMs - draft.timing.providerMs);
      responded = true;
      if (!clientGone) sendJsonError(res, new ProxyRefusal(502, "unreadable_answer", message, { trace_id: traceId }), requestId, service);
      emit();
    };

    const day = utcDay(receivedAtMs);
    let reserved: Reservation | null = null;
    const settleBudget = () => {
      // A model the price table does not know costs 0 on the trace but is charged at the provider's ceiling (budgetCharge).
      if (reserved) deps.budget.settleReservation(agent.id, day, reserved, budgetCharge(chargedCall(draft)), traceId);
      reserved = null;
    };
    /** The answer (or its headers) went out: a failure after this cannot answer with an error any more. */
    let responded = false;
    /** Set once the call is forwarded: what an internal fault must still do (stop the provider's answer, charge the prompt). */
    let forwarded: { abort(): void; chargeUnanswered(): void } | undefined;
    try {
      // 2. The prompt: text, PII, injection score; its token count only when something needs it.
      const promptParts = adapter.promptParts(body);
      const prompt = promptParts.join("\n\n"); // adapter.promptText
      draft.prompt = prompt;
      let tp = performance.now();
      // The model reads a chat's parts one after the other: a value split across two of them is found
      // too (embedding inputs are embedded one by one: their junctions are not scanned).
      const promptPii = agent.piiDetection ? (adapter.answersWithText === false ? detectPii(prompt) : withFindingsAcrossParts(prompt, promptParts, detectPii(prompt))) : null;
      // Input outside the prompt (tool definitions, response schemas, predicted output, names): judged
      // with it by inbound policies, but not prompt text (the trace's prompt and findings stay the
      // messages'). Undefined for a request without any.
      const extras = scanInputExtras(adapter, body, agent.piiDetection);
      spans.pii_scan = performance.now() - tp;
      draft.promptPii = promptPii ?? [];
      // Their findings go on the trace as the prompt's do (with the text they point into), whatever the
      // outcome from here: a refusal, a block, an upstream error or an answer.
      recordInputExtras(draft, extras);
      // Scored without the system part (adapter.systemText): the agent's developer wrote it, and a
      // defensive one reads like an attack. promptText puts it first, with "\n\n" after it.
      const system = adapter.systemText(body);
      let score = injectionScore(system === "" || !prompt.startsWith(system) ? prompt : prompt.slice(system.length + 2)).score;
      // Each tool definition is scored on its own, with the features of a poisoned tool (an MCP server's
      // description is text the agent's developer never read; a developer's own defensive wording is not
      // counted, as in the system prompt): the input's score is the highest.
      if (extras) for (const tool of extras.toolTexts) score = Math.max(score, injectionScore(tool, "tool_definition").score);
      draft.injectionScore = score;
      const judged = judgedInput({ text: prompt, pii: promptPii }, extras);
      let promptTokenCount = -1;
      // The prompt's tokens, plus what else the request bills as input (tool definitions) when the adapter says.
      const promptTokens = () =>
        promptTokenCount >= 0 ? promptTokenCount : (promptTokenCount = estimateTokens(prompt) + (adapter.inputExtrasText ? estimateTokens(adapter.inputExtrasText(body)) : 0));

      // 3. Traced refusals before policies: paused agent, rate limit.
      if (agent.status === "paused") return refuse(new ProxyRefusal(403, "agent_paused", `agent ${agent.id} is paused`), "agent_paused");
      const retryAfter = deps.limiter.take(agent.id, agent.rateLimit, receivedAtMs);
      if (retryAfter > 0) {
        const message = `rate limit of ${agent.rateLimit} requests per minute exceeded; retry in ${retryAfter} s`;
        return refuse(new ProxyRefusal(429, "rate_limit_exceeded", message, {}, retryAfter), "rate_limit");
      }

      // 4. Inbound policies: every applicable one evaluated; the highest-priority matching block decides.
      tp = performance.now();
      const inbound = evaluatePhase(state.orderedPolicies, {
        agent,
        phase: "inbound",
        text: judged.text,
        model,
        inputTokens: policiesNeedInputTokens(state) ? promptTokens() : 0,
        pii: judged.pii,
        injectionScore: draft.injectionScore,
      });
      spans.policy_eval = performance.now() - tp;
      draft.evaluations = inbound.evaluations;
      draft.fired = inbound.fired;
      draft.blockedCount = inbound.blockedCount;
      service["x-service-policies"] = String(draft.evaluations.length);
      if (inbound.blockedBy) {
        const p = inbound.blockedBy;
        return refuse(new ProxyRefusal(403, "policy_violation", `request blocked by policy "${p.name}"`, { policy_id: p.id, trace_id: traceId }), "");
      }
      // A streamed spoken answer (audio output) cannot be governed: its audio chunks would leave before their
      // transcript is judged, and audio cannot be redacted. Refused before it is requested (fail closed).
      if (target.stream && adapter.asksForSpeech?.(body)) {
        const p = answerActor(state, agent);
        if (p) {
          const message = `a streamed spoken answer (audio output) cannot be governed by policy "${p.name}"; ask for it without streaming`;
          return refuse(new ProxyRefusal(403, "policy_violation", message, { policy_id: p.id, trace_id: traceId }), p.name);
        }
      }

      // 5. Budget: reserve the most this call can cost before forwarding (input estimate + max output); settle after.
      if (agent.hasBudget) {
        // Reserve the most this call can cost: the prompt's tokens (with the tool definitions it bills as
        // input) and the most output it can be billed for (budget-reservation.ts), at the model's price
        // (an unknown name: the provider's highest). The exact token count (a tokenizer pass) is taken
        // only when the budget is close: far from the limit the request body's length decides the same,
        // since it holds the prompt and the tool definitions as UTF-8 (or longer escapes) and no token
        // count exceeds a text's bytes (BudgetLedger.reserve).
        // An answer without text (embeddings) bills no output: none is reserved (adapter.answersWithText).
        const maxOut = adapter.answersWithText === false ? 0 : maxOutputTokens(body, adapter.name, model);
        const atPrice = reservationPrice(adapter.name, askedPrice);
        const cost = (inputTokens: number) => (atPrice ? costOf(atPrice, { ...ZERO_USAGE, inputTokens, outputTokens: maxOut }).totalCost : 0);
        // Inline media count by their length (no fewer characters than tokens); a document or a file
        // referenced by URL or id can bill more tokens than the body has bytes, so such a request reserves
        // the model's context window (requestAttachments). Before, the exact estimate near the limit
        // counted the text only, and 20 parallel PDF calls spent 6× a budget.
        const attachments = requestAttachments(body);
        const window = attachments.unbounded ? modelContextWindow(adapter.name, model) : 0;
        const exactInput = () => (attachments.unbounded ? Math.max(window, promptTokens()) : promptTokens() + attachments.mediaChars);
        reserved = deps.budget.reserve(agent.id, day, agent.budgetLimitDaily, cost(Math.max(admission.bodyBytes.length, window)), () => cost(exactInput()));
        if (!reserved) {
          const message = `daily budget of $${agent.budgetLimitDaily} for agent ${agent.id} is used up; it resets at 00:00 UTC`;
          return refuse(new ProxyRefusal(429, "budget_exceeded", message, {}, secondsToUtcMidnight(receivedAtMs)), "budget");
        }
      }

      // 6. What is forwarded: the bytes as received, unless a redaction, the Google spec path or a restored
      // thinking block (one the sidecar redacted for the client: its signature covers the original) changed the body.
      let forwardBody: Buffer;
      /** The sidecar asked the provider for the stream's usage (askStreamUsage): the client's stream is filtered. */
      let addedUsage = false;
      /** With addedUsage: the body as it was before the option was added (undefined: the bytes as received). */
      let bodyBeforeAsking: unknown;
      try {
        let changed = target.body;
        if (inbound.redactors.length > 0) {
          changed = redactPrompt(adapter, changed ?? body, inbound.redactors, agent.piiDetection, { text: prompt, pii: promptPii });
          // In place: `changed` is the redacted prompt's copy.
          if (extras) redactInputExtras(adapter, changed, inbound.redactors, agent.piiDetection, extras);
        }
        const thinking = deps.redactedThinking;
        if (thinking && thinking.size > 0 && adapter.restoreSignedReasoning) {
          changed = adapter.restoreSignedReasoning(changed ?? body, (signature, text) => thinking.restore(agent.id, signature, text)) ?? changed;
        }
        const ask = deps.askStreamUsage;
        if (target.stream && adapter.askStreamUsage && (ask === "add" || (ask === "budgeted" && agent.hasBudget)) && !refusesStreamUsage.has(adapter.name)) {
          const asking = adapter.askStreamUsage(changed ?? body);
          if (asking) [bodyBeforeAsking, changed, addedUsage] = [changed, asking, true];
        }
        forwardBody = changed === undefined ? admission.bodyBytes : Buffer.from(stringifyKeepingNumbers(changed, admission.bodyText), "utf8");
      } catch (e) {
        // A body nested deeper than the engine can copy or serialise (thousands of levels) cannot be
        // rewritten: it is not forwarded unredacted (fail closed), and the caller is told why.
        if (!(e instanceof RangeError)) throw e;
        settleBudget();
        return refuse(new ProxyRefusal(400, "bad_request", "request body is nested too deeply to be rewritten by the sidecar's policies"), "");
      }

      // 7. Forward. A client that goes away aborts the upstream call; the trace is still recorded.
      // An EventEmitter is undici's cheapest abort signal (an AbortController costs an EventTarget per request).
      const abort = new EventEmitter();
      let clientGone = false;
      res.once("close", () => {
        if (responded) return;
        clientGone = true;
        abort.emit("abort");
      });
      const endpoint = endpoints.get(adapter.name)!;
      const tUp = performance.now();
      /** The provider may have read and billed the prompt, and no usage came back: counted locally (flagged estimated). */
      const chargeUnanswered = (): void => {
        const settled = unansweredUsage(promptTokens);
        draft.usage = settled.usage;
        draft.tokensEstimated = settled.estimated;
        draft.cost = costOf(askedPrice, draft.usage);
      };
      forwarded = { abort: () => abort.emit("abort"), chargeUnanswered };
      /** The provider could not be reached or its answer could not be read: 502/504, or client_closed. */
      const upstreamFailed = (e: unknown): void => {
        draft.timing.providerMs = spans.provider = performance.now() - tUp;
        draft.status = "error";
        const failure = clientGone || isAbort(e) ? undefined : upstreamFailure(e, adapter.name);
        // Sent but not answered (the client left, no answer in time, the connection reset or closed): the
        // provider may have read and billed the prompt, so the trace and the budget carry it, counted
        // locally (flagged estimated). Never connected (refused, unresolvable, connect timeout): nothing billed.
        if (failure === undefined || !neverReachedProvider(e)) chargeUnanswered();
        settleBudget();
        if (failure === undefined) {
          draft.errorCode = "client_closed";
          draft.httpStatus = CLIENT_CLOSED;
          draft.timing.totalMs = performance.now() - t0;
          emit();
          return;
        }
        draft.errorCode = failure.code;
        draft.httpStatus = failure.status;
        // The client is told the provider and the error code; the address and message go to the log.
        if (failure.status === 502) deps.onError(upstreamFailureDetail(e, adapter.name), "proxy.upstream");
        draft.timing.totalMs = performance.now() - t0;
        service["x-service-overhead-ms"] = ms(draft.timing.totalMs - draft.timing.providerMs);
        responded = true;
        sendJsonError(res, failure, requestId, service);
        emit();
      };
      const send = (bytes: Buffer) =>
        deps.dispatcher.request({
          origin: endpoint.origin,
          path: endpoint.prefix + target.path,
          method: "POST",
          headers: upstreamRequestHeaders(req.headers, bytes.length),
          body: bytes,
          signal: abort,
          headersTimeout: deps.upstreamTimeoutMs,
          bodyTimeout: deps.upstreamTimeoutMs,
        });
      let upstream: Dispatcher.ResponseData;
      /** An error body read already (a 400 that turned out not to be about the added option). */
      let readAlready: Buffer | undefined;
      try {
        upstream = await send(forwardBody);
        if (addedUsage && upstream.statusCode === 400) {
          // An OpenAI-compatible server (older Azure OpenAI API versions among them) may refuse the option
          // the sidecar added ("Unrecognized request argument supplied: stream_options"): nothing was
          // processed, so the call goes once more as the client sent it (counted locally, as without the
          // option), and this provider's streams are not asked again.
          readAlready = await readUpstreamBody(upstream.body);
          if (refusesAddedOption(readAlready, upstream.headers["content-encoding"])) {
            refusesStreamUsage.add(adapter.name);
            addedUsage = false;
            readAlready = undefined;
            deps.onError(new Error(`${adapter.name} at ${endpoint.origin} refused stream_options: its streams are counted locally (OPENAI_STREAM_USAGE) until the sidecar restarts`), "proxy.stream_usage");
            upstream = await send(bodyBeforeAsking === undefined ? admission.bodyBytes : Buffer.from(stringifyKeepingNumbers(bodyBeforeAsking, admission.bodyText), "utf8"));
          }
        }
      } catch (e) {
        return upstreamFailed(e);
      }
      const tHeaders = performance.now();
      const status = upstream.statusCode;
      draft.httpStatus = status;
      if (status >= 400) {
        draft.status = "error";
        draft.errorCode = `upstream_${status}`;
      }
      const contentType = String(upstream.headers["content-type"] ?? "");
      const isSse = contentType.includes("text/event-stream");
      const encoding = decodableEncoding(upstream.headers["content-encoding"]);
      const outHeaders = downstreamResponseHeaders(upstream.headers, encoding !== undefined);
      let completionText = "";
      let finishReason: string | undefined;

      if (status < 300 && (isSse || target.stream) && encoding === undefined && undecodableEncoding(upstream.headers["content-encoding"]) && actsOnAnswers(state, agent)) {
        // A stream in a coding the sidecar cannot undo (zstd) cannot be judged by the outbound block/redact
        // policies that apply: refused (fail closed) as such a JSON answer is, below. Stopped here; the
        // prompt the provider billed is charged.
        abort.emit("abort");
        chargeUnanswered();
        draft.streamed = true;
        return unreadable(`${adapter.name} answered with a stream in an encoding the sidecar cannot decode (${String(upstream.headers["content-encoding"])}); outbound policies cannot judge it`, clientGone);
      }
      if (status < 300 && (isSse || target.stream)) {
        // 8a. Stream: headers leave at once with the input cost known now; every chunk is written as it
        // arrives; the final cost goes in an HTTP trailer and the trace.
        draft.streamed = true;
        // The input cost known now: exact when the prompt was counted already, else estimated at 4
        // characters per token (a tokenizer pass here would delay the first byte); the trailer and the
        // trace have the provider's figures.
        service["x-service-cost"] = formatUsd(inputCost(askedPrice, promptTokenCount >= 0 ? promptTokenCount : Math.ceil(prompt.length / 4)));
        service["x-service-overhead-ms"] = ms(tUp - t0 + (performance.now() - tHeaders));
        // The final cost goes in a trailer, which needs chunked framing: an HTTP/1.0 client (nginx's default
        // to its upstreams) gets a close-delimited body and the cost in the trace only.
        const trailers = req.httpVersionMajor > 1 || (req.httpVersionMajor === 1 && req.httpVersionMinor >= 1);
        if (trailers) outHeaders.trailer = "X-Service-Cost";
        // Every applicable outbound policy is evaluated when the stream ends (policy/stream): counted now.
        service["x-service-policies"] = String(draft.evaluations.length + applicablePolicies(state.orderedPolicies, agent, "outbound").length);
        if (isSse && outHeaders["x-accel-buffering"] === undefined) outHeaders["x-accel-buffering"] = "no"; // nginx in front must not buffer
        res.writeHead(status, addServiceHeaders(outHeaders, service));
        res.flushHeaders();
        const observer = adapter.streamObserver();
        const relay = await relayStream({
          res,
          body: encoding ? decodeStream(upstream.body, encoding) : upstream.body,
          observer,
          filter: addedUsage && isSse ? new AddedUsageFilter() : undefined,
          governor: deps.streamGovernor?.({ adapter, agent, policies: state.orderedPolicies, draft, contentType, redactedThinking: deps.redactedThinking?.scoped(agent.id) }),
          sse: isSse,
          keepAlive: isSse ? (adapter.name === "google" ? keepAliveCrlf : keepAliveLf) : undefined,
          clientGone: () => clientGone,
          abortUpstream: () => abort.emit("abort"),
        });
        const facts = observer.end();
        if (facts.serviceTier === undefined && adapter.servedTierHeader) servedTierFromHeader(facts, upstream.headers, adapter.servedTierHeader);
        draft.timing.providerMs = spans.provider = performance.now() - tUp;
        completionText = facts.completionText;
        finishReason = facts.finishReason;
        recordAnswer(draft, facts, promptTokens, status, price);
        if (clientGone) {
          draft.status = "error";
          draft.errorCode = "client_closed";
        } else if (relay.governorError !== undefined) {
          // The outbound governor could not rewrite an event (nested too deeply: RangeError) or failed: the
          // stream was stopped there, fail closed.
          draft.status = "error";
          draft.errorCode = relay.governorError instanceof RangeError ? "unreadable_answer" : "internal_error";
        } else if (relay.upstreamError !== undefined && !relay.stopped) {
          draft.status = "error";
          draft.errorCode = isAbort(relay.upstreamError) ? "client_closed" : upstreamFailure(relay.upstreamError, adapter.name).code;
        } else if (facts.errorMessage !== undefined && draft.status === "success") {
          draft.status = "error"; // the provider's own mid-stream error event, or a stream cut short (endedEarly)
          draft.errorCode = "upstream_stream_error";
        }
        // A stream that ended before its end marker: the client learns it from the provider's error event.
        const endedEarly = facts.endedEarly === true && draft.errorCode === "upstream_stream_error" && relay.upstreamError === undefined && !relay.stopped;
        responded = true;
        if (!clientGone) {
          if ((relay.upstreamError !== undefined && !relay.stopped) || relay.governorError !== undefined) {
            // The provider's stream broke (or the governor could not go on): end with the provider's native
            // error event when that cannot split an event, else cut.
            if (!relay.atBoundary) {
              res.destroy();
            } else {
              const why = relay.governorError !== undefined ? "the answer could not be governed" : `${adapter.name} stream interrupted`;
              if (isSse) res.write(adapter.errorEvent(why, draft.errorCode, { status: 502, details: { trace_id: traceId } }));
              if (trailers) res.addTrailers({ "X-Service-Cost": formatUsd(draft.cost.totalCost) });
              res.end();
            }
          } else {
            if (endedEarly && isSse && relay.atBoundary) res.write(adapter.errorEvent(facts.errorMessage ?? "stream ended early", draft.errorCode, { status: 502, details: { trace_id: traceId } }));
            if (trailers) res.addTrailers({ "X-Service-Cost": formatUsd(draft.cost.totalCost) });
            res.end();
          }
        }
      } else {
        // 8b. JSON (and every provider error, passed through unchanged): read whole, parse once, outbound policies.
        let raw: Buffer;
        try {
          raw = readAlready ?? (await readUpstreamBody(upstream.body));
        } catch (e) {
          return upstreamFailed(e);
        }
        if (encoding) {
          try {
            raw = decodeSync(raw, encoding);
          } catch {
            // The provider answered (and billed the prompt), but its compressed body is damaged: nobody can read it.
            draft.timing.providerMs = spans.provider = performance.now() - tUp;
            chargeUnanswered();
            return unreadable(`${adapter.name} answered ${status} with a ${encoding} body that cannot be decoded`, clientGone);
          }
        }
        draft.timing.providerMs = spans.provider = performance.now() - tUp;
        let json: unknown;
        // A leading UTF-8 BOM is not JSON (JSON.parse refuses U+FEFF): skipped for parsing, kept in a passed-through body.
        const rawText = raw.length > 0 ? raw.toString("utf8", hasUtf8Bom(raw) ? 3 : 0) : "";
        try {
          json = raw.length > 0 ? JSON.parse(rawText) : undefined;
        } catch {
          json = undefined;
        }
        const facts: ResponseFacts = json === undefined ? { completionText: "", toolCalls: [] } : adapter.parseResponse(json);
        if (facts.serviceTier === undefined && adapter.servedTierHeader) servedTierFromHeader(facts, upstream.headers, adapter.servedTierHeader);
        completionText = facts.completionText;
        finishReason = facts.finishReason;
        recordAnswer(draft, facts, promptTokens, status, price);
        if (status < 300 && facts.errorMessage !== undefined) {
          // A 2xx answer that says the generation failed (a choice finishing with "error", Cohere's ERROR, a
          // Responses object with status "failed", an error object in place of choices): passed through as
          // it came, and traced as the error it is, with its usage and cost.
          draft.status = "error";
          draft.errorCode = "upstream_answer_error";
        }
        service["x-service-cost"] = formatUsd(draft.cost.totalCost);
        if (status < 300 && json === undefined && raw.length > 0 && actsOnAnswers(state, agent)) {
          // A 2xx answer that cannot be read (not JSON, an unknown encoding) cannot be judged by the outbound
          // block/redact policies that apply: refused (fail closed), not passed through unseen. Without
          // such policies it is passed through unchanged, below. The provider was paid: its cost (the
          // prompt, counted locally) is on the trace and charged to the budget. Trace status error.
          return unreadable(`${adapter.name} answered ${status} with a body that is not JSON; outbound policies cannot judge it`, clientGone);
        }
        let outBody = raw;
        if (status < 300 && json !== undefined) {
          // Outbound policies judge the answer, the reasoning shown beside it (thinking, tool plans) and the
          // texts that quote it (citations, grounding, search queries); the extras are scanned only when
          // some outbound policy applies, as in streams (policy/stream). The trace keeps the findings of
          // the answer and its reasoning (a quote repeats what the answer holds).
          const extras =
            (facts.reasoningText !== undefined || adapter.quotedText !== undefined || adapter.answerToolSlots !== undefined) &&
            applicablePolicies(state.orderedPolicies, agent, "outbound").length > 0;
          const judgesReasoning = extras && facts.reasoningText !== undefined;
          const output = judgesReasoning ? governedOutputText(completionText, facts.reasoningText) : completionText;
          // The tool calls' arguments too: the agent runs a call before a later request could be scanned.
          const toolArgs = extras && adapter.answerToolSlots ? readSlots(json, adapter.answerToolSlots).join("\n\n") : "";
          const quoted = [extras ? (adapter.quotedText?.(json) ?? "") : "", toolArgs].filter((x) => x !== "").join("\n\n");
          const governed = quoted === "" ? output : `${output}\n\n${quoted}`;
          const outbound = outboundPhase(draft, agent, state, governed);
          const judgedPii = draft.completionPii;
          if (quoted !== "") draft.completionPii = judgedPii.filter((f) => f.start < output.length);
          service["x-service-policies"] = String(draft.evaluations.length);
          if (outbound.block) {
            // The provider was paid: the refusal carries the cost, and the budget is charged.
            settleBudget();
            responded = true;
            draft.completion = completionText;
            return refuse(new ProxyRefusal(403, "policy_violation", `response blocked by policy "${outbound.block.name}"`, { policy_id: outbound.block.id, trace_id: traceId }), "");
          }
          if (outbound.redactors.length > 0) {
            const scanned = { text: governed, pii: agent.piiDetection ? judgedPii : null };
            try {
              const redacted = redactAnswer(adapter, json, outbound.redactors, agent.piiDetection, scanned, judgesReasoning, deps.redactedThinking?.scoped(agent.id), toolArgs !== "");
              if (adapter.spokenText && adapter.spokenText(redacted) !== adapter.spokenText(json)) {
                // The audio says what its transcript said: it cannot be redacted, so the answer is refused (fail closed).
                const p = outbound.redactors[0]!;
                settleBudget();
                responded = true;
                draft.completion = completionText;
                return refuse(new ProxyRefusal(403, "policy_violation", `response blocked by policy "${p.name}": a spoken answer (audio) cannot be redacted`, { policy_id: p.id, trace_id: traceId }), "");
              }
              outBody = Buffer.from(stringifyKeepingNumbers(redacted, rawText), "utf8");
            } catch (e) {
              // An answer nested deeper than the engine can copy or serialise cannot be redacted: refused
              // (fail closed), as an answer that cannot be read.
              if (!(e instanceof RangeError)) throw e;
              return unreadable(`${adapter.name} answered with a body nested too deeply for outbound policies to rewrite`, clientGone);
            }
          }
        }
        outHeaders["content-length"] = String(outBody.length);
        service["x-service-overhead-ms"] = ms(performance.now() - t0 - draft.timing.providerMs);
        responded = true;
        if (!clientGone) {
          res.writeHead(status, addServiceHeaders(outHeaders, service));
          res.end(outBody);
        } else {
          draft.status = "error";
          draft.errorCode = "client_closed";
        }
      }
      draft.timing.totalMs = performance.now() - t0;
      settleBudget();

      // 9. After the answer: completion PII of a stream (stored traces never keep PII in clear), the trace,
      // then its quality scores. With the response gate on, the answer's last bytes are held until this
      // trace is spooled: it runs at once (a turn of the event loop in between would only hold them
      // longer), and the scores, computed once the trace is spooled and the answer has left, are added to
      // the spooled trace (DESIGN.md §8: they do not delay the response). Without the gate, on the next
      // turn, after the answer has been written.
      const afterAnswer = () => {
        try {
          if (draft.streamed && agent.piiDetection && draft.completionPii.length === 0 && completionText !== "") {
            // A stream no governor judged: its completion is scanned here, timed as pii_scan (not quality_score).
            const t = performance.now();
            draft.completionPii = detectPii(completionText);
            spans.pii_scan = (spans.pii_scan ?? 0) + (performance.now() - t);
          }
          // not stored when its scan failed: stored texts never keep PII in clear
          draft.completion = completionText;
        } catch (e) {
          deps.onError(e, "proxy.after_answer");
        }
        emit();
        // An answer without text (embeddings) has no completion to score: no quality scores, no quality_score span.
        if (adapter.answersWithText === false) return;
        const tq = performance.now();
        try {
          const scores = qualityScores({ prompt, completion: completionText, finishReason, status: draft.status, toolCalls: draft.toolCalls });
          deps.amend(traceId, qualityAmendment(scores, performance.now() - tq));
        } catch (e) {
          deps.onError(e, "proxy.quality_scores");
        }
      };
      if (deps.answersWaitForTraces) afterAnswer();
      else setImmediate(afterAnswer);
    } catch (e) {
      // A fault of our own between admission and the trace (a bug, not a provider or client failure):
      // the caller still gets an answer (500, or a cut connection once the answer had started), the
      // reservation is settled, and the request still leaves its trace.
      deps.onError(e, "proxy.internal");
      draft.status = "error";
      draft.errorCode = "internal_error";
      if (forwarded && !responded) {
        // The provider was called and its answer was not settled: it stops now, and the prompt it billed is charged.
        forwarded.abort();
        if (draft.usage === ZERO_USAGE) forwarded.chargeUnanswered();
      }
      if (!res.headersSent) {
        draft.httpStatus = 500;
        responded = true;
        sendJsonError(res, new ProxyRefusal(500, "internal_error", "internal error"), requestId, service);
      } else if (!res.writableEnded) {
        res.destroy();
      }
      draft.timing.totalMs = performance.now() - t0;
      settleBudget();
      emit();
    }
  };
}
