// The findings of the input outside the prompt as the trace records them (governance.ts): each with the
// kind of the part it lies in as its source and offsets into the extras text (Trace.input_extras), the
// parts joined by "\n\n" exactly as the policies judged them.
import test from "ava";
import { openaiAdapter } from "../providers/index.js";
import { extrasFindings, judgedInput, scanInputExtras } from "./governance.js";

const SSN = "536-22-8741";
const CARD = "4111 1111 1111 1111";
const EMAIL = "jane@example.com";

/** An OpenAI chat request with a tool, a response schema, a prediction and a participant name, each with PII. */
const REQUEST = {
  model: "gpt-4o-mini",
  messages: [{ role: "user", name: SSN, content: "hello" }],
  tools: [{ type: "function", function: { name: "lookup", description: `Look up a customer, e.g. SSN ${SSN}.`, parameters: { type: "object", properties: { id: { type: "string", description: "customer id" } } } } }],
  response_format: { type: "json_schema", json_schema: { name: "contact", schema: { type: "object", properties: { email: { type: "string", description: `like ${EMAIL}` } } } } },
  prediction: { type: "content", content: `card: ${CARD}` },
};

test("each finding outside the prompt gets the kind of its part as source, and offsets into the joined text", (t) => {
  const extras = scanInputExtras(openaiAdapter, REQUEST, true)!;
  t.is(extras.text, `Look up a customer, e.g. SSN ${SSN}.\n\ncustomer id\n\nlike ${EMAIL}\n\ncard: ${CARD}\n\n${SSN}`);
  t.deepEqual(extras.parts.map((p) => [p.kind, p.start]), [
    ["tool_definition", 0],
    ["tool_definition", 43],
    ["response_schema", 56],
    ["prediction", 79],
    ["name", 106],
  ]);
  const found = extrasFindings(extras);
  t.deepEqual(found.map((f) => [f.entityType, f.source, extras.text.slice(f.start, f.end)]), [
    ["ssn", "tool_definition", SSN],
    ["email", "response_schema", EMAIL],
    ["credit_card", "prediction", CARD],
    ["ssn", "name", SSN],
  ]);
  // The policies judge the same findings, after the prompt ("hello\n\n").
  const judged = judgedInput({ text: "hello", pii: [] }, extras);
  t.deepEqual(judged.pii!.map((f) => judged.text.slice(f.start, f.end)), [SSN, EMAIL, CARD, SSN]);
});

test("no findings when PII scanning is off, and no extras for a request without any", (t) => {
  const off = scanInputExtras(openaiAdapter, REQUEST, false)!;
  t.is(off.pii, null);
  t.deepEqual(extrasFindings(off), []);
  t.is(scanInputExtras(openaiAdapter, { model: "gpt-4o-mini", messages: [{ role: "user", content: "hello" }] }, true), undefined);
});

test("a finding running across the join into the next part keeps its offsets and the kind of the part it starts in", (t) => {
  // An unterminated PEM private key may hold blank lines: the recognizer runs on through the "\n\n" join
  // into the response schema's text. The one finding is reported (and masked) whole, as a tool definition's.
  const pem = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7";
  const body = {
    model: "gpt-4o-mini",
    messages: [{ role: "user", content: "hello" }],
    tools: [{ type: "function", function: { name: "sign", description: `Signs with ${pem}` } }],
    response_format: { type: "json_schema", json_schema: { name: "out", description: "abcDEF123", schema: { type: "object" } } },
  };
  const extras = scanInputExtras(openaiAdapter, body, true)!;
  t.deepEqual(extras.parts.map((p) => p.kind), ["tool_definition", "response_schema"]);
  const found = extrasFindings(extras);
  t.is(found.length, 1);
  const f = found[0]!;
  t.is(f.source, "tool_definition");
  t.true(f.start < extras.parts[1]!.start && f.end > extras.parts[1]!.start, "the finding crosses into the second part");
  t.is(extras.text.slice(f.start, f.end), `${pem}\n\nabcDEF123`);
});
