// Policy evaluation semantics (DESIGN.md §6, §11): applicability (direction, agents), every condition
// alone and AND-ed, priority order and first-block-wins with every matching block counted, redaction
// spans and their placement in the parts of a body.
import test from "ava";
import { create, AgentSchema, PolicySchema, PolicyConditionsSchema, type Policy } from "@agentgov/proto";
import { detectPii } from "../pii/index.js";
import { applicablePolicies } from "./applicable.js";
import { applyRedaction, evaluatePhase, partRedactor, redactSpans, withStreamBlock, type PhaseInput } from "./evaluate.js";

const agent = create(AgentSchema, { id: "agt_A", name: "a", status: "active", piiDetection: true });

let n = 0;
function policy(action: string, conditions: Record<string, unknown> = {}, extra: Partial<{ priority: number; agentIds: string[]; name: string }> = {}): Policy {
  n++;
  return create(PolicySchema, {
    id: `pol_${String(n).padStart(3, "0")}`,
    name: extra.name ?? `p${n}`,
    status: "active",
    action,
    priority: extra.priority ?? n,
    agentIds: extra.agentIds ?? [],
    conditions: create(PolicyConditionsSchema, { direction: "inbound", ...conditions }),
  });
}

function input(text: string, over: Partial<PhaseInput> = {}): PhaseInput {
  return { agent, phase: "inbound", text, model: "gpt-4o", inputTokens: 100, pii: detectPii(text), injectionScore: 0.1, ...over };
}

const matched = (ps: Policy[], i: PhaseInput) => evaluatePhase(ps, i).evaluations.map((e) => e.result);

test("applicability: direction and agent scope", (t) => {
  const inbound = policy("log", { direction: "inbound" });
  const outbound = policy("log", { direction: "outbound" });
  const both = policy("log", { direction: "both" });
  const mine = policy("log", {}, { agentIds: ["agt_A"] });
  const other = policy("log", {}, { agentIds: ["agt_B"] });
  const all = [inbound, outbound, both, mine, other];
  t.deepEqual(applicablePolicies(all, agent, "inbound").map((p) => p.id), [inbound.id, both.id, mine.id]);
  t.deepEqual(applicablePolicies(all, agent, "outbound").map((p) => p.id), [outbound.id, both.id]);
});

test("each condition alone", (t) => {
  const ssn = "my SSN is 536-22-8726";
  t.deepEqual(matched([policy("log", { piiTypes: ["ssn"] })], input(ssn)), ["fail"]);
  t.deepEqual(matched([policy("log", { piiTypes: ["email"] })], input(ssn)), ["pass"]);
  t.deepEqual(matched([policy("log", { injectionScoreGte: 0.5 })], input("x", { injectionScore: 0.5 })), ["fail"]);
  t.deepEqual(matched([policy("log", { injectionScoreGte: 0.5 })], input("x", { injectionScore: 0.49 })), ["pass"]);
  // models is an allow-list: the policy matches models NOT in it
  t.deepEqual(matched([policy("log", { models: ["gpt-4o", "gpt-4o-mini"] })], input("x", { model: "gpt-4o" })), ["pass"]);
  t.deepEqual(matched([policy("log", { models: ["gpt-4o-mini"] })], input("x", { model: "gpt-4o" })), ["fail"]);
  t.deepEqual(matched([policy("log", { maxInputTokens: 100 })], input("x", { inputTokens: 100 })), ["pass"]);
  t.deepEqual(matched([policy("log", { maxInputTokens: 100 })], input("x", { inputTokens: 101 })), ["fail"]);
  t.deepEqual(matched([policy("log", { keywords: ["Project Falcon", "zebra"] })], input("about PROJECT falcon")), ["fail"]);
  t.deepEqual(matched([policy("log", { keywords: ["falcon"] })], input("a hawk")), ["pass"]);
  t.deepEqual(matched([policy("log", { regex: "ticket-\\d{4}" })], input("see TICKET-1234")), ["fail"]);
  t.deepEqual(matched([policy("log", { regex: "ticket-\\d{4}" })], input("see ticket-12")), ["pass"]);
  t.deepEqual(matched([policy("log")], input("anything")), ["fail"], "no conditions: matches every request of its direction");
});

test("conditions are AND-ed", (t) => {
  const p = policy("log", { piiTypes: ["ssn"], keywords: ["taxes"], models: ["gpt-4o-mini"] });
  t.deepEqual(matched([p], input("SSN 536-22-8726 for my taxes")), ["fail"]);
  t.deepEqual(matched([p], input("SSN 536-22-8726 for my rent")), ["pass"]);
  t.deepEqual(matched([p], input("SSN 536-22-8726 for my taxes", { model: "gpt-4o-mini" })), ["pass"]);
});

test("PII scanning off: PII conditions never match, others still do", (t) => {
  const text = "SSN 536-22-8726";
  t.deepEqual(matched([policy("log", { piiTypes: ["ssn"] }), policy("log", { keywords: ["ssn"] })], input(text, { pii: null })), ["pass", "fail"]);
});

