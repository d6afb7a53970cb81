// Which client strings Postgres can store, and where the first one it cannot is in a parsed body.
import test from "ava";
import { findUnstorableText, isStorableText } from "./storable-text.js";

test("NUL and unpaired surrogates are unstorable; pairs and other controls are fine", (t) => {
  for (const s of ["", "plain", "é", "😀", "\ud83d\ude00", "tab\tnew\nline", "\u0001", "\uFFFD"]) t.true(isStorableText(s), JSON.stringify(s));
  for (const s of ["\0", "a\0b", "\ud800", "\udc00", "a\ud800b", "\ude00\ud83d", "😀\ud83d", "\udc00😀"]) t.false(isStorableText(s), JSON.stringify(s));
});

test("findUnstorableText names the first bad string by its path, or a bad key by its object", (t) => {
  t.is(findUnstorableText({ a: "x", b: [1, null, true, "y"] }), undefined);
  t.is(findUnstorableText(42), undefined);
  t.deepEqual(findUnstorableText("a\0"), []);
  t.deepEqual(findUnstorableText({ name: "ok", conditions: { keywords: ["a", "b\0"] } }), ["conditions", "keywords", 1]);
  t.deepEqual(findUnstorableText({ first: "\ud800", second: "\0" }), ["first"], "document order");
  t.deepEqual(findUnstorableText({ outer: { "k\0": 1 } }), ["outer"]);
  t.deepEqual(findUnstorableText(Object.assign(Object.create(null) as object, { id: "x\0" })), ["id"], "null-prototype objects (parsed query strings)");
});

test("a deeply nested value is walked without overflowing the stack", (t) => {
  const depth = 200_000;
  const deep: unknown = JSON.parse(`${"[".repeat(depth)}"\\u0000"${"]".repeat(depth)}`);
  const path = findUnstorableText(deep);
  t.is(path?.length, depth);
  t.true(path?.every((k) => k === 0));
});
