// Benchmark of the policy engine as the sidecar runs it per request: PII scan, injection score,
// evaluation of 3 PII policies + an injection policy + a keyword policy + a regex policy, and inbound
// redaction of the native body, on 1 KB and 8 KB prompts; and the outbound stream governor on a
// streamed answer (cost per event, text held back).
// Run: node --import tsx bench/policy-engine.ts  → bench/results/policy-engine.json and .md
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { create, AgentSchema, PolicySchema, PolicyConditionsSchema, type Policy } from "@agentgov/proto";
import { detectPii } from "../data-plane/src/policy/pii/index.js";
import { injectionScore } from "../data-plane/src/policy/injection/index.js";
import { evaluatePhase, partRedactor, redactSpans, applyRedaction } from "../data-plane/src/policy/engine/evaluate.js";
import { createStreamGovernor, DEFAULT_MAX_HOLD_CHARS, DEFAULT_SCAN_STEP_CHARS, DEFAULT_WINDOW_CHARS } from "../data-plane/src/policy/stream/index.js";
import { openaiAdapter } from "../data-plane/src/providers/index.js";
import { judgedInput, redactInputExtras, redactPrompt, scanInputExtras } from "../data-plane/src/proxy/governance.js";

const agent = create(AgentSchema, { id: "agt_bench", name: "bench", status: "active", piiDetection: true });
let n = 0;
const policy = (action: string, conditions: Record<string, unknown>, direction = "inbound"): Policy =>
  create(PolicySchema, { id: `pol_${++n}`, name: `p${n}`, status: "active", action, priority: n, conditions: create(PolicyConditionsSchema, { direction, ...conditions }) });

const POLICIES: Policy[] = [
  policy("block", { piiTypes: ["ssn", "credit_card"] }),
  policy("redact", { piiTypes: ["email", "phone"] }),
  policy("log", { piiTypes: ["iban", "api_key", "us_bank_routing"] }),
  policy("log", { injectionScoreGte: 0.7 }),
  policy("log", { keywords: ["confidential", "internal only", "do not share", "project falcon", "merger", "layoff", "password", "secret", "salary", "acquisition"] }),
  policy("log", { regex: "order-\\d{6}" }),
];

const PROSE = [
  "Please summarise the attached meeting notes and list the action items for each team.",
  "The quarterly report shows revenue grew 12% to $4.5 million, driven by three new enterprise accounts.",
  "Rewrite this paragraph in a friendlier tone, keeping it under 120 words.",
  "We deployed version 2.4.1 on Tuesday; the rollback plan is in section 3.2 of the runbook.",
  "Explain the difference between a mutex and a semaphore with a short code example in Go.",
  "The customer asked whether the premium plan includes priority support and SSO.",
  "Translate the following product description into German and French.",
  "Our latency p99 went from 480 ms to 230 ms after enabling connection pooling.",
];
const PII_LINES = ["Reach me at jane.doe@example.com or +1 415 555 0132 after five.", "Send the invoice to billing@acme.io, phone (212) 555-0188."];

function prompt(bytes: number, withPii: boolean): string {
  let s = "";
  let i = 0;
  while (s.length < bytes) {
    s += (withPii && i % 6 === 3 ? PII_LINES[i % PII_LINES.length] : PROSE[i % PROSE.length]) + "\n";
    i++;
  }
  return s.slice(0, bytes);
}

