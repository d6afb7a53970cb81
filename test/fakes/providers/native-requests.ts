// Test helper: a native chat request (path, headers, body) for each provider, as its SDK would send it.
import type { FakeProviderName } from "./types.js";

export interface NativeRequest {
  /** Native path + query to append to the provider's base URL. */
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

const WEATHER_TOOL_SCHEMA = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };

export function nativeRequest(provider: FakeProviderName, options: { stream?: boolean; tools?: boolean; model?: string } = {}): NativeRequest {
  const stream = options.stream === true;
  switch (provider) {
    case "openai":
    case "mistral": {
      const body: Record<string, unknown> = {
        model: options.model ?? (provider === "openai" ? "gpt-4o" : "mistral-small-latest"),
        messages: [
          { role: "system", content: "You are terse." },
          { role: "user", content: "What is the weather in Paris?" },
        ],
      };
      if (stream) body.stream = true;
      if (stream && provider === "openai") body.stream_options = { include_usage: true };
      if (options.tools) body.tools = [{ type: "function", function: { name: "get_weather", parameters: WEATHER_TOOL_SCHEMA } }];
      return { path: "/v1/chat/completions", headers: { authorization: "Bearer test-key" }, body };
    }
    case "anthropic": {
      const body: Record<string, unknown> = {
        model: options.model ?? "claude-sonnet-4-6",
        max_tokens: 512,
        system: "You are terse.",
        messages: [{ role: "user", content: "What is the weather in Paris?" }],
      };
      if (stream) body.stream = true;
      if (options.tools) body.tools = [{ name: "get_weather", input_schema: WEATHER_TOOL_SCHEMA }];
      return { path: "/v1/messages", headers: { "x-api-key": "test-key", "anthropic-version": "2023-06-01" }, body };
    }
    case "google": {
      const model = options.model ?? "gemini-2.5-flash";
      const body: Record<string, unknown> = {
        systemInstruction: { parts: [{ text: "You are terse." }] },
        contents: [{ role: "user", parts: [{ text: "What is the weather in Paris?" }] }],
      };
      if (options.tools) body.tools = [{ functionDeclarations: [{ name: "get_weather", parameters: WEATHER_TOOL_SCHEMA }] }];
      const path = stream ? `/v1beta/models/${model}:streamGenerateContent?alt=sse` : `/v1beta/models/${model}:generateContent`;
      return { path, headers: { "x-goog-api-key": "test-key" }, body };
    }
    case "cohere": {
      const body: Record<string, unknown> = {
        model: options.model ?? "command-a-03-2025",
        messages: [
          { role: "system", content: "You are terse." },
          { role: "user", content: "What is the weather in Paris?" },
        ],
      };
      if (stream) body.stream = true;
      if (options.tools) body.tools = [{ type: "function", function: { name: "get_weather", parameters: WEATHER_TOOL_SCHEMA } }];
      return { path: "/v2/chat", headers: { authorization: "Bearer test-key" }, body };
    }
  }
}
