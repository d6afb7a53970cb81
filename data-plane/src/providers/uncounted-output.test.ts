// Billed output that is not answer text (tool-call arguments, thinking, tool plans) and billed input
// that is not prompt text (tool definitions), for every adapter's stream observer and parseResponse:
// what the local count uses when the provider reports no usage (audit findings 2a and 2b).
import test from "ava";
import { computeCost, priceFor } from "../pricing/index.js";
import { settleUsage } from "../proxy/cost.js";
import { anthropicAdapter } from "./anthropic.js";
import { cohereAdapter } from "./cohere.js";
import { estimateTokens } from "./estimate-tokens.js";
import { googleAdapter } from "./google.js";
import { mistralAdapter } from "./mistral.js";
import { openaiAdapter } from "./openai.js";
import type { ProviderAdapter, ResponseFacts } from "./types.js";

const ARGS = JSON.stringify({ query: "weather in Paris, Lyon and Marseille for the next three days", units: "metric", detail: ["wind", "rain", "uv"] });
const ARGS2 = JSON.stringify({ tz: "Europe/Paris" });
const THINK = "The user wants a three-day forecast for three cities, so I should call the weather tool once.";
const PLAN = "I will search the weather for the three cities, then summarise.";
const PROMPT_TOKENS = 17;

/** Cuts s into pieces of n characters (streamed argument fragments). */
function pieces(s: string, n = 7): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length; i += n) out.push(s.slice(i, i + n));
  return out;
}

