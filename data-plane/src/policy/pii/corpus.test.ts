// Corpus-level quality gate: exact-span precision/recall per type over the labelled fixtures,
// plus checks that the committed generated corpus matches its seeded generator.

import { readFileSync } from "node:fs";
import test from "ava";
import { loadGeneratedCorpus, loadHandWrittenCorpus, loadPiiCorpus } from "./fixtures/corpus.js";
import { evaluateCorpus } from "./fixtures/evaluate.js";
import { GENERATED_CORPUS_PATH, generateCorpus, serializeCorpus } from "./fixtures/generate-corpus.js";
import type { PiiType } from "./types.js";

const CHECKSUM_BACKED: readonly PiiType[] = ["ssn", "credit_card", "iban", "us_bank_routing", "ip_address", "email"];

test("corpus size: ≥ 500 positives, ≥ 500 hard negatives, ≥ 60 hand-written rows", (t) => {
  const rows = loadPiiCorpus();
  t.true(rows.filter((r) => r.kind === "positive").length >= 500);
  t.true(rows.filter((r) => r.kind === "negative").length >= 500);
  t.true(loadHandWrittenCorpus().length >= 60);
  for (const r of rows) {
    if (r.kind === "negative") t.is(r.entities.length, 0, r.id);
    else t.true(r.entities.length > 0, r.id);
  }
});

test("committed generated corpus is what the seeded generator produces", (t) => {
  t.is(readFileSync(GENERATED_CORPUS_PATH, "utf8"), serializeCorpus(generateCorpus()));
  t.is(loadGeneratedCorpus().length, generateCorpus().length);
});

test("precision and recall ≥ 0.95 for the checksum-backed types", (t) => {
  const { perType, mismatches } = evaluateCorpus(loadPiiCorpus());
  for (const type of CHECKSUM_BACKED) {
    const m = perType[type];
    t.true(m.tp > 50, `${type} has enough positives`);
    t.true(m.precision >= 0.95, `${type} precision ${m.precision.toFixed(3)}`);
    t.true(m.recall >= 0.95, `${type} recall ${m.recall.toFixed(3)}`);
  }
  t.log(`${mismatches.length} rows with a mismatch`);
});

test("context-gated and heuristic types stay ≥ 0.9 on the corpus", (t) => {
  const { perType } = evaluateCorpus(loadPiiCorpus());
  for (const type of ["phone", "us_passport", "api_key", "date_of_birth"] as const) {
    t.true(perType[type].precision >= 0.9, `${type} precision ${perType[type].precision}`);
    t.true(perType[type].recall >= 0.9, `${type} recall ${perType[type].recall}`);
  }
});
