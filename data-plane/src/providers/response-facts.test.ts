// parseResponse / streamObserver over the exact bytes the fake providers send: usage, text, tool
// names and cost come out identical for JSON and SSE, for any chunking, comments or CRLF.
import test from "ava";
import { nativeRequest, rawRequest, startFakeProviders } from "../../../test/fakes/providers/index.js";
import type { FakeProviders, FakeScript, FakeUsage, RawResponse } from "../../../test/fakes/providers/index.js";
import { computeCost, priceFor } from "../pricing/index.js";
import { getProvider, PROVIDERS } from "./index.js";
import type { ProviderName, ResponseFacts, Usage } from "./index.js";

const USAGE: FakeUsage = { inputTokens: 1200, outputTokens: 345, cachedInputTokens: 200, cacheWriteTokens: 100, cacheWriteLongTokens: 40, reasoningTokens: 45 };
const TEXT = "Sunny, 21 °C in Paris — enjoy ☀️.";
const TOOLS = [
  { name: "get_weather", arguments: { city: "Paris", unit: "celsius" } },
  { name: "get_forecast", arguments: { city: "Paris", days: 3 } },
];

/** The usage each adapter must report for USAGE, per its provider's conventions (see types.ts). */
const EXPECTED_USAGE: Record<ProviderName, Usage> = {
  openai: { inputTokens: 1200, outputTokens: 345, cachedInputTokens: 200, cacheWriteTokens: 100 },
  anthropic: { inputTokens: 1200, outputTokens: 345, cachedInputTokens: 200, cacheWriteTokens: 100, cacheWriteLongTokens: 40 },
  google: { inputTokens: 1200, outputTokens: 345, cachedInputTokens: 200, cacheWriteTokens: 0 },
  mistral: { inputTokens: 1200, outputTokens: 345, cachedInputTokens: 200, cacheWriteTokens: 0 },
  cohere: { inputTokens: 1200, outputTokens: 345, cachedInputTokens: 200, cacheWriteTokens: 0 },
};

/** Costs computed by hand from prices.json for EXPECTED_USAGE (see the comments for the arithmetic). */
const EXPECTED_COST: Record<ProviderName, { model: string; inputCost: number; outputCost: number; totalCost: number }> = {
  // gpt-4o 2.5/10, cached 1.25, writes at input: (900·2.5 + 200·1.25 + 100·2.5)/1e6, 345·10/1e6
  openai: { model: "gpt-4o", inputCost: 0.00275, outputCost: 0.00345, totalCost: 0.0062 },
  // claude-sonnet-4-6 3/15, read 0.3, 5m write 3.75, 1h write 6: (900·3 + 200·0.3 + 60·3.75 + 40·6)/1e6, 345·15/1e6
  anthropic: { model: "claude-sonnet-4-6", inputCost: 0.003225, outputCost: 0.005175, totalCost: 0.0084 },
  // gemini-2.5-flash 0.3/2.5, cached 0.03: (1000·0.3 + 200·0.03)/1e6, 345·2.5/1e6
  google: { model: "gemini-2.5-flash", inputCost: 0.000306, outputCost: 0.0008625, totalCost: 0.0011685 },
  // mistral-small-latest (Mistral Small 4) 0.15/0.6, no cached rate: 1200·0.15/1e6, 345·0.6/1e6
  mistral: { model: "mistral-small-latest", inputCost: 0.00018, outputCost: 0.000207, totalCost: 0.000387 },
  // command-a-03-2025 2.5/10: 1200·2.5/1e6, 345·10/1e6
  cohere: { model: "command-a-03-2025", inputCost: 0.003, outputCost: 0.00345, totalCost: 0.00645 },
};

async function call(fake: FakeProviders, provider: ProviderName, stream: boolean, tools: boolean, script: FakeScript): Promise<RawResponse> {
  fake.script(script);
  const req = nativeRequest(provider, { stream, tools });
  return rawRequest(fake.urls[provider] + req.path, { body: req.body, headers: req.headers });
}

/** Runs an observer over the given pieces. */
function observe(provider: ProviderName, pieces: Uint8Array[]): ResponseFacts {
  const observer = getProvider(provider)!.streamObserver();
  for (const p of pieces) observer.push(p);
  return observer.end();
}

function bytesOneByOne(bytes: Uint8Array): Uint8Array[] {
  return Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1));
}