function sse(data: unknown, event?: string): string {
  return `${event ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
}

/** Runs a fresh observer over the events, pushed in 5-byte pieces so that events split across chunks. */
function observe(adapter: ProviderAdapter, events: string[]): ResponseFacts {
  const bytes = new TextEncoder().encode(events.join(""));
  const observer = adapter.streamObserver();
  for (let i = 0; i < bytes.length; i += 5) observer.push(bytes.subarray(i, i + 5));
  return observer.end();
}

/** The usage settleUsage records for facts of a 200 answer (prompt counted as PROMPT_TOKENS). */
function settled(facts: ResponseFacts) {
  return settleUsage(facts, () => PROMPT_TOKENS, 200);
}

const TOOLS_OPENAI = [
  { type: "function", function: { name: "get_weather", description: "Forecast for a city", parameters: { type: "object", properties: { city: { type: "string" } } } } },
];
const FUNCTIONS_OPENAI = [{ name: "legacy_fn", parameters: { type: "object", properties: {} } }];

// ---- OpenAI / Mistral (chat completions) ----

test("openai stream: a tool-only answer without usage counts the streamed arguments as output", (t) => {
  const chunk = (delta: unknown, finish: string | null = null) => sse({ id: "c", object: "chat.completion.chunk", model: "gpt-4o", choices: [{ index: 0, delta, finish_reason: finish }] });
  const events = [
    chunk({ role: "assistant", content: null }),
    chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "get_weather", arguments: "" } }] }),
    ...pieces(ARGS).map((a) => chunk({ tool_calls: [{ index: 0, function: { arguments: a } }] })),
    chunk({ tool_calls: [{ index: 1, id: "call_2", type: "function", function: { name: "get_time", arguments: "" } }] }),
    ...pieces(ARGS2).map((a) => chunk({ tool_calls: [{ index: 1, function: { arguments: a } }] })),
    chunk({}, "tool_calls"),
    sse("[DONE]"),
  ];
  const facts = observe(openaiAdapter, events);
  t.is(facts.usage, undefined);
  t.is(facts.completionText, "");
  t.deepEqual(facts.toolCalls, [{ name: "get_weather", id: "call_1" }, { name: "get_time", id: "call_2" }]);
  t.is(facts.uncountedOutputText, ARGS + ARGS2);
  const { usage, estimated } = settled(facts);
  t.true(estimated);
  t.is(usage.outputTokens, estimateTokens(ARGS + ARGS2));
  t.true(usage.outputTokens > 20);
  t.is(usage.inputTokens, PROMPT_TOKENS);
});

test("openai stream: legacy function_call arguments count too; a text-only answer has no uncounted output", (t) => {
  const chunk = (delta: unknown) => sse({ choices: [{ index: 0, delta }] });
  const legacy = observe(openaiAdapter, [chunk({ function_call: { name: "legacy_fn", arguments: "" } }), ...pieces(ARGS).map((a) => chunk({ function_call: { arguments: a } }))]);
  t.is(legacy.uncountedOutputText, ARGS);
  t.deepEqual(legacy.toolCalls, [{ name: "legacy_fn" }]);
  const plain = observe(openaiAdapter, [chunk({ content: "Hello" }), sse("[DONE]")]);
  t.is(plain.uncountedOutputText, undefined);
  t.is(settled(plain).usage.outputTokens, estimateTokens("Hello"));
});

test("openai parseResponse: tool-call arguments (function and custom tools) are uncounted output", (t) => {
  const json = {
    model: "gpt-4o",
    choices: [
      {
        index: 0,
        finish_reason: "tool_calls",
        message: {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "get_weather", arguments: ARGS } },
            { id: "call_2", type: "custom", custom: { name: "shell", input: "ls -la" } },
          ],
        },
      },
    ],
  };
  const facts = openaiAdapter.parseResponse(json);
  t.is(facts.uncountedOutputText, ARGS + "ls -la");
  t.is(settled(facts).usage.outputTokens, estimateTokens(ARGS + "ls -la"));
  t.is(openaiAdapter.parseResponse({ choices: [{ message: { content: "Hi" } }] }).uncountedOutputText, undefined);
});

test("openai / mistral inputExtrasText: the JSON of tools and functions, nothing else", (t) => {
  const body = { model: "gpt-4o", tool_choice: "auto", messages: [{ role: "user", content: "Hi" }], tools: TOOLS_OPENAI, functions: FUNCTIONS_OPENAI };
  const expected = `${JSON.stringify(TOOLS_OPENAI)}\n${JSON.stringify(FUNCTIONS_OPENAI)}`;
  t.is(openaiAdapter.inputExtrasText?.(body), expected);
  t.is(mistralAdapter.inputExtrasText?.(body), expected);
  t.is(openaiAdapter.inputExtrasText?.({ model: "gpt-4o", tools: TOOLS_OPENAI }), JSON.stringify(TOOLS_OPENAI));
  t.is(openaiAdapter.inputExtrasText?.({ model: "gpt-4o", messages: [], tools: [] }), "");
  t.is(mistralAdapter.inputExtrasText?.(undefined), "");
});

test("mistral stream: thinking chunks and whole tool calls count as output when usage is missing", (t) => {
  const chunk = (delta: unknown) => sse({ id: "m", model: "magistral-medium-latest", choices: [{ index: 0, delta, finish_reason: null }] });
  const think = pieces(THINK, 20).map((text) => chunk({ content: [{ type: "thinking", thinking: [{ type: "text", text }] }] }));
  const events = [
    ...think,
    chunk({ content: "Calling the tool." }),
    chunk({ tool_calls: [{ id: "t1", type: "function", index: 0, function: { name: "get_weather", arguments: ARGS } }] }),
    sse("[DONE]"),
  ];
  const facts = observe(mistralAdapter, events);
  t.is(facts.completionText, "Calling the tool.");
  t.is(facts.uncountedOutputText, THINK + ARGS);
  t.is(settled(facts).usage.outputTokens, estimateTokens("Calling the tool.") + estimateTokens(THINK + ARGS));
});

test("mistral parseResponse: thinking chunks and tool-call arguments (string or object) are uncounted output", (t) => {
  const args = { city: "Nice" };
  const json = {
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: [{ type: "thinking", thinking: [{ type: "text", text: THINK }] }, { type: "text", text: "Answer" }],
          tool_calls: [
            { id: "t1", function: { name: "get_weather", arguments: args } },
            { id: "t2", function: { name: "get_time", arguments: ARGS2 } },
          ],
        },
      },
    ],
  };
  const facts = mistralAdapter.parseResponse(json);
  t.is(facts.completionText, "Answer");
  t.is(facts.uncountedOutputText, THINK + JSON.stringify(args) + ARGS2);
});

// ---- Anthropic ----

const anthropicEvent = (data: { type: string } & Record<string, unknown>) => sse(data, data.type);
const MESSAGE_START = anthropicEvent({
  type: "message_start",
  message: {
    id: "msg_1",
    model: "claude-sonnet-4-6",
    content: [],
    usage: { input_tokens: 12, cache_read_input_tokens: 90000, cache_creation_input_tokens: 300, output_tokens: 1 },
  },
});
/** A thinking block then a tool_use block, streamed, without message_delta / message_stop. */
const ANTHROPIC_BLOCKS = [
  anthropicEvent({ type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } }),
  ...pieces(THINK, 20).map((thinking) => anthropicEvent({ type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking } })),
  anthropicEvent({ type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "EqQBCgIYAhIM" } }),
  anthropicEvent({ type: "content_block_stop", index: 0 }),
  anthropicEvent({ type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_1", name: "get_weather", input: {} } }),
  anthropicEvent({ type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "" } }),
  ...pieces(ARGS).map((partial_json) => anthropicEvent({ type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json } })),
  anthropicEvent({ type: "content_block_stop", index: 1 }),
];

test("anthropic stream cut before message_delta: message_start's input and cache counts kept, output counted from thinking + tool input", (t) => {
  const facts = observe(anthropicAdapter, [MESSAGE_START, ...ANTHROPIC_BLOCKS]);
  t.is(facts.usage, undefined);
  t.deepEqual(facts.toolCalls, [{ name: "get_weather", id: "toolu_1" }]);
  t.is(facts.uncountedOutputText, THINK + ARGS);
  t.deepEqual(facts.partialUsage, { inputTokens: 90312, cachedInputTokens: 90000, cacheWriteTokens: 300 });
  const { usage, estimated } = settleUsage(
    facts,
    () => {
      t.fail("the prompt must not be re-counted");
      return 0;
    },
    200,
  );
  t.true(estimated, "the output is counted locally: the trace stays tokensEstimated");
  t.deepEqual(usage, { inputTokens: 90312, cachedInputTokens: 90000, cacheWriteTokens: 300, outputTokens: estimateTokens(THINK + ARGS) });
  // Priced with the cache rates: (12·3 + 90000·0.3 + 300·3.75)/1e6 input, not 90312·3/1e6.
  const cost = computeCost(priceFor("anthropic", "claude-sonnet-4-6"), usage);
  t.is(cost.inputCost, 0.028161);
  t.is(cost.cachedInputCost, 0.027);
  t.is(cost.outputCost, (estimateTokens(THINK + ARGS) * 15) / 1e6);
});

test("anthropic stream cut: 1-hour cache writes kept; an error event mid-stream keeps the input too", (t) => {
  const start = anthropicEvent({
    type: "message_start",
    message: { model: "claude-sonnet-4-6", usage: { input_tokens: 5, cache_creation_input_tokens: 400, cache_creation: { ephemeral_1h_input_tokens: 100 }, output_tokens: 1 } },
  });
  const facts = observe(anthropicAdapter, [
    start,
    anthropicEvent({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
    anthropicEvent({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Partial answer" } }),
    anthropicEvent({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }),
  ]);
  t.is(facts.errorMessage, "Overloaded");
  t.deepEqual(facts.partialUsage, { inputTokens: 405, cachedInputTokens: 0, cacheWriteTokens: 400, cacheWriteLongTokens: 100 });
  t.deepEqual(settled(facts).usage, { inputTokens: 405, cachedInputTokens: 0, cacheWriteTokens: 400, cacheWriteLongTokens: 100, outputTokens: estimateTokens("Partial answer") });
});

test("anthropic stream complete: message_delta usage is final, no partial usage", (t) => {
  const facts = observe(anthropicAdapter, [
    MESSAGE_START,
    ...ANTHROPIC_BLOCKS,
    anthropicEvent({ type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 88 } }),
    anthropicEvent({ type: "message_stop" }),
  ]);
  t.deepEqual(facts.usage, { inputTokens: 90312, outputTokens: 88, cachedInputTokens: 90000, cacheWriteTokens: 300 });
  t.is(facts.partialUsage, undefined);
  t.deepEqual(settled(facts), { usage: facts.usage!, estimated: false });
});

test("anthropic stream without any usage: everything counted locally, tool input and thinking included", (t) => {
  const facts = observe(anthropicAdapter, ANTHROPIC_BLOCKS);
  t.is(facts.partialUsage, undefined);
  t.deepEqual(settled(facts).usage, { inputTokens: PROMPT_TOKENS, outputTokens: estimateTokens(THINK + ARGS), cachedInputTokens: 0, cacheWriteTokens: 0 });
});

test("anthropic parseResponse: thinking blocks and tool_use input are uncounted output", (t) => {
  const input = JSON.parse(ARGS) as unknown;
  const json = {
    type: "message",
    model: "claude-sonnet-4-6",
    content: [
      { type: "thinking", thinking: THINK, signature: "sig" },
      { type: "redacted_thinking", data: "opaque" },
      { type: "text", text: "Let me check." },
      { type: "tool_use", id: "toolu_1", name: "get_weather", input },
      { type: "tool_use", id: "toolu_2", name: "no_args", input: {} },
    ],
  };
  const facts = anthropicAdapter.parseResponse(json);
  t.is(facts.completionText, "Let me check.");
  t.is(facts.uncountedOutputText, THINK + ARGS);
  t.is(settled(facts).usage.outputTokens, estimateTokens("Let me check.") + estimateTokens(THINK + ARGS));
});

test("anthropic inputExtrasText: the JSON of tools only", (t) => {
  const tools = [{ name: "get_weather", description: "Forecast", input_schema: { type: "object", properties: { city: { type: "string" } } } }];
  t.is(anthropicAdapter.inputExtrasText?.({ model: "m", system: "S", tool_choice: { type: "auto" }, messages: [], tools }), JSON.stringify(tools));
  t.is(anthropicAdapter.inputExtrasText?.({ model: "m", messages: [] }), "");
});

// ---- Google ----

test("google stream: thought parts and functionCall args count as output when usageMetadata is missing", (t) => {
  const args = JSON.parse(ARGS) as unknown;
  const chunk = (parts: unknown[], finishReason?: string) =>
    `data: ${JSON.stringify({ candidates: [{ index: 0, content: { role: "model", parts }, ...(finishReason ? { finishReason } : {}) }], modelVersion: "gemini-2.5-flash" })}\r\n\r\n`;
  const facts = observe(googleAdapter, [chunk([{ text: THINK, thought: true }]), chunk([{ functionCall: { name: "get_weather", args } }], "STOP")]);
  t.is(facts.usage, undefined);
  t.is(facts.completionText, "");
  t.deepEqual(facts.toolCalls, [{ name: "get_weather" }]);
  t.is(facts.uncountedOutputText, THINK + ARGS);
  t.is(settled(facts).usage.outputTokens, estimateTokens(THINK + ARGS));
});

test("google parseResponse: one answer or a buffered array of chunks; thought text and functionCall args uncounted", (t) => {
  const args = JSON.parse(ARGS) as unknown;
  const one = {
    candidates: [{ content: { parts: [{ text: THINK, thought: true }, { text: "Here." }, { functionCall: { name: "get_weather", args } }] }, finishReason: "STOP" }],
  };
  const facts = googleAdapter.parseResponse(one);
  t.is(facts.completionText, "Here.");
  t.is(facts.uncountedOutputText, THINK + ARGS);
  const array = googleAdapter.parseResponse([{ candidates: [{ content: { parts: [{ text: THINK, thought: true }] } }] }, { candidates: [{ content: { parts: [{ functionCall: { name: "f", args } }] } }] }]);
  t.is(array.uncountedOutputText, THINK + ARGS);
  t.is(googleAdapter.parseResponse({ candidates: [{ content: { parts: [{ text: "Only text" }] } }] }).uncountedOutputText, undefined);
});

test("google inputExtrasText: the JSON of tools and toolConfig, nothing else", (t) => {
  const tools = [{ functionDeclarations: [{ name: "get_weather", description: "Forecast", parameters: { type: "OBJECT", properties: { city: { type: "STRING" } } } }] }];
  const toolConfig = { functionCallingConfig: { mode: "AUTO" } };
  const body = { contents: [{ role: "user", parts: [{ text: "Hi" }] }], systemInstruction: { parts: [{ text: "S" }] }, tools, toolConfig };
  t.is(googleAdapter.inputExtrasText?.(body), `${JSON.stringify(tools)}\n${JSON.stringify(toolConfig)}`);
  t.is(googleAdapter.inputExtrasText?.({ contents: [] }), "");
});

// ---- Cohere ----

test("cohere stream: tool plan and tool-call argument deltas count as output when message-end has no usage", (t) => {
  const ev = (type: string, rest: Record<string, unknown>) => sse({ type, ...rest }, type);
  const events = [
    ev("message-start", { id: "m", delta: { message: { role: "assistant", content: [], tool_plan: "", tool_calls: [], citations: [] } } }),
    ...pieces(PLAN, 16).map((tool_plan) => ev("tool-plan-delta", { delta: { message: { tool_plan } } })),
    ev("tool-call-start", { index: 0, delta: { message: { tool_calls: { id: "tc_1", type: "function", function: { name: "get_weather", arguments: "" } } } } }),
    ...pieces(ARGS).map((a) => ev("tool-call-delta", { index: 0, delta: { message: { tool_calls: { function: { arguments: a } } } } })),
    ev("tool-call-end", { index: 0 }),
    ev("message-end", { delta: { finish_reason: "TOOL_CALL" } }),
  ];
  const facts = observe(cohereAdapter, events);
  t.is(facts.usage, undefined);
  t.deepEqual(facts.toolCalls, [{ name: "get_weather", id: "tc_1" }]);
  t.is(facts.uncountedOutputText, PLAN + ARGS);
  t.is(settled(facts).usage.outputTokens, estimateTokens(PLAN + ARGS));
});

test("cohere stream: thinking content deltas count as output, not as answer text", (t) => {
  const ev = (type: string, rest: Record<string, unknown>) => sse({ type, ...rest }, type);
  const facts = observe(cohereAdapter, [
    ev("content-start", { index: 0, delta: { message: { content: { type: "thinking", thinking: "" } } } }),
    ev("content-delta", { index: 0, delta: { message: { content: { thinking: THINK } } } }),
    ev("content-start", { index: 1, delta: { message: { content: { type: "text", text: "" } } } }),
    ev("content-delta", { index: 1, delta: { message: { content: { text: "Done." } } } }),
  ]);
  t.is(facts.completionText, "Done.");
  t.is(facts.uncountedOutputText, THINK);
});

test("cohere parseResponse: tool_plan, thinking items and tool-call arguments are uncounted output", (t) => {
  const json = {
    id: "r",
    finish_reason: "TOOL_CALL",
    message: {
      role: "assistant",
      content: [{ type: "thinking", thinking: THINK }],
      tool_plan: PLAN,
      tool_calls: [{ id: "tc_1", type: "function", function: { name: "get_weather", arguments: ARGS } }],
    },
  };
  const facts = cohereAdapter.parseResponse(json);
  t.is(facts.uncountedOutputText, THINK + PLAN + ARGS);
  t.is(settled(facts).usage.outputTokens, estimateTokens(THINK + PLAN + ARGS));
});

test("cohere inputExtrasText: the JSON of tools, documents excluded (they are prompt text)", (t) => {
  const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }];
  const body = { model: "command-a-03-2025", documents: ["doc text"], messages: [{ role: "user", content: "Hi" }], tools };
  t.is(cohereAdapter.inputExtrasText?.(body), JSON.stringify(tools));
  t.is(cohereAdapter.inputExtrasText?.({ model: "command-a-03-2025", messages: [] }), "");
});