test("every policy is evaluated; the highest-priority block decides; every matching block counts", (t) => {
  const logP = policy("log", { keywords: ["secret"] }, { priority: 1 });
  const blockLow = policy("block", { keywords: ["secret"] }, { priority: 5, name: "low" });
  const pass = policy("block", { keywords: ["nothing"] }, { priority: 3 });
  const blockHigh = policy("block", { keywords: ["secret"] }, { priority: 2, name: "high" });
  const redact = policy("redact", { keywords: ["secret"] }, { priority: 9 });
  const ordered = [logP, blockHigh, pass, blockLow, redact];
  const out = evaluatePhase(ordered, input("a secret"));
  t.is(out.evaluations.length, 5);
  t.is(out.blockedBy?.id, blockHigh.id);
  t.is(out.blockedCount, 2);
  t.deepEqual(out.evaluations.map((e) => `${e.result}/${e.actionTaken}`), ["fail/log", "fail/block", "pass/none", "fail/block", "fail/redact"]);
  t.deepEqual(out.fired, [logP.name, "high", "low", redact.name]);
});

test("redaction spans: PII types, keywords, regex; a redact policy without span conditions redacts all PII", (t) => {
  const text = "Mail jo@example.com, SSN 536-22-8726, code ZX-99, about Falcon.";
  const pii = detectPii(text);
  const byType = redactSpans(text, [policy("redact", { piiTypes: ["ssn"] })], pii);
  t.is(applyRedaction(text, byType), "Mail jo@example.com, SSN [REDACTED:ssn], code ZX-99, about Falcon.");
  const kw = redactSpans(text, [policy("redact", { keywords: ["falcon"], regex: "ZX-\\d+" })], pii);
  t.is(applyRedaction(text, kw), "Mail jo@example.com, SSN 536-22-8726, code [REDACTED:regex], about [REDACTED:keyword].", "keyword/regex policies do not redact PII");
  const all = redactSpans(text, [policy("redact", { injectionScoreGte: 0 })], pii);
  t.is(applyRedaction(text, all), "Mail [REDACTED:email], SSN [REDACTED:ssn], code ZX-99, about Falcon.");
  t.deepEqual(redactSpans(text, [policy("redact")], null), [], "scanning off: nothing to redact by PII");
});

test("keyword offsets stay exact around characters whose lower case changes length", (t) => {
  const text = "İstanbul secret plan";
  const spans = redactSpans(text, [policy("redact", { keywords: ["SECRET"] })], null);
  t.is(applyRedaction(text, spans), "İstanbul [REDACTED:keyword] plan");
});

test("a keyword matches the forms a text may write it in: decomposed accents, full-width letters, invisible characters between letters, ß as ss, dotted and dotless i", (t) => {
  const cases: [string, string, string][] = [
    ["café", "the cafe\u0301 menu", "the [REDACTED:keyword] menu"],
    ["secret", "the ｓｅｃｒｅｔ plan", "the [REDACTED:keyword] plan"],
    ["secret", "the se\u200bc\u00adret plan", "the [REDACTED:keyword] plan"],
    ["straße", "HAUPTSTRASSE 5", "HAUPT[REDACTED:keyword] 5"],
    ["istanbul", "İSTANBUL office", "[REDACTED:keyword] office"],
    ["İstanbul", "istanbul office", "[REDACTED:keyword] office"],
    ["c++", "c++ and c", "[REDACTED:keyword] and c"],
  ];
  for (const [keyword, text, redacted] of cases) {
    t.is(applyRedaction(text, redactSpans(text, [policy("redact", { keywords: [keyword] })], null)), redacted, `${keyword} in ${JSON.stringify(text)}`);
    const out = evaluatePhase([policy("block", { keywords: [keyword] })], { agent, phase: "inbound", text, model: "m", inputTokens: 0, pii: null, injectionScore: 0 });
    t.truthy(out.blockedBy, `a block keyword ${keyword} holds against ${JSON.stringify(text)}`);
  }
  t.deepEqual(redactSpans("secrets are cafes", [policy("redact", { keywords: ["secretary", "café"] })], null), [], "no looser than the keyword");
});

test("partRedactor cuts whole-text spans per part, with context across parts", (t) => {
  // Context words in the first part make the bare number in the second an SSN in the joined text.
  const parts = ["Here is my social security number", "078 05 1121 and 536-22-8726"];
  const joined = parts.join("\n\n");
  const pii = detectPii(joined);
  const spans = redactSpans(joined, [policy("redact", { piiTypes: ["ssn"] })], pii);
  const fn = partRedactor(joined, spans, (p) => `fallback:${p}`);
  const out = parts.map(fn);
  t.is(out[0], parts[0]);
  t.is(out[1], "[REDACTED:ssn] and [REDACTED:ssn]", "alone, the spaced number would read as a phone number");
  // Parts of one output group are concatenated without a separator.
  const g = ["Call 536-22", "-8726 now"];
  const gj = g.join("");
  const gs = redactSpans(gj, [policy("redact", { piiTypes: ["ssn"] })], detectPii(gj));
  const gfn = partRedactor(gj, gs, (p) => p);
  t.deepEqual(g.map(gfn), ["Call [REDACTED:ssn]", " now"], "a span cut by a part boundary is labelled once");
  const lost = partRedactor("abc", [], (p) => `scanned:${p}`);
  t.is(lost("zzz"), "scanned:zzz", "a part not found in the text is scanned alone");
});

test("withStreamBlock records the policy that ended a stream as fail/block", (t) => {
  const p = policy("block", { keywords: ["never-in-text"] });
  const out = withStreamBlock(evaluatePhase([p], input("hello", { phase: "inbound" })), p);
  t.is(out.blockedBy?.id, p.id);
  t.is(out.blockedCount, 1);
  t.deepEqual(out.evaluations.map((e) => `${e.result}/${e.actionTaken}`), ["fail/block"]);
});
