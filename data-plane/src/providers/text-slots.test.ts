// Tool-call arguments of the history as text slots. JSON text is checked with JSON.parse, and its string
// and number value literals (never keys) are the slots, in text order (a number as written: a model may
// write a card or an SSN as a number); setting one swaps that literal alone for the
// JSON of the new value, so every other byte (big numbers, 1.10, 1e400, duplicate keys, whitespace, key
// order, escapes) stays as sent, several sets compose, a set to the same value changes nothing, and deep
// nesting neither overflows nor throws. Text that is not JSON is one slot; objects are walked in place.
import test from "ava";
import { argumentSlots, leafSlots, mapSlots, readSlots, slot } from "./text-slots.js";

const collect = (body: unknown) => argumentSlots(body as Record<string, unknown>, "arguments");
const redactEmail = (s: string) => s.replace(/[\w.]+@[\w.]+/g, "[REDACTED:email]");

test("JSON text: string and number leaves in text order, numbers as written; keys, booleans and null are no text", (t) => {
  const body = { arguments: '{"to": "jo@example.com", "cc": ["a", {"note": "b"}], "n": 3, "ok": true, "card": 4111111111111111, "x": -1.5e3, "z": null}' };
  t.deepEqual(readSlots(body, collect), ["jo@example.com", "a", "b", "3", "4111111111111111", "-1.5e3"]);
  // A redacted number becomes a string; the JSON stays valid and the rest keeps its bytes.
  const mapped = mapSlots(body, collect, (s) => (s === "4111111111111111" ? "[REDACTED:credit_card]" : s)) as typeof body;
  t.is(mapped.arguments, body.arguments.replace("4111111111111111", '"[REDACTED:credit_card]"'));
  t.deepEqual((JSON.parse(mapped.arguments) as { card: unknown }).card, "[REDACTED:credit_card]");
  // Objects (Anthropic input, Gemini args) too.
  const obj = { arguments: { card: 4111111111111111, n: 2, ok: false } };
  t.deepEqual(readSlots(obj, collect), ["4111111111111111", "2"]);
  const redacted = mapSlots(obj, collect, (s) => (s.length > 10 ? "[REDACTED:credit_card]" : s)) as { arguments: Record<string, unknown> };
  t.deepEqual(redacted.arguments, { card: "[REDACTED:credit_card]", n: 2, ok: false });
});

test("a changed leaf is written back as valid JSON, even when the new text holds quotes and backslashes", (t) => {
  const body = { arguments: '{"q": "say \\"hi\\" to jo@example.com", "n": 1}' };
  const mapped = mapSlots(body, collect, (s) => s.replace("jo@example.com", 'a "quoted" \\ name')) as typeof body;
  t.deepEqual(JSON.parse(mapped.arguments), { q: 'say "hi" to a "quoted" \\ name', n: 1 });
  t.is(mapped.arguments, '{"q": "say \\"hi\\" to a \\"quoted\\" \\\\ name", "n": 1}');
  t.is(body.arguments, '{"q": "say \\"hi\\" to jo@example.com", "n": 1}', "the original is untouched");
});

test("arguments nothing changes keep their bytes (whitespace, escapes, key order)", (t) => {
  const text = '{ "b" : "x\\u0041" ,\n "a": [ "y" ] }';
  const mapped = mapSlots({ arguments: text }, collect, (s) => s) as { arguments: string };
  t.is(mapped.arguments, text);
});

test("a redaction of one leaf keeps every other byte: big integers, 1.10, 1e400, duplicate keys, whitespace", (t) => {
  const text = '{"order_id": 12345678901234567891, "amount": 1.10,\n\t"big": 1e400, "to" :  "jo@x.com", "k":"a","k":"b", "z": -0.0E+2}';
  const mapped = mapSlots({ arguments: text }, collect, redactEmail) as { arguments: string };
  t.is(
    mapped.arguments,
    '{"order_id": 12345678901234567891, "amount": 1.10,\n\t"big": 1e400, "to" :  "[REDACTED:email]", "k":"a","k":"b", "z": -0.0E+2}',
  );
});

test("every occurrence of a duplicate key is a slot (the model reads them all), in text order", (t) => {
  const body = { arguments: '{"k": "jo@x.com", "k": "al@y.org", "2": "c", "1": "d"}' };
  t.deepEqual(readSlots(body, collect), ["jo@x.com", "al@y.org", "c", "d"]);
  const mapped = mapSlots(body, collect, redactEmail) as typeof body;
  t.is(mapped.arguments, '{"k": "[REDACTED:email]", "k": "[REDACTED:email]", "2": "c", "1": "d"}');
});

test("escapes in literals decode, and re-encode right when redacted", (t) => {
  const text = String.raw`{"a": "q\"uote", "b": "back\\slash\\", "c": "caf\u00e9", "d": "\ud83d\ude00 jo@x.com", "e": "\/\b\f\n\r\t"}`;
  const body = { arguments: text };
  t.deepEqual(readSlots(body, collect), ['q"uote', "back\\slash\\", "café", "😀 jo@x.com", "/\b\f\n\r\t"]);
  const mapped = mapSlots(body, collect, redactEmail) as typeof body;
  t.is(mapped.arguments, String.raw`{"a": "q\"uote", "b": "back\\slash\\", "c": "caf\u00e9", "d": "😀 [REDACTED:email]", "e": "\/\b\f\n\r\t"}`);
  t.deepEqual(JSON.parse(mapped.arguments), { a: 'q"uote', b: "back\\slash\\", c: "café", d: "😀 [REDACTED:email]", e: "/\b\f\n\r\t" });
});

