// prices.json: metadata, coverage of the five providers, rate validity, validation errors.
import test from "ava";
import { computeCost, PRICE_TABLE, PriceTableError, priceFor, validatePriceTable } from "./index.js";

test("the table names its version, date and per-provider source", (t) => {
  t.regex(PRICE_TABLE.version, /^2026-11/);
  t.is(PRICE_TABLE.date, "2026-11");
  t.is(PRICE_TABLE.currency, "USD");
  for (const p of ["openai", "anthropic", "google", "mistral", "cohere"] as const) {
    t.true(PRICE_TABLE.source[p].length > 10, p);
    t.true(PRICE_TABLE.models.filter((m) => m.provider === p).length >= 4, `${p} has current models`);
  }
});

test("cached rates never exceed input rates; long-context rates are higher than base", (t) => {
  for (const m of PRICE_TABLE.models) {
    if (m.cachedInput !== undefined) t.true(m.cachedInput <= m.input, m.model);
    if (m.longContext) {
      t.true(m.longContext.input > m.input, m.model);
      t.true(m.longContext.output >= m.output, m.model);
    }
    if (m.provider === "anthropic") {
      t.is(m.cacheWriteLong, m.input * 2, `${m.model}: 1-hour writes are 2× input`);
      t.truthy(m.cacheWrite, m.model);
    }
  }
});

test("validation rejects malformed tables with a typed error", (t) => {
  const base = structuredClone(PRICE_TABLE);
  const bad = (mutate: (x: typeof base) => void) => {
    const copy = structuredClone(base);
    mutate(copy);
    const err = t.throws(() => validatePriceTable(copy));
    t.true(err instanceof PriceTableError);
    t.is((err as PriceTableError).code, "invalid_price_table");
  };
  bad((x) => {
    x.models[0]!.input = -1;
  });
  bad((x) => {
    x.models[0]!.output = 0.1234567;
  });
  bad((x) => {
    x.models.push({ ...x.models[0]! });
  });
  bad((x) => {
    (x.source as Record<string, string | undefined>).cohere = undefined;
  });
  bad((x) => {
    x.models[0]!.longContext = { aboveInputTokens: 0, input: 1, output: 1 };
  });
  t.notThrows(() => validatePriceTable(structuredClone(base)));
});

test("embedding models bill input only: output 0 is a valid rate, and an embeddings call costs its input", (t) => {
  const embedding = PRICE_TABLE.models.filter((m) => /embed/.test(m.model));
  t.deepEqual(embedding.map((m) => m.model).sort(), [
    "codestral-embed",
    "embed-english-light-v3.0",
    "embed-english-v3.0",
    "embed-multilingual-light-v3.0",
    "embed-multilingual-v3.0",
    "embed-v4.0",
    "gemini-embedding-001",
    "gemini-embedding-2",
    "gemini-embedding-2-preview",
    "mistral-embed",
    "text-embedding-3-large",
    "text-embedding-3-small",
    "text-embedding-ada-002",
  ]);
  for (const m of embedding) {
    t.is(m.output, 0, m.model);
    t.true(m.input > 0, m.model);
  }
  const copy = structuredClone(PRICE_TABLE);
  copy.models[0]!.output = 0;
  t.notThrows(() => validatePriceTable(copy));
  const cost = computeCost(priceFor("openai", "text-embedding-3-small"), { inputTokens: 1_000_000, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0 });
  t.is(cost.totalCost, 0.02);
  t.is(cost.outputCost, 0);
  t.false(cost.priceMissing);
});
