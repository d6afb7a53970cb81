// priceFor(): exact names, aliases, dated snapshots, -latest aliases, the Gemini models/ prefix, unknown names.
import test from "ava";
import { PRICE_TABLE, PriceTableError, priceFor, validatePriceTable } from "./index.js";

const matches: [string, string, string][] = [
  ["openai", "gpt-4o", "gpt-4o"],
  ["openai", "gpt-4o-2024-11-20", "gpt-4o"],
  ["openai", "gpt-4o-2024-08-06", "gpt-4o"],
  ["openai", "gpt-4o-2024-05-13", "gpt-4o-2024-05-13"],
  ["openai", "gpt-4o-mini-2024-07-18", "gpt-4o-mini"],
  ["openai", "GPT-4.1-2025-04-14", "gpt-4.1"],
  ["openai", "o3-2025-04-16", "o3"],
  ["openai", "gpt-5.4-2026-03-05", "gpt-5.4"],
  ["openai", "gpt-5-chat-latest", "gpt-5"],
  ["openai", "gpt-5.6-sol", "gpt-5.6"],
  ["anthropic", "claude-sonnet-4-5-20250929", "claude-sonnet-4-5"],
  ["anthropic", "claude-opus-4-1-20250805", "claude-opus-4-1"],
  ["anthropic", "claude-haiku-4-5-20251001", "claude-haiku-4-5"],
  ["anthropic", "claude-3-5-haiku-latest", "claude-3-5-haiku"],
  ["anthropic", "claude-3-7-sonnet-latest", "claude-3-7-sonnet"],
  ["anthropic", "claude-opus-4-20250514", "claude-opus-4"],
  ["anthropic", "claude-opus-4-0", "claude-opus-4"],
  ["anthropic", "claude-sonnet-4-0", "claude-sonnet-4"],
  ["google", "gemini-2.5-flash", "gemini-2.5-flash"],
  ["google", "models/gemini-2.5-flash", "gemini-2.5-flash"],
  ["google", "models/gemini-2.0-flash-001", "gemini-2.0-flash"],
  ["google", "gemini-2.5-flash-lite", "gemini-2.5-flash-lite"],
  ["google", "gemini-3.7-flash", "gemini-3.8-flash"],
  ["google", "models/gemini-3.1-pro-preview-customtools", "gemini-3.1-pro-preview"],
  ["anthropic", "claude-opus-5-5", "claude-opus-5-5"],
  ["anthropic", "claude-haiku-5-5", "claude-haiku-5-5"],
  ["openai", "gpt-6.1-sol-2026-09-29", "gpt-6.1-sol"],
  ["openai", "gpt-6-luna", "gpt-6-luna"],
  ["mistral", "mistral-small-2603", "mistral-small-latest"],
  ["mistral", "mistral-small-2506", "mistral-small-2506"],
  ["mistral", "ministral-14b-latest", "ministral-3-14b-2512"],
  ["mistral", "mistral-large-latest", "mistral-large-latest"],
  ["mistral", "mistral-large-2512", "mistral-large-latest"],
  ["mistral", "mistral-large-2411", "mistral-large-2411"],
  ["mistral", "codestral-2508", "codestral-latest"],
  ["cohere", "command-r", "command-r-03-2024"],
  ["cohere", "command-r-plus", "command-r-plus-04-2024"],
  ["cohere", "command-r-08-2024", "command-r-08-2024"],
  ["cohere", "command-a-03-2025", "command-a-03-2025"],
  ["openai", "text-embedding-3-small", "text-embedding-3-small"],
  ["openai", "text-embedding-3-large", "text-embedding-3-large"],
  ["openai", "text-embedding-ada-002", "text-embedding-ada-002"],
  ["google", "models/gemini-embedding-001", "gemini-embedding-001"],
  ["mistral", "mistral-embed", "mistral-embed"],
  ["mistral", "mistral-embed-2312", "mistral-embed"],
  ["mistral", "codestral-embed-2505", "codestral-embed"],
  ["cohere", "embed-v4.0", "embed-v4.0"],
  ["cohere", "embed-multilingual-light-v3.0", "embed-multilingual-light-v3.0"],
];

for (const [provider, model, entry] of matches) {
  test(`${provider} ${model} → ${entry}`, (t) => {
    const price = priceFor(provider, model);
    t.is(price?.model, entry);
    t.is(price?.provider as string | undefined, provider);
    t.regex(price?.version ?? "", /^2026-11/);
  });
}

