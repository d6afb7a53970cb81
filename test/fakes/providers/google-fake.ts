// Fake Gemini API: POST /{v1,v1beta}/models/{model}:generateContent and :streamGenerateContent
// (alt=sse → SSE with CRLF delimiters, otherwise a streamed JSON array), :embedContent and
// :batchEmbedContents (embeddings-fake.ts), GET /v1beta/models, x-goog-api-key or ?key= auth,
// google.rpc.Status error bodies.
import type { FakeContext, FakeReply } from "./reply.js";
import { chunks, completionText, isRecord, json, toolCallsOf, usageOf } from "./reply.js";
import { googleEmbedFake } from "./embeddings-fake.js";

type Headers = Record<string, string>;

const PATH = /^\/(v1|v1beta|v1alpha)\/models\/([^/:]+):(generateContent|streamGenerateContent|embedContent|batchEmbedContents)$/;
const STATUS: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  422: "INVALID_ARGUMENT",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
  529: "UNAVAILABLE",
};
const DEFAULT_MESSAGES: Record<number, string> = {
  400: "Request contains an invalid argument.",
  401: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
  403: "The caller does not have permission",
  404: "models/does-not-exist is not found for API version v1beta, or is not supported for generateContent.",
  429: "Resource has been exhausted (e.g. check quota).",
  500: "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
  503: "The model is overloaded. Please try again later.",
};
/** Top-level fields of GenerateContentRequest (camelCase and snake_case, as the JSON mapping accepts both). */
const KNOWN_FIELDS = new Set([
  "contents", "tools", "toolConfig", "tool_config", "safetySettings", "safety_settings", "systemInstruction",
  "system_instruction", "generationConfig", "generation_config", "cachedContent", "cached_content", "labels",
  "service_tier", "serviceTier",
]);

function status(code: number, message: string, headers: Headers, details?: unknown[]): FakeReply {
  const error: Record<string, unknown> = { code, message, status: STATUS[code] ?? "UNKNOWN" };
  if (details) error.details = details;
  return json(code, { ...headers, "content-type": "application/json; charset=UTF-8" }, { error });
}

