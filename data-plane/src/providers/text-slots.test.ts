// Tool-call arguments of the history as text slots: JSON text is walked leaf by leaf and written back as
// valid JSON only when a leaf changes; text that is not JSON is one slot; objects are walked in place.
import test from "ava";
import { argumentSlots, mapSlots, readSlots } from "./text-slots.js";

const collect = (body: unknown) => argumentSlots(body as Record<string, unknown>, "arguments");

test("JSON text: string leaves in key order; keys, numbers and booleans are no text", (t) => {
  const body = { arguments: '{"to": "jo@example.com", "cc": ["a", {"note": "b"}], "n": 3, "ok": true}' };
  t.deepEqual(readSlots(body, collect), ["jo@example.com", "a", "b"]);
});

test("a changed leaf is written back as valid JSON, even when the new text holds quotes and backslashes", (t) => {
  const body = { arguments: '{"q": "say \\"hi\\" to jo@example.com", "n": 1}' };
  const mapped = mapSlots(body, collect, (s) => s.replace("jo@example.com", 'a "quoted" \\ name')) as typeof body;
  t.deepEqual(JSON.parse(mapped.arguments), { q: 'say "hi" to a "quoted" \\ name', n: 1 });
  t.is(body.arguments, '{"q": "say \\"hi\\" to jo@example.com", "n": 1}', "the original is untouched");
});

test("arguments nothing changes keep their bytes (whitespace, escapes, key order)", (t) => {
  const text = '{ "b" : "x\\u0041" ,\n "a": [ "y" ] }';
  const mapped = mapSlots({ arguments: text }, collect, (s) => s) as { arguments: string };
  t.is(mapped.arguments, text);
});

test("text that is not JSON is one slot, as sent; a JSON string literal is its own leaf", (t) => {
  t.deepEqual(readSlots({ arguments: '{"to": "jo@exa' }, collect), ['{"to": "jo@exa']);
  const literal = mapSlots({ arguments: '"call jo"' }, collect, (s) => s.toUpperCase()) as { arguments: string };
  t.is(literal.arguments, '"CALL JO"');
  t.deepEqual(readSlots({ arguments: "42" }, collect), []);
});

test("object arguments (Mistral accepts them) are walked in place", (t) => {
  const mapped = mapSlots({ arguments: { who: "jo", deep: { list: ["x"] } } }, collect, (s) => `<${s}>`);
  t.deepEqual(mapped, { arguments: { who: "<jo>", deep: { list: ["<x>"] } } });
});
