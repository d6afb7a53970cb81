// Fake OpenAI Responses API: POST /v1/responses, JSON (a Response object) and SSE (typed events with a
// sequence_number, each delta's text repeated whole by its `*.done` event, the item's output_item.done
// and the final response.completed, as the API sends them). Scripted reasoning becomes a reasoning item
// with a summary; a finishReason other than "completed" ends the response `incomplete` with that reason.
import type { FakeContext, FakeReply } from "./reply.js";
import { chunks, completionText, CREATED, json, servedTier, toolCallsOf, usageOf } from "./reply.js";

type Json = Record<string, unknown>;
const ID_ALPHABET = "0123456789abcdef";

function usageBody(ctx: FakeContext): Json {
  const u = usageOf(ctx);
  return {
    input_tokens: u.inputTokens,
    input_tokens_details: { cached_tokens: u.cachedInputTokens, cache_write_tokens: u.cacheWriteTokens },
    output_tokens: u.outputTokens,
    output_tokens_details: { reasoning_tokens: u.reasoningTokens },
    total_tokens: u.inputTokens + u.outputTokens,
  };
}

/** The error event of a Responses stream (ResponseErrorEvent). */
export function responsesErrorEvent(message: string, sequence = 0): string {
  return `event: error\ndata: ${JSON.stringify({ type: "error", sequence_number: sequence, code: "server_error", message, param: null })}\n\n`;
}

export function openaiResponsesFake(ctx: FakeContext, headers: Record<string, string>, errorBody: (message: string, type: string, param: string | null, code: string | null) => unknown): FakeReply {
  const body = ctx.body as Json;
  if (typeof body.model !== "string" || body.model === "") {
    return json(400, headers, errorBody("Missing required parameter: 'model'.", "invalid_request_error", "model", "missing_required_parameter"));
  }
  if (body.input === undefined && body.previous_response_id === undefined) {
    return json(400, headers, errorBody("Missing required parameter: 'input'.", "invalid_request_error", "input", "missing_required_parameter"));
  }
  const model = ctx.script.model ?? body.model;
  const text = completionText(ctx.script);
  const reasoning = ctx.script.reasoning;
  const finish = ctx.script.finishReason ?? "completed";
  const responseId = ctx.ids.next("resp_", 48, ID_ALPHABET);

  // The output items, whole.
  const output: Json[] = [];
  if (reasoning !== undefined) output.push({ id: ctx.ids.next("rs_", 48, ID_ALPHABET), type: "reasoning", summary: [{ type: "summary_text", text: reasoning }] });
  if (text !== "") {
    output.push({ id: ctx.ids.next("msg_", 48, ID_ALPHABET), type: "message", status: "completed", content: [{ type: "output_text", annotations: [], logprobs: [], text }], role: "assistant" });
  }
  for (const t of toolCallsOf(ctx.script)) {
    output.push({ id: ctx.ids.next("fc_", 48, ID_ALPHABET), type: "function_call", status: "completed", arguments: JSON.stringify(t.arguments), call_id: t.id ?? ctx.ids.next("call_", 24, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"), name: t.name });
  }
  const response = (status: string, out: Json[], usage: Json | null): Json => ({
    id: responseId,
    object: "response",
    created_at: CREATED,
    status,
    background: false,
    service_tier: servedTier(body.service_tier),
    error: null,
    incomplete_details: status === "incomplete" ? { reason: finish } : null,
    instructions: typeof body.instructions === "string" ? body.instructions : null,
    max_output_tokens: typeof body.max_output_tokens === "number" ? body.max_output_tokens : null,
    model,
    output: out,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: reasoning === undefined ? null : "medium", summary: reasoning === undefined ? null : "auto" },
    store: true,
    temperature: 1,
    text: { format: { type: "text" } },
    tool_choice: "auto",
    tools: Array.isArray(body.tools) ? body.tools : [],
    top_p: 1,
    truncation: "disabled",
    usage,
    user: null,
    metadata: {},
  });
  const finalStatus = finish === "completed" ? "completed" : "incomplete";

  if (body.stream !== true) return json(200, headers, response(finalStatus, output, usageBody(ctx)));

  let seq = 0;
  const events: string[] = [];
  const event = (type: string, fields: Json) => events.push(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...fields })}\n\n`);
  event("response.created", { response: response("in_progress", [], null) });
  event("response.in_progress", { response: response("in_progress", [], null) });
  const chunkSize = ctx.script.textChunkSize ?? 4;
  output.forEach((item, o) => {
    const id = item.id as string;
    if (item.type === "reasoning") {
      event("response.output_item.added", { output_index: o, item: { id, type: "reasoning", summary: [] } });
      const whole = reasoning ?? "";
      event("response.reasoning_summary_part.added", { item_id: id, output_index: o, summary_index: 0, part: { type: "summary_text", text: "" } });
      for (const piece of chunks(whole, chunkSize)) event("response.reasoning_summary_text.delta", { item_id: id, output_index: o, summary_index: 0, delta: piece, obfuscation: "fk" });
      event("response.reasoning_summary_text.done", { item_id: id, output_index: o, summary_index: 0, text: whole });
      event("response.reasoning_summary_part.done", { item_id: id, output_index: o, summary_index: 0, part: { type: "summary_text", text: whole } });
    } else if (item.type === "message") {
      event("response.output_item.added", { output_index: o, item: { id, type: "message", status: "in_progress", content: [], role: "assistant" } });
      event("response.content_part.added", { item_id: id, output_index: o, content_index: 0, part: { type: "output_text", annotations: [], logprobs: [], text: "" } });
      for (const piece of chunks(text, chunkSize)) event("response.output_text.delta", { item_id: id, output_index: o, content_index: 0, delta: piece, logprobs: [], obfuscation: "fk" });
      event("response.output_text.done", { item_id: id, output_index: o, content_index: 0, text, logprobs: [] });
      event("response.content_part.done", { item_id: id, output_index: o, content_index: 0, part: { type: "output_text", annotations: [], logprobs: [], text } });
    } else {
      const args = item.arguments as string;
      event("response.output_item.added", { output_index: o, item: { ...item, status: "in_progress", arguments: "" } });
      for (const piece of chunks(args, ctx.script.argsChunkSize ?? 8)) event("response.function_call_arguments.delta", { item_id: id, output_index: o, delta: piece, obfuscation: "fk" });
      event("response.function_call_arguments.done", { item_id: id, output_index: o, name: item.name, arguments: args });
    }
    event("response.output_item.done", { output_index: o, item });
  });
  event(finalStatus === "completed" ? "response.completed" : "response.incomplete", { response: response(finalStatus, output, ctx.script.omitUsage ? null : usageBody(ctx)) });
  return {
    kind: "stream",
    status: 200,
    sse: true,
    headers: { ...headers, "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" },
    pieces: events,
    errorEvent: (message) => responsesErrorEvent(message, seq),
  };
}