test("keys are never slots, even ones that look like values or hold escaped quotes and colons", (t) => {
  const text = String.raw`{"jo@x.com" : "v", "k\"\\": {"\":" :"w"}, "arr": ["x", "y:"], "e": {}}`;
  const slots = collect({ arguments: text });
  t.deepEqual(
    slots.map((s) => s.get()),
    ["v", "w", "x", "y:"],
  );
});

test("several leaves redacted compose, in any order, and a set back to the original restores its bytes", (t) => {
  const text = '{"a": "one",  "n": 1.10, "b": "two", "c": "thr\\u0065e"}';
  const body = { arguments: text };
  const slots = collect(body);
  // slots: a, n (the number 1.10, read as written), b, c
  slots[3]!.set("THREE");
  slots[0]!.set('O"NE');
  slots[2]!.set("TWO");
  t.is(body.arguments, '{"a": "O\\"NE",  "n": 1.10, "b": "TWO", "c": "THREE"}');
  t.deepEqual(
    slots.map((s) => s.get()),
    ['O"NE', "1.10", "TWO", "THREE"],
  );
  slots[2]!.set("two");
  t.is(body.arguments, '{"a": "O\\"NE",  "n": 1.10, "b": "two", "c": "THREE"}');
  slots[1]!.set("1.10");
  slots[0]!.set("one");
  slots[3]!.set("three");
  t.is(body.arguments, text, "all restored: the text as sent, byte for byte");
});

test("a set to the value a leaf already has changes nothing", (t) => {
  const text = '{ "a" : "x\\u0041\\/" , "n": 1e400 }';
  const body = { arguments: text };
  const [a] = collect(body);
  a!.set("xA/");
  t.is(body.arguments, text);
  a!.set("changed");
  const changed = body.arguments;
  a!.set("changed");
  t.is(body.arguments, changed);
});

test("6000-deep nesting with a leaf redacted: no stack overflow, no throw, the rest kept", (t) => {
  const depth = 6000;
  const text = `${'{"k": ['.repeat(depth)}"jo@x.com", 12345678901234567891${"]}".repeat(depth)}`;
  const body = { arguments: text };
  t.deepEqual(readSlots(body, collect), ["jo@x.com", "12345678901234567891"]);
  const mapped = mapSlots(body, collect, redactEmail) as typeof body;
  t.is(mapped.arguments, text.replace('"jo@x.com"', '"[REDACTED:email]"'));
  const deepObject: Record<string, unknown> = {};
  let at = deepObject;
  for (let i = 0; i < depth; i++) at = (at.k = {}) as Record<string, unknown>;
  at.leaf = "jo@x.com";
  t.deepEqual(readSlots({ arguments: deepObject }, collect), ["jo@x.com"]);
});

test("text that is not JSON is one slot, as sent", (t) => {
  t.deepEqual(readSlots({ arguments: '{"to": "jo@exa' }, collect), ['{"to": "jo@exa']);
  const mapped = mapSlots({ arguments: '{"to": "jo@x.com", }' }, collect, redactEmail) as { arguments: string };
  t.is(mapped.arguments, '{"to": "[REDACTED:email]", }');
});

test("top-level arrays, string literals and numbers", (t) => {
  const literal = mapSlots({ arguments: ' "call jo" ' }, collect, (s) => s.toUpperCase()) as { arguments: string };
  t.is(literal.arguments, ' "CALL JO" ');
  t.deepEqual(readSlots({ arguments: "42" }, collect), ["42"]);
  t.deepEqual(readSlots({ arguments: "12345678901234567891" }, collect), ["12345678901234567891"], "as written, beyond double precision");
  const array = mapSlots({ arguments: '[ "jo@x.com", 1.10, ["", "b"], null ]' }, collect, redactEmail) as { arguments: string };
  t.is(array.arguments, '[ "[REDACTED:email]", 1.10, ["", "b"], null ]');
  t.deepEqual(readSlots({ arguments: '[ "a", 1.10, ["", "b"], null ]' }, collect), ["a", "1.10", "b"]);
});

test("object arguments (Mistral accepts them) are walked in place", (t) => {
  const mapped = mapSlots({ arguments: { who: "jo", deep: { list: ["x"] } } }, collect, (s) => `<${s}>`);
  t.deepEqual(mapped, { arguments: { who: "<jo>", deep: { list: ["<x>"] } } });
});

test("slot and leafSlots: leaves in key order, set writes the field in place", (t) => {
  const body = { a: "x", b: [1, "y", { c: "z" }], d: null };
  const slots = leafSlots(body, "b");
  t.deepEqual(
    slots.map((s) => s.get()),
    ["y", "z"],
  );
  slots[1]!.set("Z");
  slot(body, "a").set("X");
  t.deepEqual(body, { a: "X", b: [1, "y", { c: "Z" }], d: null });
});
