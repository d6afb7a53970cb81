// The official cohere-ai v2 client pointed directly at the fake: JSON, SSE, tool calls, native errors.
import test from "ava";
import { Cohere, CohereClientV2, CohereError } from "cohere-ai";
import { startFakeProviders } from "./index.js";
import type { FakeProviders } from "./index.js";

async function withFake(run: (fake: FakeProviders, client: CohereClientV2) => Promise<void>): Promise<void> {
  const fake = await startFakeProviders();
  try {
    await run(fake, new CohereClientV2({ token: "c-test", environment: fake.urls.cohere, maxRetries: 0 }));
  } finally {
    await fake.close();
  }
}

const request = {
  model: "command-a-03-2025",
  messages: [
    { role: "system" as const, content: "Be brief." },
    { role: "user" as const, content: "Say hello." },
  ],
};

test("chat: text, billed usage, Bearer auth and /v2/chat recorded", async (t) => {
  await withFake(async (fake, client) => {
    fake.script({ text: "Hi there!", usage: { inputTokens: 12, outputTokens: 4 } });
    const res = await client.chat(request);
    const first = res.message.content?.[0];
    t.is(first?.type === "text" ? first.text : undefined, "Hi there!");
    t.is(res.finishReason, "COMPLETE");
    t.is(res.usage?.billedUnits?.inputTokens, 12);
    t.is(res.usage?.billedUnits?.outputTokens, 4);
    t.is(res.usage?.tokens?.inputTokens, 12 + 64);
    t.is(fake.requests[0]?.path, "/v2/chat");
    t.is(fake.requests[0]?.headers.authorization, "Bearer c-test");
  });
});

test("chatStream: content deltas rebuild the text; message-end carries usage", async (t) => {
  await withFake(async (fake, client) => {
    fake.script({ text: "Streaming from Cohere.", usage: { inputTokens: 20, outputTokens: 5 }, split: 9, comments: true });
    const stream = await client.chatStream(request);
    let text = "";
    let billedOut: number | undefined;
    const types: string[] = [];
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "content-delta") text += event.delta?.message?.content?.text ?? "";
      if (event.type === "message-end") billedOut = event.delta?.usage?.billedUnits?.outputTokens;
    }
    t.is(text, "Streaming from Cohere.");
    t.is(billedOut, 5);
    t.is(types[0], "message-start");
    t.is(types.at(-1), "message-end");
    t.is((fake.requests[0]?.json as { stream: boolean }).stream, true);
  });
});

test("tool calls: JSON message.tool_calls and streamed tool-call-start events", async (t) => {
  await withFake(async (fake, client) => {
    const toolCalls = [
      { name: "get_weather", arguments: { city: "Toronto" } },
      { name: "get_time", arguments: { tz: "America/Toronto" } },
    ];
    fake.script({ text: "", toolCalls });
    const res = await client.chat(request);
    t.deepEqual(res.message.toolCalls?.map((c) => [c.function?.name, JSON.parse(c.function?.arguments ?? "{}")]), toolCalls.map((c) => [c.name, c.arguments]));
    t.is(res.finishReason, "TOOL_CALL");
    const started: string[] = [];
    let args = "";
    for await (const event of await client.chatStream(request)) {
      if (event.type === "tool-call-start") started.push(event.delta?.message?.toolCalls?.function?.name ?? "");
      if (event.type === "tool-call-delta" && event.index === 0) args += event.delta?.message?.toolCalls?.function?.arguments ?? "";
    }
    t.deepEqual(started, ["get_weather", "get_time"]);
    t.deepEqual(JSON.parse(args), { city: "Toronto" });
  });
});

test("native errors surface as the client's typed errors", async (t) => {
  await withFake(async (fake, client) => {
    const cases = [
      [400, Cohere.BadRequestError],
      [401, Cohere.UnauthorizedError],
      [429, Cohere.TooManyRequestsError],
      [500, Cohere.InternalServerError],
    ] as const;
    for (const [status, type] of cases) {
      fake.script({ error: { status, message: `scripted ${status}` } });
      const err = await t.throwsAsync(client.chat(request));
      t.true(err instanceof type, `status ${status}`);
      t.true(err instanceof CohereError);
      t.is((err as CohereError).statusCode, status);
      t.like((err as CohereError).body, { message: `scripted ${status}` });
    }
  });
});

test("a failed stream ends with message-end carrying finish_reason ERROR and the error text", async (t) => {
  await withFake(async (fake, client) => {
    fake.script({ text: "Half an answer.", streamError: { afterEvents: 3, message: "generation failed" } });
    let end: Cohere.V2ChatStreamResponse | undefined;
    for await (const event of await client.chatStream(request)) if (event.type === "message-end") end = event;
    t.is(end?.type === "message-end" ? end.delta?.finishReason : undefined, "ERROR");
    t.is(end?.type === "message-end" ? end.delta?.error : undefined, "generation failed");
  });
});
