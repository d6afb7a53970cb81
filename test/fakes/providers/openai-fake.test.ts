// The official openai SDK pointed directly at the fake: JSON, SSE, tool calls and native errors work.
import test from "ava";
import OpenAI from "openai";
import { startFakeProviders } from "./index.js";
import type { FakeProviders } from "./index.js";

async function withFake(run: (fake: FakeProviders, client: OpenAI) => Promise<void>): Promise<void> {
  const fake = await startFakeProviders();
  try {
    await run(fake, new OpenAI({ apiKey: "sk-test", baseURL: `${fake.urls.openai}/v1`, maxRetries: 0 }));
  } finally {
    await fake.close();
  }
}

const messages = [
  { role: "system" as const, content: "Be brief." },
  { role: "user" as const, content: "Say hello." },
];

test("JSON completion: text, usage, request recorded with auth and body", async (t) => {
  await withFake(async (fake, client) => {
    fake.script({ text: "Hello there!", usage: { inputTokens: 21, outputTokens: 4, cachedInputTokens: 5 } });
    const { data, response } = await client.chat.completions.create({ model: "gpt-4o", messages }).withResponse();
    t.is(data.choices[0]?.message.content, "Hello there!");
    t.is(data.choices[0]?.finish_reason, "stop");
    t.is(data.usage?.prompt_tokens, 21);
    t.is(data.usage?.completion_tokens, 4);
    t.is(data.usage?.prompt_tokens_details?.cached_tokens, 5);
    t.regex(response.headers.get("x-request-id") ?? "", /^req_/);
    const recorded = fake.requests[0];
    t.is(recorded?.path, "/v1/chat/completions");
    t.is(recorded?.headers.authorization, "Bearer sk-test");
    t.deepEqual((recorded?.json as { messages: unknown }).messages, messages);
  });
});

test("SSE stream with include_usage: deltas rebuild the text, usage arrives in a last chunk with no choices", async (t) => {
  await withFake(async (fake, client) => {
    fake.script({ text: "Streaming works.", usage: { inputTokens: 30, outputTokens: 7 } });
    const stream = await client.chat.completions.create({ model: "gpt-4o-mini", messages, stream: true, stream_options: { include_usage: true } });
    let text = "";
    let usage: OpenAI.CompletionUsage | null | undefined;
    let lastChoices = -1;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.usage) usage = chunk.usage;
      lastChoices = chunk.choices.length;
    }
    t.is(text, "Streaming works.");
    t.is(usage?.prompt_tokens, 30);
    t.is(usage?.completion_tokens, 7);
    t.is(lastChoices, 0);
  });
});

test("stream without include_usage carries no usage", async (t) => {
  await withFake(async (_fake, client) => {
    const stream = await client.chat.completions.create({ model: "gpt-4o", messages, stream: true });
    let sawUsage = false;
    for await (const chunk of stream) if (chunk.usage) sawUsage = true;
    t.false(sawUsage);
  });
});

test("tool calls: JSON and the SDK's stream accumulator agree on names and arguments", async (t) => {
  await withFake(async (fake, client) => {
    const toolCalls = [
      { name: "get_weather", arguments: { city: "Paris", unit: "celsius" } },
      { name: "get_time", arguments: { tz: "Europe/Paris" } },
    ];
    fake.script({ text: "", toolCalls, split: 7, comments: true });
    const json = await client.chat.completions.create({ model: "gpt-4o", messages });
    const calls = json.choices[0]?.message.tool_calls ?? [];
    t.deepEqual(
      calls.map((c) => (c.type === "function" ? [c.function.name, JSON.parse(c.function.arguments)] : [])),
      toolCalls.map((c) => [c.name, c.arguments]),
    );
    t.is(json.choices[0]?.finish_reason, "tool_calls");

    const runner = client.chat.completions.stream({ model: "gpt-4o", messages });
    const final = await runner.finalChatCompletion();
    const streamed = final.choices[0]?.message.tool_calls ?? [];
    t.deepEqual(
      streamed.map((c) => (c.type === "function" ? [c.function.name, JSON.parse(c.function.arguments)] : [])),
      toolCalls.map((c) => [c.name, c.arguments]),
    );
    t.true(streamed.every((c) => /^call_/.test(c.id)));
  });
});

test("byte-split stream with keep-alive comments and CRLF still parses", async (t) => {
  await withFake(async (fake, client) => {
    fake.script({ text: "Split into bytes, héllo ✓.", split: "byte", comments: true, crlf: true });
    const stream = await client.chat.completions.create({ model: "gpt-4o", messages, stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    t.is(text, "Split into bytes, héllo ✓.");
  });
});

test("native errors surface as the SDK's typed errors", async (t) => {
  await withFake(async (fake, client) => {
    const cases = [
      [400, OpenAI.BadRequestError],
      [401, OpenAI.AuthenticationError],
      [429, OpenAI.RateLimitError],
      [500, OpenAI.InternalServerError],
    ] as const;
    for (const [status, type] of cases) {
      fake.script({ error: { status, message: `scripted ${status}` } });
      const err = await t.throwsAsync(client.chat.completions.create({ model: "gpt-4o", messages }));
      t.true(err instanceof type, `status ${status}`);
      t.is((err as InstanceType<typeof OpenAI.APIError>).status, status);
      t.regex(err?.message ?? "", new RegExp(`scripted ${status}`));
    }
  });
});

test("a missing API key is a native 401", async (t) => {
  await withFake(async (fake) => {
    const res = await fetch(`${fake.urls.openai}/v1/chat/completions`, { method: "POST", body: JSON.stringify({ model: "gpt-4o", messages }), headers: { "content-type": "application/json" } });
    t.is(res.status, 401);
    const body = (await res.json()) as { error: { type: string } };
    t.is(body.error.type, "invalid_request_error");
  });
});

test("a mid-stream error chunk makes the SDK throw while iterating", async (t) => {
  await withFake(async (fake, client) => {
    fake.script({ text: "This answer breaks halfway.", streamError: { afterEvents: 3, message: "upstream exploded" } });
    const stream = await client.chat.completions.create({ model: "gpt-4o", messages, stream: true });
    let text = "";
    const err = await t.throwsAsync(async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    });
    t.regex(err?.message ?? "", /upstream exploded/);
    t.is(text, "This ans"); // role chunk, "This", " ans", then the error
  });
});
