// The cheaper quality scorers give exactly the scores of their straightforward forms (kept here as
// references): the hoisted-`\b` refusal regex, the char-code stemmer, the early-exit relevance scan
// and the completion words shared by relevance and non_repetition.
import test from "ava";
import { qualityScores } from "./quality-scores.js";
import { REFUSAL_PHRASES, refusalScore } from "./refusal.js";
import { relevanceScore, RELEVANCE_SATURATION } from "./relevance.js";
import { nonRepetitionScore } from "./non-repetition.js";
import { ASKS_FOR_JSON_RE, asksForJson } from "./format-validity.js";
import { STOPWORDS, stem } from "./stopwords.js";
import { scanWords, words } from "./tokenize.js";
import { answerTermsByHash, hashTerm } from "./ascii-terms.js";
import { createRng } from "../pii/fixtures/prng.js";

// ---- references: the scorers as first written ----

const REF_REFUSAL_RE = new RegExp(REFUSAL_PHRASES.map((p) => `\\b${p}`).join("|"), "iu");

function refStem(w: string): string {
  if (w.length <= 4) return w;
  if (w.endsWith("ies") && w.length > 5) return w.slice(0, -3) + "y";
  if (w.endsWith("ing") && w.length > 6) return w.slice(0, -3);
  if (w.endsWith("ed") && w.length > 5) return w.slice(0, -2);
  if (w.length > 5 && /(?:s|x|z|ch|sh)es$/.test(w)) return w.slice(0, -2);
  if (w.endsWith("s") && !w.endsWith("ss")) return w.slice(0, -1);
  return w;
}

function refContentTerms(text: string, limit: number): Set<string> {
  const out = new Set<string>();
  for (const w of words(text)) {
    if (w.length < 2 || STOPWORDS.has(w)) continue;
    out.add(refStem(w));
    if (out.size >= limit) break;
  }
  return out;
}

function refRelevance(prompt: string, completion: string): number {
  const answer = refContentTerms(completion, Number.POSITIVE_INFINITY);
  if (answer.size === 0) return completion.trim().length === 0 ? 0 : 1;
  const asked = refContentTerms(prompt, 400);
  if (asked.size === 0) return 1;
  let shared = 0;
  for (const t of asked) if (answer.has(t)) shared++;
  const score = shared / Math.min(asked.size, RELEVANCE_SATURATION);
  return score > 1 ? 1 : score;
}

/** distinct word trigrams / trigrams, with one joined string per trigram. */
function refNonRepetition(w: readonly string[]): number {
  const total = w.length - 2;
  if (total <= 0) return 1;
  const seen = new Set<string>();
  for (let i = 0; i < total; i++) seen.add(`${w[i]}\u0000${w[i + 1]}\u0000${w[i + 2]}`);
  return seen.size / total;
}

// ---- random texts ----

/** The project's seeded PRNG (mulberry32), so that a failure reproduces. */
function rng(seed: number): () => number {
  return createRng(seed).next;
}

const VOCAB = [
  "deploy", "deploying", "deployed", "deploys", "stories", "story", "boxes", "box", "churches", "wishes", "buzzes", "class", "classes",
  "pass", "flies", "ties", "bed", "red", "sing", "king", "bring", "thing", "running", "used", "series", "kiss", "is", "as", "us",
  "the", "a", "of", "and", "to", "I", "I'm", "am", "sorry", "but", "can't", "cannot", "help", "with", "that", "request", "As", "an", "AI",
  "language", "model", "Leider", "kann", "ich", "das", "nicht", "je", "ne", "peux", "pas", "aider", "lo", "siento", "no", "puedo",
  "mi", "dispiace", "non", "posso", "não", "het", "spijt", "me", "ik", "helpen", "Sorry,", "I’m", "don’t", "İstanbul", "ſorry", "K",
  "données", "Straße", "日本語", "テスト", "😀", "x1", "42", "3.14", "json", "JSON", "{\"a\":1}", "—", ",", ".", "\n", "  ",
];

function text(r: () => number, maxWords: number): string {
  const n = Math.floor(r() * maxWords);
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(VOCAB[Math.floor(r() * VOCAB.length)]!);
  return out.join(r() < 0.8 ? " " : "  ");
}

