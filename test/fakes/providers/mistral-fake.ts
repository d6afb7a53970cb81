// Fake Mistral API: POST /v1/chat/completions (JSON and SSE with usage in the last chunk, tool calls
// whole in one delta), POST /v1/embeddings (embeddings-fake.ts), native error bodies.
import type { FakeContext, FakeReply } from "./reply.js";
import { bearer, chunks, completionText, CREATED, isRecord, json, toolCallsOf, usageOf } from "./reply.js";
import type { FakeError } from "./types.js";
import { openAiStyleEmbeddingsFake } from "./embeddings-fake.js";

type Headers = Record<string, string>;
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

function errorBody(message: string, type: string, code: string | null): unknown {
  return { object: "error", message, type, param: null, code };
}

function scriptedError(error: FakeError, headers: Headers, requestId: string): FakeReply {
  const m = error.message;
  switch (error.status) {
    case 401:
      return json(401, headers, { message: m ?? "Unauthorized", request_id: requestId });
    case 422:
      return json(422, headers, { detail: [{ type: "missing", loc: ["body", "model"], msg: m ?? "Field required", input: null }] });
    case 429:
      return json(429, { ...headers, "retry-after": "1" }, { message: m ?? "Requests rate limit exceeded", request_id: requestId });
    case 400:
    case 403:
    case 404:
      return json(error.status, headers, errorBody(m ?? "Invalid model: does-not-exist", "invalid_model", "1500"));
    default:
      return json(error.status, headers, errorBody(m ?? "Internal server error", "internal_server_error", "1000"));
  }
}

function usageBody(ctx: FakeContext): Record<string, unknown> {
  const u = usageOf(ctx);
  const usage: Record<string, unknown> = {
    prompt_tokens: u.inputTokens,
    total_tokens: u.inputTokens + u.outputTokens,
    completion_tokens: u.outputTokens,
  };
  if (u.cachedInputTokens > 0) usage.prompt_tokens_details = { cached_tokens: u.cachedInputTokens };
  return usage;
}

export function mistralFake(ctx: FakeContext): FakeReply {
  const requestId = ctx.ids.next("", 32);
  const headers: Headers = { "mistral-correlation-id": requestId, "x-kong-request-id": ctx.ids.next("", 24) };
  if (ctx.method !== "POST" || (ctx.path !== "/v1/chat/completions" && ctx.path !== "/v1/embeddings")) return json(404, headers, { detail: "Not Found" });
  if (bearer(ctx.headers) === undefined) return json(401, headers, { message: "Unauthorized", request_id: requestId });
  if (ctx.script.error) return scriptedError(ctx.script.error, headers, requestId);
  if (ctx.jsonError || !isRecord(ctx.body)) {
    return json(400, headers, errorBody("Invalid JSON body", "invalid_request_error", null));
  }
  const body = ctx.body;
  if (ctx.path === "/v1/embeddings") {
    return openAiStyleEmbeddingsFake(ctx, headers, "mistral", (status, message, param) => json(status, headers, { detail: [{ type: "missing", loc: ["body", param], msg: message, input: body }] }));
  }
  if (typeof body.model !== "string" || !Array.isArray(body.messages)) {
    return json(422, headers, { detail: [{ type: "missing", loc: ["body", typeof body.model !== "string" ? "model" : "messages"], msg: "Field required", input: body }] });
  }
  const model = ctx.script.model ?? body.model;
  const text = completionText(ctx.script);
  const tools = toolCallsOf(ctx.script).map((t) => ({ ...t, id: t.id ?? ctx.ids.next("", 9, ALNUM) }));
  const finish = ctx.script.finishReason ?? (tools.length > 0 ? "tool_calls" : "stop");
  const id = ctx.ids.next("", 32);
  const toolCalls = tools.map((t, index) => ({ id: t.id, type: "function", function: { name: t.name, arguments: JSON.stringify(t.arguments) }, index }));

  const thinking = ctx.script.reasoning;
  // Reasoning models (Magistral) answer with content chunks: a thinking chunk, then the text.
  const thinkChunk = (t: string) => ({ type: "thinking", thinking: [{ type: "text", text: t }] });
  if (body.stream !== true) {
    const content = thinking === undefined ? text : [thinkChunk(thinking), ...(text !== "" ? [{ type: "text", text }] : [])];
    return json(200, headers, {
      id,
      object: "chat.completion",
      model,
      usage: usageBody(ctx),
      created: CREATED,
      choices: [{ index: 0, message: { role: "assistant", content, tool_calls: toolCalls.length > 0 ? toolCalls : null, prefix: false }, finish_reason: finish }],
    });
  }
  const chunk = (delta: Record<string, unknown>, finishReason: string | null, extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: CREATED, model, choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra })}\n\n`;
  const pieces: string[] = [chunk({ role: "assistant", content: "" }, null)];
  if (thinking !== undefined) for (const piece of chunks(thinking, ctx.script.textChunkSize ?? 4)) pieces.push(chunk({ content: [thinkChunk(piece)] }, null));
  for (const piece of chunks(text, ctx.script.textChunkSize ?? 4)) pieces.push(chunk({ content: piece }, null));
  if (toolCalls.length > 0) pieces.push(chunk({ tool_calls: toolCalls }, null));
  pieces.push(chunk({ content: "" }, finish, ctx.script.omitUsage ? {} : { usage: usageBody(ctx) }));
  pieces.push("data: [DONE]\n\n");
  return {
    kind: "stream",
    status: 200,
    sse: true,
    headers: { ...headers, "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" },
    pieces,
    errorEvent: (message) => `data: ${JSON.stringify(errorBody(message, "internal_server_error", "1000"))}\n\n`,
  };
}