function machine(): Record<string, string | number> {
  return { cpu: os.cpus()[0]?.model ?? "unknown", cores: os.cpus().length, memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10, node: process.version, platform: `${os.platform()} ${os.release()}` };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Median µs per call over 9 timed batches after a warm-up, as process CPU time (user + system): the
 * machine is shared, and CPU time is far less sensitive to other load than wall-clock time.
 */
function time(fn: () => void, perBatch: number): number {
  for (let i = 0; i < perBatch; i++) fn();
  const out: number[] = [];
  for (let b = 0; b < 9; b++) {
    const c0 = process.cpuUsage();
    for (let i = 0; i < perBatch; i++) fn();
    const c = process.cpuUsage(c0);
    out.push((c.user + c.system) / perBatch);
  }
  return Math.round(median(out) * 10) / 10;
}

interface RequestRow {
  sizeKB: number;
  workload: string;
  piiFindings: number;
  matched: number;
  piiScanUs: number;
  injectionUs: number;
  evaluateUs: number;
  redactUs: number;
  totalUs: number;
}

function requestRow(sizeKB: number, withPii: boolean): RequestRow {
  const text = prompt(sizeKB * 1024, withPii);
  const body = { model: "gpt-4o", messages: [{ role: "system", content: "You are terse." }, { role: "user", content: text }] };
  const joined = openaiAdapter.promptText(body);
  const per = Math.max(5, Math.round(200 / sizeKB));
  const pii = detectPii(joined);
  const score = injectionScore(joined).score;
  const input = { agent, phase: "inbound" as const, text: joined, model: "gpt-4o", inputTokens: 0, pii, injectionScore: score };
  const outcome = evaluatePhase(POLICIES, input);
  const redact = () => {
    if (outcome.redactors.length === 0) return;
    const spans = redactSpans(joined, outcome.redactors, pii);
    openaiAdapter.mapPromptText(body, partRedactor(joined, spans, (p) => applyRedaction(p, redactSpans(p, outcome.redactors, detectPii(p)))));
  };
  // Each call gets another string than the call before (the same text, one more space): the engine
  // remembers work for the last text it saw (lower-cased copy, keyword scan), which a request never repeats.
  const inputs = [input, { ...input, text: `${joined} ` }];
  let turn = 0;
  const whole = () => {
    const text = inputs[turn++ & 1]!.text;
    const p = detectPii(text);
    const s = injectionScore(text).score;
    const o = evaluatePhase(POLICIES, { ...input, text, pii: p, injectionScore: s });
    if (o.redactors.length > 0) openaiAdapter.mapPromptText(body, partRedactor(text, redactSpans(text, o.redactors, p), (x) => x));
  };
  return {
    sizeKB,
    workload: withPii ? "prose with an email and a phone number every 6 lines (redacted)" : "prose, no PII (nothing matches)",
    piiFindings: pii.length,
    matched: outcome.evaluations.filter((e) => e.result === "fail").length,
    piiScanUs: time(() => detectPii(joined), per),
    injectionUs: time(() => injectionScore(joined), per),
    evaluateUs: time(() => evaluatePhase(POLICIES, inputs[turn++ & 1]!), per * 4),
    redactUs: time(redact, per),
    totalUs: time(whole, per),
  };
}

interface StreamRow {
  answerChars: number;
  deltaChars: number;
  events: number;
  governedUs: number;
  perEventUs: number;
  maxHeldChars: number;
  windowChars: number;
}

function streamRow(answerChars: number, deltaChars: number): StreamRow {
  const text = prompt(answerChars, true);
  const events: Buffer[] = [];
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    Buffer.from(`data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "gpt-4o", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
  events.push(chunk({ role: "assistant", content: "" }, null));
  for (let i = 0; i < text.length; i += deltaChars) events.push(chunk({ content: text.slice(i, i + deltaChars) }, null));
  events.push(chunk({}, "stop"), Buffer.from("data: [DONE]\n\n"));
  const outbound = [policy("redact", { piiTypes: ["email", "phone"] }, "outbound"), policy("block", { piiTypes: ["ssn", "credit_card"] }, "outbound")];
  let held = 0;
  let windowChars = 0;
  const run = () => {
    const g = createStreamGovernor({ wire: "openai", policies: outbound, piiDetection: true, model: "gpt-4o", inputTokens: 0, injectionScore: 0, errorEvent: () => "" })!;
    for (const e of events) g.transform(e);
    g.end();
    held = g.stats().maxHeldChars;
    windowChars = g.windowChars;
  };
  const us = time(run, 5);
  return { answerChars, deltaChars, events: events.length, governedUs: us, perEventUs: Math.round((us / events.length) * 100) / 100, maxHeldChars: held, windowChars };
}

interface KeywordRow {
  lists: number;
  asciiUs: number;
  /** The same text with one zero-width space: the lists' regexes run on a window around it. */
  invisibleUs: number;
}

/** Evaluation of N keyword policies (10 keywords each, none present) on the 8 KB prose prompt. */
function keywordRow(lists: number): KeywordRow {
  const words = POLICIES[4]!.conditions!.keywords;
  const policies = Array.from({ length: lists }, (_, l) => policy("log", { keywords: words.map((w) => `${w} ${l}`) }));
  const text = prompt(8192, false);
  // Between "r" and "e", which "secret" joins: the space opens a window (between two characters no
  // keyword joins, as in "quarter\u200bly", it opens none and the row would measure the ASCII pass).
  const withInvisible = text.replace("revenue", "r\u200bevenue");
  const run = (t: string) => {
    const inputs = [t, `${t} `].map((x) => ({ agent, phase: "inbound" as const, text: x, model: "gpt-4o", inputTokens: 0, pii: [], injectionScore: 0 }));
    let turn = 0;
    return time(() => evaluatePhase(policies, inputs[turn++ & 1]!), 20);
  };
  return { lists, asciiUs: run(text), invisibleUs: run(withInvisible) };
}

/** Five tool definitions as an agent sends them (descriptions, parameter schemas with descriptions and an enum). */
function fiveTools(ssnInOne: boolean): unknown[] {
  const fn = (name: string, description: string, properties: Record<string, unknown>, required: string[]) => ({
    type: "function",
    function: { name, description, parameters: { type: "object", properties, required, additionalProperties: false }, strict: true },
  });
  const str = (description: string) => ({ type: "string", description });
  return [
    fn("get_weather", "Get the current weather for a city. Use it when the user asks about weather, temperature or rain.", { city: str("City name, e.g. Paris"), units: { type: "string", enum: ["metric", "imperial"], description: "Unit system" } }, ["city"]),
    fn("search_docs", "Search the product documentation and return the five most relevant passages with their URLs.", { query: str("What to search for, in the user's words"), product: { type: "string", enum: ["web", "ios", "android", "api"] } }, ["query"]),
    fn("create_ticket", "Open a support ticket for the customer. Confirm the summary with the user before calling.", { summary: str("One-line summary"), details: str("What happened, steps to reproduce"), priority: { type: "string", enum: ["low", "normal", "high", "urgent"], default: "normal" } }, ["summary"]),
    fn("send_email", "Send an email on behalf of the support team. Only to addresses of the customer's account.", { to: { type: "string", format: "email" }, subject: str("Subject line"), body: str("Plain-text body") }, ["to", "subject", "body"]),
    fn("lookup_order", ssnInOne ? "Look up an order by its number, e.g. for customer SSN 536-22-8741." : "Look up an order by its number and return its status, items and shipping dates.", { order: str("Order number such as ORD-123456"), include_items: { type: "boolean", default: true } }, ["order"]),
  ];
}

interface ExtrasRow {
  request: string;
  definitionChars: number;
  /** The hot path's inbound steps (prompt PII, extras scan, injection, evaluation, redaction) for this request. */
  totalUs: number;
  /** The same request with its tool definitions ignored, as before session 26 (they were only copied with the body). */
  toolsIgnoredUs: number;
  extrasScanUs: number;
  toolInjectionUs: number;
}

/**
 * Tool definitions (input outside the prompt, providers/input-extras.ts) on a 1 KB prompt: what the hot
 * path runs, with and without the definitions, and its two new steps alone.
 */
function extrasRow(request: string, tools: unknown[] | undefined, withPii: boolean): ExtrasRow {
  const text = prompt(1024, withPii);
  const bare = { model: "gpt-4o", messages: [{ role: "system", content: "You are terse." }, { role: "user", content: text }] };
  const body = tools ? { ...bare, tools } : bare;
  const steps = (b: unknown, judgeExtras: boolean) => () => {
    const joined = openaiAdapter.promptText(b);
    const pii = detectPii(joined);
    const extras = judgeExtras ? scanInputExtras(openaiAdapter, b, true) : undefined;
    let score = injectionScore(joined).score;
    if (extras) for (const t of extras.toolTexts) score = Math.max(score, injectionScore(t, "tool_definition").score);
    const judged = judgedInput({ text: joined, pii }, extras);
    const o = evaluatePhase(POLICIES, { agent, phase: "inbound", text: judged.text, model: "gpt-4o", inputTokens: 0, pii: judged.pii, injectionScore: score });
    if (o.redactors.length > 0) {
      const copy = redactPrompt(openaiAdapter, b, o.redactors, true, { text: joined, pii });
      if (extras) redactInputExtras(openaiAdapter, copy, o.redactors, true, extras);
    }
  };
  const extras = scanInputExtras(openaiAdapter, body, true);
  return {
    request,
    definitionChars: tools ? JSON.stringify(tools).length : 0,
    totalUs: time(steps(body, true), 200),
    toolsIgnoredUs: time(steps(body, false), 200),
    extrasScanUs: time(() => scanInputExtras(openaiAdapter, body, true), 1000),
    toolInjectionUs: time(() => {
      for (const t of extras?.toolTexts ?? []) injectionScore(t, "tool_definition");
    }, 1000),
  };
}

function main(): void {
  const requests: RequestRow[] = [];
  for (const kb of [1, 8]) for (const pii of [false, true]) requests.push(requestRow(kb, pii));
  const streams = [streamRow(2048, 4), streamRow(8192, 16)];
  const keywords = [1, 5, 20].map(keywordRow);
  const extras = [
    extrasRow("no tools", undefined, false),
    extrasRow("5 typical tools", fiveTools(false), false),
    extrasRow("5 tools, an SSN in one description (blocked by the ssn policy)", fiveTools(true), false),
    extrasRow("5 tools, prompt with emails and phones (redacted)", fiveTools(false), true),
  ];
  const result = {
    benchmark: "policy-engine",
    date: new Date().toISOString(),
    loadAverage1m: Math.round(os.loadavg()[0]! * 100) / 100,
    machine: machine(),
    policies: POLICIES.map((p) => ({ action: p.action, conditions: p.conditions })),
    requests,
    keywords,
    extras,
    streams,
  };
  mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
  writeFileSync(new URL("./results/policy-engine.json", import.meta.url), JSON.stringify(result, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v), 2) + "\n");
  const md = `# Policy engine benchmark

Date: ${result.date}
Load average at start (1 min): ${result.loadAverage1m}
Machine: ${result.machine.cpu}, ${result.machine.cores} cores, ${result.machine.memoryGiB} GiB, Node ${result.machine.node}

## Per request (inbound phase), median CPU µs

Policies: block on ssn/credit_card, redact email/phone, log iban/api_key/us_bank_routing (3 PII
policies), log injection_score_gte 0.7, log 10 keywords, log regex \`order-\\d{6}\`. "total" is what the
hot path runs: PII scan + injection score + evaluation of the 6 policies + redaction of the native body
when a redact policy matched (spans from the whole prompt, cut per message part).

| prompt | workload | PII found | policies matched | PII scan | injection | evaluate | redact | total |
|---|---|---|---|---|---|---|---|---|
${requests.map((r) => `| ${r.sizeKB} KB | ${r.workload} | ${r.piiFindings} | ${r.matched} | ${r.piiScanUs} | ${r.injectionUs} | ${r.evaluateUs} | ${r.redactUs} | ${r.totalUs} |`).join("\n")}

## Keyword policies on an 8 KB prompt, median CPU µs per evaluation

N log policies of 10 keywords each, none in the text. The keyword automaton decides every list in one
pass; around a character a keyword may be written with (here one zero-width space) each list's regex
decides on a window of a few dozen characters.

| keyword policies | ASCII prose | the same with one zero-width space |
|---|---|---|
${keywords.map((k) => `| ${k.lists} | ${k.asciiUs} | ${k.invisibleUs} |`).join("\n")}

## Tool definitions beside a 1 KB prompt, median CPU µs

Input outside the prompt (tool definitions, response schemas, predicted output, names;
\`providers/input-extras.ts\`): judged by the same 6 policies with the prompt, each definition scored for
injection on its own. "total" is the inbound steps above (PII scan, extras scan, injection, evaluation,
redaction) for the request; "tools ignored" the same steps with the definitions ignored, as before
session 26 (a redaction copied them with the body already); "extras scan" is collecting the
definitions' strings and their PII scan, "tool injection" the five definitions' scores.

| request | definitions (JSON chars) | total | tools ignored | extras scan | tool injection |
|---|---|---|---|---|---|
${extras.map((e) => `| ${e.request} | ${e.definitionChars} | ${e.totalUs} | ${e.toolsIgnoredUs} | ${e.extrasScanUs} | ${e.toolInjectionUs} |`).join("\n")}

## Outbound stream governor (OpenAI chunks, redact email/phone + block ssn/credit_card)

| answer | delta size | events | governor CPU µs per answer | CPU µs per event | most chars held | window |
|---|---|---|---|---|---|---|
${streams.map((s) => `| ${s.answerChars} chars | ${s.deltaChars} chars | ${s.events} | ${s.governedUs} | ${s.perEventUs} | ${s.maxHeldChars} | ${s.windowChars} |`).join("\n")}

Added latency: a channel's text is scanned and released once ${DEFAULT_SCAN_STEP_CHARS} new characters arrived, and only
up to ${DEFAULT_WINDOW_CHARS} characters before its end (never through an entity still growing at the end, up to
${DEFAULT_MAX_HOLD_CHARS} characters). So a character reaches the client at worst after the model produced
${DEFAULT_WINDOW_CHARS} + ${DEFAULT_SCAN_STEP_CHARS} − 1 = ${DEFAULT_WINDOW_CHARS + DEFAULT_SCAN_STEP_CHARS - 1} more characters plus the rest of the delta that crosses that mark (≈ 25 tokens:
≈ 0.25–0.5 s at 50–100 tokens/s), or when its choice/block ends, whichever is first ("most chars held"
above includes the delta being processed and entities held whole at the end of the text). Events themselves are forwarded as they arrive (a held delta goes
out with its text emptied), delayed only by the governor's CPU time above.
`;
  writeFileSync(new URL("./results/policy-engine.md", import.meta.url), md);
  console.log(md);
}

main();
