// The official @mistralai/mistralai SDK pointed directly at the fake: JSON, SSE, tool calls, native errors.
import { Mistral } from "@mistralai/mistralai";
import { HTTPValidationError, MistralError } from "@mistralai/mistralai/models/errors";
import test from "ava";
import { startFakeProviders } from "./index.js";
import type { FakeProviders } from "./index.js";

async function withFake(run: (fake: FakeProviders, client: Mistral) => Promise<void>): Promise<void> {
  const fake = await startFakeProviders();
  try {
    await run(fake, new Mistral({ apiKey: "m-test", serverURL: fake.urls.mistral }));
  } finally {
    await fake.close();
  }
}

const request = {
  model: "mistral-small-latest",
  messages: [
    { role: "system" as const, content: "Be brief." },
    { role: "user" as const, content: "Say hello." },
  ],
};

test("chat.complete: text, usage, Bearer auth and body recorded", async (t) => {
  await withFake(async (fake, client) => {
    fake.script({ text: "Bonjour!", usage: { inputTokens: 17, outputTokens: 3 } });
    const res = await client.chat.complete(request);
    t.is(res.choices[0]?.message?.content, "Bonjour!");
    t.is(res.choices[0]?.finishReason, "stop");
    t.is(res.usage.promptTokens, 17);
    t.is(res.usage.completionTokens, 3);
    t.is(fake.requests[0]?.path, "/v1/chat/completions");
    t.is(fake.requests[0]?.headers.authorization, "Bearer m-test");
    t.like(fake.requests[0]?.json, { model: "mistral-small-latest", messages: request.messages });
  });
});

test("chat.stream: deltas rebuild the text and the last chunk carries usage", async (t) => {
  await withFake(async (fake, client) => {
    fake.script({ text: "Streaming from Mistral.", usage: { inputTokens: 25, outputTokens: 6 }, split: "byte", comments: true });
    const stream = await client.chat.stream(request);
    let text = "";
    let promptTokens: number | undefined;
    for await (const event of stream) {
      const content = event.data.choices[0]?.delta.content;
      if (typeof content === "string") text += content;
      if (event.data.usage) promptTokens = event.data.usage.promptTokens;
    }
    t.is(text, "Streaming from Mistral.");
    t.is(promptTokens, 25);
    t.is((fake.requests[0]?.json as { stream: boolean }).stream, true);
  });
});

test("tool calls arrive whole, in JSON and in one stream delta", async (t) => {
  await withFake(async (fake, client) => {
    const toolCalls = [
      { name: "get_weather", arguments: { city: "Nice" } },
      { name: "get_time", arguments: { tz: "Europe/Paris" } },
    ];
    fake.script({ text: "", toolCalls });
    const res = await client.chat.complete(request);
    const calls = res.choices[0]?.message?.toolCalls ?? [];
    t.deepEqual(calls.map((c) => [c.function.name, JSON.parse(String(c.function.arguments))]), toolCalls.map((c) => [c.name, c.arguments]));
    t.is(res.choices[0]?.finishReason, "tool_calls");
    const names: string[] = [];
    for await (const event of await client.chat.stream(request)) {
      for (const call of event.data.choices[0]?.delta.toolCalls ?? []) names.push(call.function.name);
    }
    t.deepEqual(names, ["get_weather", "get_time"]);
  });
});

test("native errors surface as MistralError with the status (422 as HTTPValidationError)", async (t) => {
  await withFake(async (fake, client) => {
    for (const status of [400, 401, 429, 500] as const) {
      fake.script({ error: { status } });
      const err = await t.throwsAsync(client.chat.complete(request));
      t.true(err instanceof MistralError, `status ${status}`);
      t.is((err as MistralError).statusCode, status);
    }
    fake.script({ error: { status: 422 } });
    const err = await t.throwsAsync(client.chat.complete(request));
    t.true(err instanceof HTTPValidationError);
  });
});

test("a mid-stream error object makes the SDK stream fail", async (t) => {
  await withFake(async (fake, client) => {
    fake.script({ text: "Half an answer.", streamError: { afterEvents: 2, message: "Internal server error" } });
    const stream = await client.chat.stream(request);
    await t.throwsAsync(async () => {
      for await (const _event of stream) {
        // consume
      }
    });
  });
});