test("snapshot prices that differ from the alias are kept apart", (t) => {
  t.is(priceFor("openai", "gpt-4o-2024-05-13")?.input, 5);
  t.is(priceFor("openai", "gpt-4o-2024-11-20")?.input, 2.5);
  t.is(priceFor("mistral", "mistral-large-2411")?.input, 2);
  t.is(priceFor("mistral", "mistral-large-latest")?.input, 0.5);
});

test("unknown models, providers and names that only look alike are not priced", (t) => {
  t.is(priceFor("openai", "gpt-unknown-9"), undefined);
  t.is(priceFor("openai", ""), undefined);
  t.is(priceFor("azure", "gpt-4o"), undefined);
  t.is(priceFor("anthropic", "gpt-4o"), undefined, "a model is priced under its own provider only");
  t.is(priceFor("openai", "gpt-4o-mini-tts"), undefined, "no prefix matching");
  t.is(priceFor("openai", "models/gpt-4o"), undefined, "models/ is stripped for Gemini only");
  t.is(priceFor("google", "gemini-2.5-flash-preview-05-20"), undefined, "previews are not folded into the stable price");
  // Moving aliases whose target is not known: the answer's modelVersion prices the call.
  t.is(priceFor("google", "gemini-flash-latest"), undefined);
  t.is(priceFor("google", "gemini-flash-lite-latest"), undefined);
});

test("a price announced to change on a date applies from that UTC day; the name's entries never overlap", (t) => {
  const day = (iso: string) => Date.parse(`${iso}Z`);
  t.like(priceFor("google", "gemini-4-argon", day("2026-11-30T23:59:59.999")), { input: 2, output: 10, cachedInput: 0.1, validUntil: "2026-11-30" });
  t.like(priceFor("google", "gemini-4-argon", day("2026-12-01T00:00:00")), { input: 4, output: 20, cachedInput: 0.2 });
  t.is(priceFor("google", "gemini-4-argon", day("2026-12-01T00:00:00"))?.validUntil, undefined);
  t.like(priceFor("google", "gemini-3.8-flash", day("2027-01-01T00:00:00")), { input: 1.5, output: 7.5 });
  t.like(priceFor("google", "models/gemini-3.8-flash-001", day("2026-12-31T12:00:00")), { input: 0.75, output: 3.75 });
});

test("validation: a name's price periods must not overlap, and are UTC days", (t) => {
  const table = (mutate: (models: typeof PRICE_TABLE.models) => void) => {
    const copy = structuredClone(PRICE_TABLE);
    mutate(copy.models);
    return () => validatePriceTable(copy);
  };
  const argon = (m: typeof PRICE_TABLE.models) => m.filter((e) => e.model === "gemini-4-argon");
  t.throws(table((m) => void (argon(m)[1]!.validFrom = "2026-11-30")), { instanceOf: PriceTableError, message: /gemini-4-argon \(periods overlap\)/ });
  t.throws(table((m) => void delete argon(m)[0]!.validUntil), { message: /periods overlap/ });
  t.throws(table((m) => void (argon(m)[1]!.validFrom = "1 Dec 2026")), { message: /must be a day/ });
  t.throws(table((m) => void (argon(m)[0]!.validFrom = "2026-12-05")), { message: /validFrom after validUntil/ });
  t.notThrows(table((m) => void (argon(m)[1]!.validFrom = "2026-12-02")), "a gap between periods is allowed (no price on those days)");
});

test("the returned price is a copy: mutating it does not change the table", (t) => {
  const tiered = priceFor("openai", "gpt-4o")!;
  tiered.tiers!.priority!.input = 999;
  t.is(priceFor("openai", "gpt-4o")?.tiers?.priority?.input, 4.25);
  const price = priceFor("google", "gemini-2.5-pro")!;
  price.input = 999;
  price.longContext!.input = 999;
  t.is(priceFor("google", "gemini-2.5-pro")?.input, 1.25);
  t.is(priceFor("google", "gemini-2.5-pro")?.longContext?.input, 2.5);
});

test("models only the Responses API serves are priced (pro, codex, deep research, computer use)", (t) => {
  t.like(priceFor("openai", "o1-pro"), { input: 150, output: 600 });
  t.like(priceFor("openai", "gpt-5.5-pro"), { input: 30, output: 180 });
  t.like(priceFor("openai", "gpt-5-pro-2025-10-06"), { model: "gpt-5-pro", input: 15, output: 120 });
  t.like(priceFor("openai", "o4-mini-deep-research"), { input: 2, output: 8, cachedInput: 0.5 });
  t.like(priceFor("openai", "computer-use-preview"), { input: 3, output: 12 });
});