export function googleFake(ctx: FakeContext): FakeReply {
  const headers: Headers = {
    server: "scaffolding on HTTPServer2",
    vary: "Origin, X-Origin, Referer",
    "x-content-type-options": "nosniff",
    "x-frame-options": "SAMEORIGIN",
    "server-timing": "gfet4t7; dur=42",
  };
  if (ctx.method === "GET" && /^\/(v1|v1beta)\/models$/.test(ctx.path)) {
    return json(200, headers, { models: [{ name: "models/gemini-2.5-flash", displayName: "Gemini 2.5 Flash", supportedGenerationMethods: ["generateContent"] }] });
  }
  const match = PATH.exec(ctx.path);
  if (ctx.method !== "POST" || !match) return status(404, `Method not found: ${ctx.method} ${ctx.path}`, headers);
  const key = ctx.headers["x-goog-api-key"] ?? ctx.search.get("key");
  if (typeof key !== "string" || key === "") {
    return status(403, "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.", headers, [
      { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "SERVICE_DISABLED", domain: "googleapis.com" },
    ]);
  }
  if (ctx.script.error) {
    const e = ctx.script.error;
    const details =
      e.status === 400 && e.message === undefined
        ? [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID", domain: "googleapis.com", metadata: { service: "generativelanguage.googleapis.com" } }]
        : undefined;
    // Gemini answers a bad API key with 400 INVALID_ARGUMENT / API_KEY_INVALID (the scripted 400 default)
    const message = e.message ?? (e.status === 400 ? "API key not valid. Please pass a valid API key." : DEFAULT_MESSAGES[e.status]);
    return status(e.status, message ?? "Internal error", headers, details);
  }
  if (ctx.jsonError || !isRecord(ctx.body)) return status(400, "Invalid JSON payload received. Unexpected token.", headers);
  if (match[3] === "embedContent" || match[3] === "batchEmbedContents") {
    return googleEmbedFake(ctx, decodeURIComponent(match[2] ?? ""), match[3] === "batchEmbedContents", (code, message) => status(code, message, headers), { ...headers, "content-type": "application/json; charset=UTF-8" });
  }
  const body = ctx.body;
  for (const field of Object.keys(body)) {
    if (!KNOWN_FIELDS.has(field)) return status(400, `Invalid JSON payload received. Unknown name "${field}": Cannot find field.`, headers);
  }
  if (!Array.isArray(body.contents) || body.contents.length === 0) {
    return status(400, "* GenerateContentRequest.contents: contents is not specified\n", headers);
  }
  // The tier that served the call is named in a response header (flex and priority as asked, else standard).
  const asked = body.service_tier ?? body.serviceTier;
  headers["x-gemini-service-tier"] = asked === "flex" || asked === "priority" ? asked : "standard";
  const model = ctx.script.model ?? decodeURIComponent(match[2] ?? "");
  const stream = match[3] === "streamGenerateContent";
  const text = completionText(ctx.script);
  const tools = toolCallsOf(ctx.script);
  const finish = ctx.script.finishReason ?? "STOP";
  const responseId = ctx.ids.next("", 22, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789");
  const u = usageOf(ctx);
  const promptDetails = [{ modality: "TEXT", tokenCount: u.inputTokens }];
  const fullUsage: Record<string, unknown> = {
    promptTokenCount: u.inputTokens,
    candidatesTokenCount: u.outputTokens - u.reasoningTokens,
    totalTokenCount: u.inputTokens + u.outputTokens,
    promptTokensDetails: promptDetails,
  };
  if (u.cachedInputTokens > 0) {
    fullUsage.cachedContentTokenCount = u.cachedInputTokens;
    fullUsage.cacheTokensDetails = [{ modality: "TEXT", tokenCount: u.cachedInputTokens }];
  }
  if (u.reasoningTokens > 0) fullUsage.thoughtsTokenCount = u.reasoningTokens;
  const partialUsage = { promptTokenCount: u.inputTokens, totalTokenCount: u.inputTokens, promptTokensDetails: promptDetails };
  const callPart = (t: (typeof tools)[number]) => ({ functionCall: { ...(t.id ? { id: t.id } : {}), name: t.name, args: t.arguments } });

  const thought = ctx.script.reasoning;
  if (!stream) {
    const parts: unknown[] = [];
    if (thought !== undefined) parts.push({ text: thought, thought: true });
    if (text !== "") parts.push({ text });
    for (const t of tools) parts.push(callPart(t));
    return json(200, { ...headers, "content-type": "application/json; charset=UTF-8" }, {
      candidates: [{ content: { parts, role: "model" }, finishReason: finish, index: 0 }],
      usageMetadata: fullUsage,
      modelVersion: model,
      responseId,
    });
  }

  // one chunk per text piece, one per function call; the last chunk carries finishReason and the full usage
  const bodies: Record<string, unknown>[] = [];
  if (thought !== undefined) for (const piece of chunks(thought, ctx.script.textChunkSize ?? 4)) bodies.push({ parts: [{ text: piece, thought: true }] });
  const textPieces = chunks(text, ctx.script.textChunkSize ?? 4);
  for (const piece of textPieces) bodies.push({ parts: [{ text: piece }] });
  for (const t of tools) bodies.push({ parts: [callPart(t)] });
  if (bodies.length === 0) bodies.push({ parts: [{ text: "" }] });
  const elements = bodies.map((content, i) => {
    const last = i === bodies.length - 1;
    const candidate: Record<string, unknown> = { content: { ...content, role: "model" }, index: 0 };
    if (last) candidate.finishReason = finish;
    const element: Record<string, unknown> = { candidates: [candidate] };
    if (!ctx.script.omitUsage) element.usageMetadata = last ? fullUsage : partialUsage;
    element.modelVersion = model;
    element.responseId = responseId;
    return JSON.stringify(element);
  });
  const errorElement = (message: string) => JSON.stringify({ error: { code: 500, message, status: "INTERNAL" } });
  if (ctx.search.get("alt") === "sse") {
    return {
      kind: "stream",
      status: 200,
      sse: true,
      headers: { ...headers, "content-type": "text/event-stream", "x-accel-buffering": "no" },
      pieces: elements.map((e) => `data: ${e}\r\n\r\n`),
      errorEvent: (message) => `data: ${errorElement(message)}\r\n\r\n`,
    };
  }
  return {
    kind: "stream",
    status: 200,
    sse: false,
    headers: { ...headers, "content-type": "application/json; charset=UTF-8" },
    pieces: [...elements.map((e, i) => (i === 0 ? `[${e}` : `\r\n,\r\n${e}`)), "]"],
    errorEvent: (message) => `\r\n,\r\n${errorElement(message)}]`,
  };
}