for (const provider of PROVIDERS) {
  for (const tools of [false, true]) {
    const script: FakeScript = { text: TEXT, usage: USAGE, ...(tools ? { toolCalls: TOOLS } : {}) };
    const label = `${provider}${tools ? " with tools" : ""}`;

    test(`${label}: JSON answer → usage, text, tool names, cost`, async (t) => {
      const fake = await startFakeProviders();
      try {
        const res = await call(fake, provider, false, tools, script);
        t.is(res.status, 200);
        const facts = getProvider(provider)!.parseResponse(JSON.parse(res.text));
        t.deepEqual(facts.usage, EXPECTED_USAGE[provider]);
        t.is(facts.completionText, TEXT);
        t.deepEqual(facts.toolCalls.map((c) => c.name), tools ? TOOLS.map((c) => c.name) : []);
        if (provider !== "google") t.true(facts.toolCalls.every((c) => typeof c.id === "string" && c.id.length > 0));
        t.is(facts.errorMessage, undefined);
        const expected = EXPECTED_COST[provider];
        const cost = computeCost(priceFor(provider, facts.model ?? expected.model), facts.usage!);
        t.like(cost, { inputCost: expected.inputCost, outputCost: expected.outputCost, totalCost: expected.totalCost, priceMissing: false });
      } finally {
        await fake.close();
      }
    });

    test(`${label}: SSE stream → the same facts as received, byte by byte, and with comments/CRLF/odd splits`, async (t) => {
      const fake = await startFakeProviders();
      try {
        const plain = await call(fake, provider, true, tools, script);
        t.is(plain.status, 200);
        t.regex(String(plain.headers["content-type"]), /^text\/event-stream/);
        const asReceived = observe(provider, plain.chunks);
        const byteByByte = observe(provider, bytesOneByOne(plain.bytes));
        const noisy = await call(fake, provider, true, tools, { ...script, comments: true, crlf: true, split: 3 });
        const noisyFacts = observe(provider, noisy.chunks);
        for (const facts of [asReceived, byteByByte, noisyFacts]) {
          t.deepEqual(facts.usage, EXPECTED_USAGE[provider]);
          t.is(facts.completionText, TEXT);
          t.deepEqual(facts.toolCalls.map((c) => c.name), tools ? TOOLS.map((c) => c.name) : []);
          t.is(facts.errorMessage, undefined);
        }
        t.deepEqual(byteByByte, asReceived);
        const expected = EXPECTED_COST[provider];
        const cost = computeCost(priceFor(provider, asReceived.model ?? expected.model), asReceived.usage!);
        t.like(cost, { inputCost: expected.inputCost, outputCost: expected.outputCost, totalCost: expected.totalCost });
      } finally {
        await fake.close();
      }
    });
  }

  test(`${provider}: a truncated stream has no usage (the sidecar then estimates) but keeps the partial text`, async (t) => {
    const fake = await startFakeProviders();
    try {
      for (const abrupt of [false, true]) {
        const res = await call(fake, provider, true, false, { text: TEXT, usage: USAGE, truncate: { afterEvents: 5, abrupt } });
        const facts = observe(provider, res.chunks);
        t.is(facts.usage, undefined, `abrupt=${abrupt}`);
        t.true(TEXT.startsWith(facts.completionText));
        t.true(facts.completionText.length > 0);
      }
    } finally {
      await fake.close();
    }
  });

  test(`${provider}: a mid-stream provider error is reported`, async (t) => {
    const fake = await startFakeProviders();
    try {
      const res = await call(fake, provider, true, false, { text: TEXT, streamError: { afterEvents: 3, message: "backend went away" } });
      const facts = observe(provider, res.chunks);
      t.is(facts.errorMessage, "backend went away");
      t.is(facts.usage, undefined);
    } finally {
      await fake.close();
    }
  });

  test(`${provider}: native error bodies (400/401/429/500) give errorMessage`, async (t) => {
    const fake = await startFakeProviders();
    try {
      for (const status of [400, 401, 429, 500] as const) {
        const res = await call(fake, provider, false, false, { error: { status, message: `scripted failure ${status}` } });
        t.is(res.status, status);
        const facts = getProvider(provider)!.parseResponse(JSON.parse(res.text));
        t.is(facts.errorMessage, `scripted failure ${status}`);
        t.is(facts.usage, undefined);
      }
    } finally {
      await fake.close();
    }
  });
}

test("openai: a stream without stream_options.include_usage has no usage", async (t) => {
  const fake = await startFakeProviders({ text: TEXT, usage: USAGE });
  try {
    const req = nativeRequest("openai", { stream: true });
    delete req.body.stream_options;
    const res = await rawRequest(fake.urls.openai + req.path, { body: req.body, headers: req.headers });
    const facts = observe("openai", res.chunks);
    t.is(facts.usage, undefined);
    t.is(facts.completionText, TEXT);
    t.is(facts.finishReason, "stop");
  } finally {
    await fake.close();
  }
});

test("google: streamGenerateContent without alt=sse (JSON array) is observed too, and parseResponse takes the array", async (t) => {
  const fake = await startFakeProviders({ text: TEXT, usage: USAGE, toolCalls: TOOLS, split: 5 });
  try {
    const req = nativeRequest("google", { stream: true, tools: true });
    const res = await rawRequest(fake.urls.google + req.path.replace("?alt=sse", ""), { body: req.body, headers: req.headers });
    t.regex(String(res.headers["content-type"]), /^application\/json/);
    for (const facts of [observe("google", res.chunks), getProvider("google")!.parseResponse(JSON.parse(res.text))]) {
      t.deepEqual(facts.usage, EXPECTED_USAGE.google);
      t.is(facts.completionText, TEXT);
      t.deepEqual(facts.toolCalls.map((c) => c.name), TOOLS.map((c) => c.name));
      t.is(facts.model, "gemini-2.5-flash");
    }
  } finally {
    await fake.close();
  }
});

test("finish reasons and models are reported in each provider's own terms", async (t) => {
  const fake = await startFakeProviders({ text: "", toolCalls: TOOLS, model: "snapshot-2026-01-01" });
  try {
    const expected: Record<ProviderName, string> = { openai: "tool_calls", anthropic: "tool_use", google: "STOP", mistral: "tool_calls", cohere: "TOOL_CALL" };
    for (const provider of PROVIDERS) {
      const req = nativeRequest(provider, { stream: true, tools: true });
      const res = await rawRequest(fake.urls[provider] + req.path, { body: req.body, headers: req.headers });
      const facts = observe(provider, res.chunks);
      t.is(facts.finishReason, expected[provider], provider);
      t.is(facts.completionText, "", provider);
      if (provider !== "cohere") t.is(facts.model, "snapshot-2026-01-01", provider);
    }
  } finally {
    await fake.close();
  }
});
