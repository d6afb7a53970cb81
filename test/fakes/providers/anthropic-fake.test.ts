// The official @anthropic-ai/sdk pointed directly at the fake: JSON, SSE (raw and MessageStream), tool use, native errors.
import Anthropic from "@anthropic-ai/sdk";
import test from "ava";
import { startFakeProviders } from "./index.js";
import type { FakeProviders } from "./index.js";

async function withFake(run: (fake: FakeProviders, client: Anthropic) => Promise<void>): Promise<void> {
  const fake = await startFakeProviders();
  try {
    await run(fake, new Anthropic({ apiKey: "sk-ant-test", baseURL: fake.urls.anthropic, maxRetries: 0 }));
  } finally {
    await fake.close();
  }
}

const request = {
  model: "claude-sonnet-4-6",
  max_tokens: 256,
  system: "Be brief.",
  messages: [{ role: "user" as const, content: "Say hello." }],
};

test("JSON message: text, usage split across cache fields, credential and anthropic-version recorded", async (t) => {
  await withFake(async (fake, client) => {
    fake.script({ text: "Hello!", usage: { inputTokens: 120, outputTokens: 9, cachedInputTokens: 80, cacheWriteTokens: 30 } });
    const { data, response } = await client.messages.create(request).withResponse();
    t.deepEqual(data.content, [{ type: "text", text: "Hello!" }]);
    t.is(data.stop_reason, "end_turn");
    t.is(data.usage.input_tokens, 10);
    t.is(data.usage.cache_read_input_tokens, 80);
    t.is(data.usage.cache_creation_input_tokens, 30);
    t.is(data.usage.output_tokens, 9);
    t.regex(response.headers.get("request-id") ?? "", /^req_/);
    // SDK 1.x sends the API key as Authorization: Bearer (x-api-key is accepted too, see below)
    t.is(fake.requests[0]?.headers.authorization, "Bearer sk-ant-test");
    t.is(typeof fake.requests[0]?.headers["anthropic-version"], "string");
  });
});

test("raw SSE events: message_start, ping, text deltas, message_delta usage, message_stop", async (t) => {
  await withFake(async (fake, client) => {
    fake.script({ text: "Streamed hello.", usage: { inputTokens: 50, outputTokens: 6 } });
    const stream = await client.messages.create({ ...request, stream: true });
    const types: string[] = [];
    let text = "";
    let output = 0;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "content_block_delta" && event.delta.type === "text_delta") text += event.delta.text;
      if (event.type === "message_delta") output = event.usage.output_tokens;
    }
    t.is(text, "Streamed hello.");
    t.is(output, 6);
    t.is(types[0], "message_start");
    t.is(types.at(-1), "message_stop");
  });
});

test("MessageStream helper accumulates text and tool_use input across split chunks and pings", async (t) => {
  await withFake(async (fake, client) => {
    const toolCalls = [{ name: "get_weather", arguments: { city: "Lyon", days: 3 } }];
    fake.script({ text: "Let me check.", toolCalls, split: 5, comments: true, crlf: true, usage: { inputTokens: 40, outputTokens: 22 } });
    const final = await client.messages.stream(request).finalMessage();
    t.is(final.stop_reason, "tool_use");
    const [textBlock, toolBlock] = final.content;
    t.like(textBlock, { type: "text", text: "Let me check." });
    t.is(toolBlock?.type, "tool_use");
    if (toolBlock?.type === "tool_use") {
      t.is(toolBlock.name, "get_weather");
      t.deepEqual(toolBlock.input, { city: "Lyon", days: 3 });
      t.regex(toolBlock.id, /^toolu_01/);
    }
    t.is(final.usage.output_tokens, 22);
    t.is(final.usage.input_tokens, 40);
  });
});

test("native errors surface as the SDK's typed errors with the error type", async (t) => {
  await withFake(async (fake, client) => {
    const cases = [
      [400, Anthropic.BadRequestError, "invalid_request_error"],
      [401, Anthropic.AuthenticationError, "authentication_error"],
      [429, Anthropic.RateLimitError, "rate_limit_error"],
      [500, Anthropic.InternalServerError, "api_error"],
      [529, Anthropic.InternalServerError, "overloaded_error"],
    ] as const;
    for (const [status, type, errorType] of cases) {
      fake.script({ error: { status } });
      const err = await t.throwsAsync(client.messages.create(request));
      t.true(err instanceof type, `status ${status}`);
      const apiErr = err as InstanceType<typeof Anthropic.APIError>;
      t.is(apiErr.status, status);
      t.is((apiErr.error as { error: { type: string } }).error.type, errorType);
    }
  });
});

test("a request without anthropic-version is refused as the real API does", async (t) => {
  await withFake(async (fake) => {
    const res = await fetch(`${fake.urls.anthropic}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "k" }, // a credential, but no version
      body: JSON.stringify(request),
    });
    t.is(res.status, 400);
    t.like(await res.json(), { type: "error", error: { type: "invalid_request_error" } });
  });
});

test("x-api-key authentication is accepted as well", async (t) => {
  await withFake(async (fake) => {
    const res = await fetch(`${fake.urls.anthropic}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "k", "anthropic-version": "2023-06-01" },
      body: JSON.stringify(request),
    });
    t.is(res.status, 200);
    t.like(await res.json(), { type: "message", role: "assistant" });
  });
});

test("a mid-stream error event makes the SDK throw", async (t) => {
  await withFake(async (fake, client) => {
    fake.script({ text: "Partial answer then failure.", streamError: { afterEvents: 4, message: "Overloaded" } });
    const stream = await client.messages.create({ ...request, stream: true });
    const err = await t.throwsAsync(async () => {
      for await (const _event of stream) {
        // consume
      }
    });
    t.true(err instanceof Anthropic.APIError);
    t.regex(err?.message ?? "", /Overloaded/);
  });
});
