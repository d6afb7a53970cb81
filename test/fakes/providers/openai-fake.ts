// Fake OpenAI API: POST /v1/chat/completions (JSON and SSE, tool calls, include_usage), POST /v1/responses
// (openai-responses-fake.ts), POST /v1/embeddings (embeddings-fake.ts), GET /v1/models, native error
// bodies {error:{message,type,param,code}}.
import type { FakeContext, FakeReply } from "./reply.js";
import { bearer, chunks, completionText, CREATED, isRecord, json, servedTier, toolCallsOf, usageOf } from "./reply.js";
import type { FakeError } from "./types.js";
import { openaiResponsesFake } from "./openai-responses-fake.js";
import { openAiStyleEmbeddingsFake } from "./embeddings-fake.js";

type Headers = Record<string, string>;

function errorBody(message: string, type: string, param: string | null, code: string | null): unknown {
  return { error: { message, type, param, code } };
}

function scriptedError(error: FakeError, headers: Headers): FakeReply {
  const m = error.message;
  switch (error.status) {
    case 400:
      return json(400, headers, errorBody(m ?? "Invalid request.", "invalid_request_error", null, null));
    case 401:
      return json(401, headers, errorBody(m ?? "Incorrect API key provided: sk-fake. You can find your API key at https://platform.openai.com/account/api-keys.", "invalid_request_error", null, "invalid_api_key"));
    case 403:
      return json(403, headers, errorBody(m ?? "You are not allowed to sample from this model", "invalid_request_error", null, "model_not_allowed"));
    case 404:
      return json(404, headers, errorBody(m ?? "The model `does-not-exist` does not exist or you do not have access to it.", "invalid_request_error", null, "model_not_found"));
    case 429:
      return json(429, { ...headers, "retry-after": "1", "x-ratelimit-remaining-requests": "0" }, errorBody(m ?? "Rate limit reached for requests. Please try again in 1s.", "requests", null, "rate_limit_exceeded"));
    case 503:
      return json(503, headers, errorBody(m ?? "The engine is currently overloaded, please try again later", "server_error", null, null));
    default:
      return json(error.status, headers, errorBody(m ?? "The server had an error while processing your request. Sorry about that!", "server_error", null, null));
  }
}

function usageBody(ctx: FakeContext): Record<string, unknown> {
  const u = usageOf(ctx);
  const promptDetails: Record<string, number> = { cached_tokens: u.cachedInputTokens, audio_tokens: 0 };
  if (u.cacheWriteTokens > 0) promptDetails.cache_write_tokens = u.cacheWriteTokens;
  return {
    prompt_tokens: u.inputTokens,
    completion_tokens: u.outputTokens,
    total_tokens: u.inputTokens + u.outputTokens,
    prompt_tokens_details: promptDetails,
    completion_tokens_details: { reasoning_tokens: u.reasoningTokens, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

export function openaiFake(ctx: FakeContext): FakeReply {
  const headers: Headers = {
    "x-request-id": ctx.ids.next("req_", 32),
    "openai-version": "2020-10-01",
    "openai-organization": "fake-org",
    "openai-processing-ms": "42",
  };
  if (ctx.method === "GET" && ctx.path === "/v1/models") {
    return json(200, headers, { object: "list", data: [{ id: "gpt-4o", object: "model", created: CREATED, owned_by: "system" }] });
  }
  if (ctx.method !== "POST" || (ctx.path !== "/v1/chat/completions" && ctx.path !== "/v1/responses" && ctx.path !== "/v1/embeddings")) {
    return json(404, headers, errorBody(`Invalid URL (${ctx.method} ${ctx.path})`, "invalid_request_error", null, null));
  }
  if (bearer(ctx.headers) === undefined) {
    return json(401, headers, errorBody("You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys.", "invalid_request_error", null, null));
  }
  if (ctx.script.error) return scriptedError(ctx.script.error, headers);
  if (ctx.jsonError || !isRecord(ctx.body)) {
    return json(400, headers, errorBody("We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)", "invalid_request_error", null, null));
  }
  const body = ctx.body;
  if (ctx.path === "/v1/responses") return openaiResponsesFake(ctx, headers, errorBody);
  if (ctx.path === "/v1/embeddings") return openAiStyleEmbeddingsFake(ctx, headers, "openai", (status, message, param) => json(status, headers, errorBody(message, "invalid_request_error", param, null)));
  if (typeof body.model !== "string" || body.model === "") {
    return json(400, headers, errorBody("you must provide a model parameter", "invalid_request_error", null, null));
  }
  if (!Array.isArray(body.messages)) {
    return json(400, headers, errorBody("Missing required parameter: 'messages'.", "invalid_request_error", "messages", "missing_required_parameter"));
  }
  const model = ctx.script.model ?? body.model;
  const text = completionText(ctx.script);
  const tools = toolCallsOf(ctx.script).map((t) => ({ ...t, id: t.id ?? ctx.ids.next("call_", 24, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") }));
  const finish = ctx.script.finishReason ?? (tools.length > 0 ? "tool_calls" : "stop");
  const id = ctx.ids.next("chatcmpl-", 29, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789");
  const fingerprint = "fp_fake0001";
  const tier = servedTier(body.service_tier);

  if (body.stream !== true) {
    const message: Record<string, unknown> = { role: "assistant", content: text === "" ? null : text, refusal: null, annotations: [] };
    if (tools.length > 0) {
      message.tool_calls = tools.map((t) => ({ id: t.id, type: "function", function: { name: t.name, arguments: JSON.stringify(t.arguments) } }));
    }
    return json(200, headers, {
      id,
      object: "chat.completion",
      created: CREATED,
      model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
      usage: usageBody(ctx),
      service_tier: tier,
      system_fingerprint: fingerprint,
    });
  }

  const includeUsage = isRecord(body.stream_options) && body.stream_options.include_usage === true;
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => {
    const c: Record<string, unknown> = { id, object: "chat.completion.chunk", created: CREATED, model, service_tier: tier, system_fingerprint: fingerprint, choices };
    if (includeUsage) c.usage = null;
    return `data: ${JSON.stringify({ ...c, ...extra })}\n\n`;
  };
  const choice = (delta: Record<string, unknown>, finishReason: string | null = null) => ({ index: 0, delta, logprobs: null, finish_reason: finishReason });
  const pieces: string[] = [chunk([choice({ role: "assistant", content: text === "" ? null : "", refusal: null })])];
  for (const piece of chunks(text, ctx.script.textChunkSize ?? 4)) pieces.push(chunk([choice({ content: piece })]));
  tools.forEach((t, index) => {
    pieces.push(chunk([choice({ tool_calls: [{ index, id: t.id, type: "function", function: { name: t.name, arguments: "" } }] })]));
    for (const args of chunks(JSON.stringify(t.arguments), ctx.script.argsChunkSize ?? 8)) {
      pieces.push(chunk([choice({ tool_calls: [{ index, function: { arguments: args } }] })]));
    }
  });
  pieces.push(chunk([choice({}, finish)]));
  if (includeUsage && !ctx.script.omitUsage) pieces.push(chunk([], { usage: usageBody(ctx) }));
  pieces.push("data: [DONE]\n\n");
  return {
    kind: "stream",
    status: 200,
    sse: true,
    headers: { ...headers, "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" },
    pieces,
    errorEvent: (message) => `data: ${JSON.stringify(errorBody(message, "server_error", null, null))}\n\n`,
  };
}