test("stem: the char-code dispatch equals the rule list on every word of a corpus", (t) => {
  const r = rng(7);
  const letters = "abcdefghiesngdxzchs";
  const corpus = new Set(VOCAB.map((w) => w.toLowerCase()));
  for (let i = 0; i < 20_000; i++) {
    let w = "";
    const n = 1 + Math.floor(r() * 9);
    for (let k = 0; k < n; k++) w += letters[Math.floor(r() * letters.length)];
    corpus.add(w);
  }
  for (const suffix of ["ies", "ing", "ed", "es", "ses", "xes", "zes", "ches", "shes", "s", "ss", "d", "g"]) {
    for (let len = 0; len < 8; len++) corpus.add("b".repeat(len) + suffix);
  }
  for (const w of corpus) t.is(stem(w), refStem(w), w);
});

test("refusal: the hoisted \\b regex finds the same refusals at the same places", (t) => {
  const r = rng(11);
  const samples = [
    "I'm sorry, but I can't help with that request.", "Well... As an AI, I cannot do it", "Leider kann ich das nicht tun",
    "ſorry, maar ik kan je niet helpen", "xI cannot help", "K I CANNOT HELP", "Paris is the capital of France.",
    `${"Here is a long answer. ".repeat(20)}I must decline the rest.`, "",
  ];
  const refusals = [
    "I'm sorry, but I can't help", "I am afraid that cannot", "I won't assist", "I'm unable to provide", "I must refuse",
    "I need to decline", "as an AI language model, I don't", "your request violates our policies", "I'm not going to write",
    "es tut mir leid, aber ich kann das nicht", "ich kann dir dabei nicht helfen", "désolée, je ne peux", "je ne peux pas t'aider",
    "lo siento, no puedo", "no puedo ayudarte", "mi dispiace, non posso", "non posso aiutarti", "sinto muito, não consigo",
    "não posso ajudar", "het spijt me, ik kan je niet helpen", "ſorry, ik kan niet doen",
  ];
  const flipCase = (s: string) => [...s].map((c) => (r() < 0.2 ? (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()) : c)).join("");
  for (let i = 0; i < 3000; i++) {
    if (r() < 0.5) samples.push(text(r, 40));
    else samples.push(`${text(r, r() < 0.2 ? 80 : 5)}${r() < 0.2 ? "x" : " "}${flipCase(refusals[Math.floor(r() * refusals.length)]!)} ${text(r, r() < 0.2 ? 120 : 10)}`);
  }
  for (const s of samples) {
    const want = REF_REFUSAL_RE.exec(s);
    let score = 1;
    if (want !== null) {
      const leading = s.length - s.trimStart().length;
      score = want.index - leading > 200 ? 0.75 : s.trim().length <= 400 ? 0 : 0.5;
    }
    t.is(refusalScore(s), score, JSON.stringify(s));
  }
  t.true(samples.filter((s) => REF_REFUSAL_RE.test(s)).length > 50, "the random texts contain refusals");
});

test("relevance: the early-exit scan equals the whole-prompt computation", (t) => {
  const r = rng(13);
  let saturated = 0;
  for (let i = 0; i < 3000; i++) {
    const prompt = r() < 0.05 ? text(r, 3000) : text(r, 120);
    const completion = text(r, 30);
    const want = refRelevance(prompt, completion);
    t.is(relevanceScore(prompt, completion), want, `${JSON.stringify(prompt.slice(0, 60))} / ${JSON.stringify(completion)}`);
    t.is(relevanceScore(prompt, completion, words(completion)), want);
    if (want === 1) saturated++;
  }
  t.true(saturated > 100 && saturated < 2900, `a mix of saturated and partial scores (${saturated} of 3000 saturate)`);
  // More than MAX_PROMPT_TERMS distinct terms: only the first 400 count.
  const many = Array.from({ length: 500 }, (_, k) => `term${k}x`).join(" ");
  for (const c of ["term450x", "term10x term450x", "term1x term2x term3x"]) t.is(relevanceScore(many, c), refRelevance(many, c), c);
});

