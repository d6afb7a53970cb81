// Fake Cohere API v2: POST /v2/chat (JSON and SSE: message-start, content-*, tool-plan-delta,
// tool-call-*, message-end with billed_units/tokens usage), POST /v2/embed (embeddings-fake.ts), native
// {id, message} error bodies.
import type { FakeContext, FakeReply } from "./reply.js";
import { bearer, chunks, completionText, isRecord, json, toolCallsOf, usageOf } from "./reply.js";
import { cohereEmbedFake } from "./embeddings-fake.js";

type Headers = Record<string, string>;
const LOWER = "abcdefghijklmnopqrstuvwxyz0123456789";
const TOOL_PLAN = "I will call the requested tools.";

const DEFAULT_MESSAGES: Record<number, string> = {
  400: "invalid request: message must be at least 1 token long or tool results must be specified.",
  401: "invalid api token",
  403: "Forbidden",
  404: "model 'does-not-exist' not found, make sure the correct model ID was used and that you have access to the model.",
  422: "invalid request",
  429: "You are using a Trial key, which is limited to 10 API calls / minute. You can continue to use the Trial key for free or upgrade to a Production key with higher rate limits at 'https://dashboard.cohere.com/api-keys'. Contact us on 'https://discord.gg/XW44jPfYJu' or email us at support@cohere.com with any questions",
  500: "internal server error, this has been reported to our developers",
  503: "service unavailable",
};

const sse = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

export function cohereFake(ctx: FakeContext): FakeReply {
  const traceId = ctx.ids.next("", 32);
  const headers: Headers = { "x-debug-trace-id": traceId, "x-endpoint-monthly-call-limit": "1000", "num_chars": "0" };
  const error = (status: number, message?: string): FakeReply =>
    json(status, headers, { id: ctx.ids.next("", 8) + "-0000-4000-8000-" + ctx.ids.next("", 12), message: message ?? DEFAULT_MESSAGES[status] ?? "internal server error" });
  if (ctx.method !== "POST" || (ctx.path !== "/v2/chat" && ctx.path !== "/v2/embed")) return error(404, `not found: ${ctx.method} ${ctx.path}`);
  if (bearer(ctx.headers) === undefined) return error(401, "no api key supplied");
  if (ctx.script.error) return error(ctx.script.error.status, ctx.script.error.message);
  if (ctx.jsonError || !isRecord(ctx.body)) return error(400, "invalid request: could not parse JSON body");
  const body = ctx.body;
  if (ctx.path === "/v2/embed") return cohereEmbedFake(ctx, headers, error);
  if (typeof body.model !== "string") return error(400, "invalid request: model must be specified");
  if (!Array.isArray(body.messages)) return error(400, "invalid request: messages must be specified");

  const text = completionText(ctx.script);
  const tools = toolCallsOf(ctx.script).map((t) => ({ ...t, id: t.id ?? `${t.name}_${ctx.ids.next("", 12, LOWER)}` }));
  const finish = ctx.script.finishReason ?? (tools.length > 0 ? "TOOL_CALL" : "COMPLETE");
  const id = `${ctx.ids.next("", 8)}-${ctx.ids.next("", 4)}-4${ctx.ids.next("", 3)}-8${ctx.ids.next("", 3)}-${ctx.ids.next("", 12)}`;
  const u = usageOf(ctx);
  const usage: Record<string, unknown> = {
    billed_units: { input_tokens: u.inputTokens, output_tokens: u.outputTokens },
    tokens: { input_tokens: u.inputTokens + u.unbilledInputTokens, output_tokens: u.outputTokens },
  };
  if (u.cachedInputTokens > 0) usage.cached_tokens = u.cachedInputTokens;
  const toolCalls = tools.map((t) => ({ id: t.id, type: "function", function: { name: t.name, arguments: JSON.stringify(t.arguments) } }));
  // Reasoning: the tool plan when the answer calls tools, else a thinking content item (reasoning models).
  const plan = tools.length > 0 ? (ctx.script.reasoning ?? TOOL_PLAN) : undefined;
  const thinking = tools.length > 0 ? undefined : ctx.script.reasoning;

  if (body.stream !== true) {
    const message: Record<string, unknown> = { role: "assistant" };
    if (plan !== undefined) {
      message.tool_plan = plan;
      message.tool_calls = toolCalls;
    }
    const content: unknown[] = [];
    if (thinking !== undefined) content.push({ type: "thinking", thinking });
    if (text !== "") content.push({ type: "text", text });
    if (content.length > 0) message.content = content;
    return json(200, headers, { id, message, finish_reason: finish, usage });
  }

  const pieces: string[] = [sse("message-start", { id, delta: { message: { role: "assistant", content: [], tool_plan: "", tool_calls: [], citations: [] } } })];
  let index = 0;
  if (thinking !== undefined) {
    pieces.push(sse("content-start", { index, delta: { message: { content: { type: "thinking", thinking: "" } } } }));
    for (const piece of chunks(thinking, ctx.script.textChunkSize ?? 4)) {
      pieces.push(sse("content-delta", { index, delta: { message: { content: { thinking: piece } } } }));
    }
    pieces.push(sse("content-end", { index }));
    index++;
  }
  if (text !== "") {
    pieces.push(sse("content-start", { index, delta: { message: { content: { type: "text", text: "" } } } }));
    for (const piece of chunks(text, ctx.script.textChunkSize ?? 4)) {
      pieces.push(sse("content-delta", { index, delta: { message: { content: { text: piece } } } }));
    }
    pieces.push(sse("content-end", { index }));
  }
  if (plan !== undefined) {
    for (const piece of chunks(plan, ctx.script.textChunkSize ?? 4)) {
      pieces.push(sse("tool-plan-delta", { delta: { message: { tool_plan: piece } } }));
    }
    tools.forEach((t, index) => {
      pieces.push(sse("tool-call-start", { index, delta: { message: { tool_calls: { id: t.id, type: "function", function: { name: t.name, arguments: "" } } } } }));
      for (const args of chunks(JSON.stringify(t.arguments), ctx.script.argsChunkSize ?? 8)) {
        pieces.push(sse("tool-call-delta", { index, delta: { message: { tool_calls: { function: { arguments: args } } } } }));
      }
      pieces.push(sse("tool-call-end", { index }));
    });
  }
  pieces.push(sse("message-end", { delta: ctx.script.omitUsage ? { finish_reason: finish } : { finish_reason: finish, usage } }));
  // The API ends a v2 stream with `data: [DONE]` after message-end (the cohere-ai SDK's v2 chatStream
  // has `streamTerminator: "[DONE]"`); the SDK stops reading there.
  pieces.push("data: [DONE]\n\n");
  return {
    kind: "stream",
    status: 200,
    sse: true,
    headers: { ...headers, "content-type": "text/event-stream" },
    pieces,
    errorEvent: (message) => sse("message-end", { delta: { finish_reason: "ERROR", error: message } }),
  };
}
