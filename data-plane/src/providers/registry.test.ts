// Registry and cross-provider contracts: names, base URLs, auth headers, the prompt-redaction invariant.
import test from "ava";
import { nativeRequest } from "../../../test/fakes/providers/index.js";
import { estimateTokens, getProvider, isProviderName, PROVIDERS } from "./index.js";

test("the five providers, in a fixed order, each with its adapter", (t) => {
  t.deepEqual([...PROVIDERS], ["openai", "anthropic", "google", "mistral", "cohere"]);
  for (const name of PROVIDERS) t.is(getProvider(name)?.name, name);
  t.is(getProvider("azure"), undefined);
  t.is(getProvider("OpenAI"), undefined);
  t.false(isProviderName("bedrock"));
});

test("default base URLs are origins without an API version (DESIGN §11); native credential headers", (t) => {
  const expected = {
    openai: ["https://api.openai.com", ["authorization"]],
    anthropic: ["https://api.anthropic.com", ["x-api-key", "authorization"]],
    google: ["https://generativelanguage.googleapis.com", ["x-goog-api-key", "authorization"]],
    mistral: ["https://api.mistral.ai", ["authorization"]],
    cohere: ["https://api.cohere.com", ["authorization"]],
  } as const;
  for (const name of PROVIDERS) {
    const adapter = getProvider(name)!;
    t.is(adapter.defaultBaseUrl, expected[name][0]);
    t.deepEqual([...adapter.authHeaders], [...expected[name][1]]);
  }
});

test("for every provider, promptParts(mapPromptText(b, f)) = promptParts(b).map(f) and fn runs once per part in order", (t) => {
  for (const name of PROVIDERS) {
    for (const tools of [false, true]) {
      const adapter = getProvider(name)!;
      const { body } = nativeRequest(name, { tools });
      const calls: string[] = [];
      const f = (s: string) => {
        calls.push(s);
        return `<${s.length}:${s.split("").reverse().join("")}>`;
      };
      const mapped = adapter.mapPromptText(body, f);
      const parts = adapter.promptParts(body);
      t.deepEqual(calls, parts, name);
      t.deepEqual(adapter.promptParts(mapped), parts.map((s) => `<${s.length}:${s.split("").reverse().join("")}>`), name);
      t.is(adapter.promptText(body), "You are terse.\n\nWhat is the weather in Paris?", name);
      t.notDeepEqual(mapped, body);
    }
  }
});

test("every governed spec path resolves for every provider", (t) => {
  for (const name of PROVIDERS) {
    const target = getProvider(name)!.resolve("/chat/completions", "", { model: "m", stream: false, messages: [], contents: [] });
    t.truthy(target, name);
    t.false(target?.stream ?? true);
    t.is(target?.model, "m");
  }
});

test("estimateTokens counts o200k tokens", (t) => {
  t.is(estimateTokens(""), 0);
  t.is(estimateTokens("Hello world, this is a test."), 8);
  t.true(estimateTokens("word ".repeat(1000)) >= 1000);
  // Text that spells a special token is ordinary text (o200k_base encode_ordinary: tiktoken gives 9 and 13).
  t.is(estimateTokens("a <|endoftext|> b"), 9);
  t.is(estimateTokens("<|endofprompt|><|fim_prefix|>x"), 13);
});