test("relevance: the in-place scan of ASCII prompts equals the whole-prompt computation (case, apostrophes, stems, digits, stop words)", (t) => {
  const r = rng(41);
  const ascii = [...VOCAB.filter((w) => /^[\x00-\x7f]*$/.test(w)), "DEPLOYING", "Stories", "CHURCHES", "Wishes", "quizzes", "taxes", "ashes", "aches",
    "bus", "buses", "dies", "ties", "lies", "spies", "Let's", "IT'S", "don't", "o'clock", "rock'n'roll", "x'", "'quoted'", "v2", "2fa", "ok", "OK"];
  const seps = [" ", "  ", ", ", ". ", "\n", "-", "'", "/", "_"];
  const asciiText = (max: number) => {
    const n = Math.floor(r() * max);
    let s = "";
    for (let i = 0; i < n; i++) s += ascii[Math.floor(r() * ascii.length)]! + seps[Math.floor(r() * seps.length)]!;
    return s;
  };
  let partial = 0;
  for (let i = 0; i < 4000; i++) {
    const prompt = r() < 0.05 ? asciiText(2000) : asciiText(100);
    const completion = r() < 0.5 ? asciiText(30) : text(r, 30);
    const want = refRelevance(prompt, completion);
    t.is(relevanceScore(prompt, completion), want, `${JSON.stringify(prompt.slice(0, 80))} / ${JSON.stringify(completion)}`);
    if (want > 0 && want < 1) partial++;
  }
  t.true(partial > 500, `partial scores are covered (${partial})`);
  // a non-ASCII character late in a long prompt: the string form takes over, same score
  const long = `${asciiText(600)} naïve ${asciiText(50)}`;
  t.is(relevanceScore(long, "deploy stories"), refRelevance(long, "deploy stories"));
});

test("relevance: terms whose hashes collide are still told apart", (t) => {
  // two different words with the same FNV-1a hash
  const seen = new Map<number, string>();
  let pair: [string, string] | undefined;
  for (let k = 0; pair === undefined; k++) {
    const w = `q${k.toString(36)}z`;
    const h = hashTerm(w);
    const other = seen.get(h);
    if (other !== undefined) pair = [other, w];
    else seen.set(h, w);
  }
  const [a, b] = pair;
  t.not(a, b);
  t.is(hashTerm(a), hashTerm(b));
  t.is(answerTermsByHash([a, b]), null, "an answer with both terms is scored as strings");
  // in the prompt: two distinct terms, of which the answer has one
  for (const [prompt, completion] of [[`${a} ${b}`, a], [`${a} ${b}`, b], [`${b} ${a} ${a}`, a], [`${a} ${b}`, `${a} ${b}`], [`${a.toUpperCase()} ${b}`, b]] as const) {
    t.is(relevanceScore(prompt, completion), refRelevance(prompt, completion), `${prompt} / ${completion}`);
  }
  t.is(relevanceScore(`${a} ${b}`, a), 0.5);
});

test("scanWords yields the words of words() and stops when asked", (t) => {
  const r = rng(17);
  for (let i = 0; i < 500; i++) {
    const s = text(r, 50);
    const got: string[] = [];
    scanWords(s, (w) => (got.push(w), false));
    t.deepEqual(got, words(s));
    const firstTwo: string[] = [];
    scanWords(s, (w) => (firstTwo.push(w), firstTwo.length >= 2));
    t.deepEqual(firstTwo, words(s).slice(0, 2));
  }
});

test("scanWords on long texts (taken in chunks) yields the words of words(): mixed scripts, Greek final sigma, runs without whitespace", (t) => {
  const r = rng(31);
  const extra = ["ΟΔΟΣ", "ΣΟΦΟΣ.", "Σ", "x".repeat(1500), "a-b-c-".repeat(300), "İSTANBUL", "\n", "\t"];
  for (let i = 0; i < 200; i++) {
    const parts: string[] = [];
    const n = 100 + Math.floor(r() * 1200);
    for (let k = 0; k < n; k++) parts.push(r() < 0.03 ? extra[Math.floor(r() * extra.length)]! : VOCAB[Math.floor(r() * VOCAB.length)]!);
    const s = parts.join(r() < 0.5 ? " " : r() < 0.5 ? "\n" : "");
    const got: string[] = [];
    scanWords(s, (w) => (got.push(w), false));
    t.deepEqual(got, words(s), `text of ${s.length} characters`);
    const stopAt = Math.floor(r() * got.length);
    const some: string[] = [];
    scanWords(s, (w) => (some.push(w), some.length > stopAt));
    t.deepEqual(some, words(s).slice(0, stopAt + 1));
  }
});

