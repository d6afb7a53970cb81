// Fake Anthropic Messages API: POST /v1/messages (JSON and SSE with message_start / content_block_* /
// ping / message_delta / message_stop), POST /v1/messages/count_tokens, native error bodies.
import type { FakeContext, FakeReply } from "./reply.js";
import { bearer, chunks, completionText, isRecord, json, toolCallsOf, usageOf } from "./reply.js";

type Headers = Record<string, string>;
const B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

const ERROR_TYPES: Record<number, [string, string]> = {
  400: ["invalid_request_error", "Invalid request"],
  401: ["authentication_error", "invalid x-api-key"],
  403: ["permission_error", "Your API key does not have permission to use the specified resource."],
  404: ["not_found_error", "Not found"],
  422: ["invalid_request_error", "Invalid request"],
  429: ["rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"],
  500: ["api_error", "Internal server error"],
  503: ["api_error", "Service unavailable"],
  529: ["overloaded_error", "Overloaded"],
};

function errorReply(status: number, message: string | undefined, headers: Headers): FakeReply {
  const [type, fallback] = ERROR_TYPES[status] ?? ["api_error", "Internal server error"];
  const extra: Headers = status === 429 ? { "retry-after": "1" } : {};
  return json(status, { ...headers, ...extra }, { type: "error", error: { type, message: message ?? fallback }, request_id: headers["request-id"] });
}

function nativeUsage(ctx: FakeContext, outputTokens: number): Record<string, unknown> {
  const u = usageOf(ctx);
  const longWrites = Math.min(u.cacheWriteLongTokens, u.cacheWriteTokens);
  return {
    input_tokens: u.inputTokens - u.cachedInputTokens - u.cacheWriteTokens,
    cache_creation_input_tokens: u.cacheWriteTokens,
    cache_read_input_tokens: u.cachedInputTokens,
    cache_creation: { ephemeral_5m_input_tokens: u.cacheWriteTokens - longWrites, ephemeral_1h_input_tokens: longWrites },
    output_tokens: outputTokens,
    service_tier: "standard",
    // Fast mode as requested (the real API refuses it for models without it).
    speed: isRecord(ctx.body) && ctx.body.speed === "fast" ? "fast" : "standard",
    // Where inference ran: US-only when asked, else anywhere.
    inference_geo: isRecord(ctx.body) && ctx.body.inference_geo === "us" ? "us" : "global",
  };
}

const sse = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
const PING = 'event: ping\ndata: {"type": "ping"}\n\n';

export function anthropicFake(ctx: FakeContext): FakeReply {
  const headers: Headers = {
    "request-id": ctx.ids.next("req_011C", 20, B58),
    "anthropic-organization-id": "00000000-0000-4000-8000-000000000000",
  };
  const isMessages = ctx.path === "/v1/messages";
  const isCount = ctx.path === "/v1/messages/count_tokens";
  if (ctx.method !== "POST" || (!isMessages && !isCount)) return errorReply(404, "Not Found", headers);
  const key = ctx.headers["x-api-key"];
  if ((typeof key !== "string" || key === "") && bearer(ctx.headers) === undefined) {
    return errorReply(401, "x-api-key header is required", headers);
  }
  if (typeof ctx.headers["anthropic-version"] !== "string") {
    return errorReply(400, "anthropic-version: header is required", headers);
  }
  if (ctx.script.error) return errorReply(ctx.script.error.status, ctx.script.error.message, headers);
  if (ctx.jsonError || !isRecord(ctx.body)) return errorReply(400, "There was an issue with your request: invalid JSON body", headers);
  const body = ctx.body;
  if (typeof body.model !== "string") return errorReply(400, "model: Field required", headers);
  if (!Array.isArray(body.messages)) return errorReply(400, "messages: Field required", headers);
  if (isCount) return json(200, headers, { input_tokens: usageOf(ctx).inputTokens });
  if (typeof body.max_tokens !== "number") return errorReply(400, "max_tokens: Field required", headers);

  const model = ctx.script.model ?? body.model;
  const text = completionText(ctx.script);
  const tools = toolCallsOf(ctx.script).map((t) => ({ ...t, id: t.id ?? ctx.ids.next("toolu_01", 22, B58) }));
  const stop = ctx.script.finishReason ?? (tools.length > 0 ? "tool_use" : "end_turn");
  const id = ctx.ids.next("msg_01", 22, B58);
  const usage = usageOf(ctx);
  const thinking = ctx.script.reasoning;
  // A thinking block's signature (opaque, base64 in the real API) covers its text.
  const signature = thinking !== undefined ? `${ctx.ids.next("Eq", 86, B64)}==` : "";

  if (body.stream !== true) {
    const content: unknown[] = [];
    if (thinking !== undefined) content.push({ type: "thinking", thinking, signature });
    if (text !== "") content.push({ type: "text", text });
    for (const t of tools) content.push({ type: "tool_use", id: t.id, name: t.name, input: t.arguments });
    return json(200, headers, {
      id,
      type: "message",
      role: "assistant",
      model,
      content,
      stop_reason: stop,
      stop_sequence: null,
      usage: nativeUsage(ctx, usage.outputTokens),
    });
  }

  const pieces: string[] = [];
  const startUsage = nativeUsage(ctx, 1);
  pieces.push(sse("message_start", { type: "message_start", message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: startUsage } }));
  let index = 0;
  let pinged = false;
  const ping = () => {
    if (!pinged) pieces.push(PING); // the real API sends one ping after the first block starts
    pinged = true;
  };
  if (thinking !== undefined) {
    pieces.push(sse("content_block_start", { type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } }));
    ping();
    for (const piece of chunks(thinking, ctx.script.textChunkSize ?? 4)) {
      pieces.push(sse("content_block_delta", { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: piece } }));
    }
    pieces.push(sse("content_block_delta", { type: "content_block_delta", index, delta: { type: "signature_delta", signature } }));
    pieces.push(sse("content_block_stop", { type: "content_block_stop", index }));
    index++;
  }
  if (text !== "") {
    pieces.push(sse("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } }));
    ping();
    for (const piece of chunks(text, ctx.script.textChunkSize ?? 4)) {
      pieces.push(sse("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: piece } }));
    }
    pieces.push(sse("content_block_stop", { type: "content_block_stop", index }));
    index++;
  }
  for (const t of tools) {
    pieces.push(sse("content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id: t.id, name: t.name, input: {} } }));
    ping();
    pieces.push(sse("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: "" } }));
    for (const args of chunks(JSON.stringify(t.arguments), ctx.script.argsChunkSize ?? 8)) {
      pieces.push(sse("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: args } }));
    }
    pieces.push(sse("content_block_stop", { type: "content_block_stop", index }));
    index++;
  }
  const deltaUsage = ctx.script.omitUsage ? undefined : { output_tokens: usage.outputTokens };
  pieces.push(sse("message_delta", { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, ...(deltaUsage ? { usage: deltaUsage } : {}) }));
  pieces.push(sse("message_stop", { type: "message_stop" }));
  if (ctx.script.omitUsage) {
    // message_start carries usage in the real API; without usage the fake drops it there too
    pieces[0] = sse("message_start", { type: "message_start", message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null } });
  }
  return {
    kind: "stream",
    status: 200,
    sse: true,
    headers: { ...headers, "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" },
    pieces,
    errorEvent: (message) => sse("error", { type: "error", error: { type: "overloaded_error", message } }),
    keepAlive: `: keep-alive\n\n${PING}`,
  };
}