test("scanWords' ASCII scanner yields exactly the regex's words (apostrophes, digits, case, punctuation)", (t) => {
  const r = rng(23);
  const alphabet = "abcXYZ09'' .,-_\n\t\"!?;:()[]{}$@#%^&*+=/\\|~`<>";
  let withApostrophe = 0;
  for (let i = 0; i < 5000; i++) {
    let s = "";
    const n = Math.floor(r() * 60);
    for (let k = 0; k < n; k++) s += alphabet[Math.floor(r() * alphabet.length)]!;
    const got: string[] = [];
    scanWords(s, (w) => (got.push(w), false));
    t.deepEqual(got, words(s), JSON.stringify(s));
    if (got.some((w) => w.includes("'"))) withApostrophe++;
  }
  t.true(withApostrophe > 100, `words with an apostrophe are covered (${withApostrophe})`);
});

test("qualityScores shares the completion's words: same scores as each scorer on its own", (t) => {
  const r = rng(19);
  for (let i = 0; i < 500; i++) {
    const prompt = text(r, 80);
    const completion = text(r, 60);
    const scores = Object.fromEntries(qualityScores({ prompt, completion, finishReason: "stop", status: "success" }).map((q) => [q.scorer, q.score]));
    t.is(scores.relevance, refRelevance(prompt, completion));
    t.is(scores.non_repetition, nonRepetitionScore(completion));
    t.is(scores.refusal, refusalScore(completion));
  }
});

test("non_repetition: numbered trigrams give the joined strings' score (repeats, loops, long answers, the string fallback)", (t) => {
  const r = rng(29);
  let repetitive = 0;
  for (let i = 0; i < 2000; i++) {
    const base = words(text(r, r() < 0.1 ? 600 : 40));
    // a loop: a stretch of the answer repeated a few times, as degenerate answers do
    const w = r() < 0.3 && base.length > 3 ? [...base, ...Array.from({ length: 1 + Math.floor(r() * 4) }, () => base.slice(0, 3 + Math.floor(r() * (base.length - 3)))).flat()] : base;
    const want = refNonRepetition(w);
    t.is(nonRepetitionScore(w.join(" "), w), want);
    if (want < 0.9) repetitive++;
  }
  t.true(repetitive > 100, `repetitive answers are covered (${repetitive})`);
  // Past 208,063 words the trigram number could pass 2^53: the joined strings are used instead.
  const huge = Array.from({ length: 210_000 }, (_, k) => `w${(k * 7919) % 50_021}`);
  t.is(nonRepetitionScore("", huge), refNonRepetition(huge));
});

test("asksForJson: the json/_format prefilter answers as the full regex (case, word boundaries, look-alike letters)", (t) => {
  const r = rng(37);
  const pieces = ["json", "JSON", "Json", "jsonl", "xjson", "json_object", "JSON_SCHEMA", "response_format", "RESPONSE_FORMAT", "response-format", "_format", "ĵson", "jſon", "KJSON", " ", "\n", ".", "format", "respond", "js on"];
  let asks = 0;
  for (let i = 0; i < 5000; i++) {
    const parts: string[] = [];
    const n = 1 + Math.floor(r() * 8);
    for (let k = 0; k < n; k++) parts.push(r() < 0.4 ? pieces[Math.floor(r() * pieces.length)]! : VOCAB[Math.floor(r() * VOCAB.length)]!);
    const s = parts.join(r() < 0.7 ? " " : "");
    const want = ASKS_FOR_JSON_RE.test(s);
    t.is(asksForJson(s), want, JSON.stringify(s));
    if (want) asks++;
  }
  t.true(asks > 500 && asks < 4500, `a mix of prompts that ask for JSON and that do not (${asks} of 5000)`);
});
