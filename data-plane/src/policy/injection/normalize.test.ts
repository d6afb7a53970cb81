// normalizeForScan and the evasion readings: folding, invisible removal, offset mapping, variants.

import test from "ava";
import { decodePayloads } from "./decode-payloads.js";
import { mapRange, normalizeForScan } from "./normalize.js";
import { despacedVariant, leetVariant, reversedSegments, rot13Variant } from "./variants.js";

test("ASCII fast path lower-cases with an identity map", (t) => {
  const n = normalizeForScan("Hello World");
  t.is(n.text, "hello world");
  t.is(n.map, null);
  t.deepEqual(mapRange(n, 0, 5, 11), [0, 5]);
});

test("look-alikes are folded and counted, invisibles removed and mapped back", (t) => {
  const input = "Ignоre\u200b all"; // Cyrillic о, zero-width space
  const n = normalizeForScan(input);
  t.is(n.text, "ignore all");
  t.is(n.foldedCount, 1);
  t.is(n.invisibleCount, 1);
  const [s, e] = mapRange(n, 7, 10, input.length);
  t.is(input.slice(s, e), "all");
});

test("NFKC folds fullwidth and mathematical letters; surrogate pairs map to both code units", (t) => {
  const input = "𝐀𝐁 ｃ";
  const n = normalizeForScan(input);
  t.is(n.text, "ab c");
  const [s, e] = mapRange(n, 0, 2, input.length);
  t.is(input.slice(s, e), "𝐀𝐁");
});

test("emoji joiners are removed but not counted as suspicious", (t) => {
  t.is(normalizeForScan("👨\u200d👩").invisibleCount, 0);
  t.is(normalizeForScan("a\u202eb\u2066c").invisibleCount, 2);
});

test("tag characters are decoded into a hidden payload", (t) => {
  const hidden = [..."hi there"].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join("");
  t.is(normalizeForScan(`x${hidden}`).tagPayload, "hi there");
});

test("leet variant only touches characters next to letters", (t) => {
  t.is(leetVariant("1gn0r3 version 1.2.3"), "ignore version 1.2.3");
  t.is(leetVariant("plain text 2024"), null);
});

test("de-spaced variant joins letter runs and keeps word gaps", (t) => {
  t.is(despacedVariant("say i g n o r e   t h i s now"), "say ignore this now");
  t.is(despacedVariant("x i.g.n.o.r.e a.l.l"), "x ignore all");
  t.is(despacedVariant("a normal sentence"), null);
});

test("right-to-left override segments are reversed; rot13 only when mentioned", (t) => {
  t.deepEqual(reversedSegments("a\u202ecba\u202cz"), [{ start: 1, end: 5, text: "abc" }]);
  t.is(rot13Variant("rot13: uryyb"), "ebg13: hello");
  t.is(rot13Variant("hello"), null);
});

test("decodePayloads finds readable base64, hex and percent runs only", (t) => {
  const b64 = Buffer.from("this is hidden text").toString("base64");
  const hex = Buffer.from("another hidden text").toString("hex");
  const found = decodePayloads(`a ${b64} b ${hex} c %68%65%6c%6c%6f%20%77%6f%72%6c%64 d 9fceb02d0ae598e95dc970b74767f19372d61af8`);
  t.deepEqual(
    found.map((p) => [p.kind, p.text]),
    [
      ["base64", "this is hidden text"],
      ["hex", "another hidden text"],
      ["percent", "hello world"],
    ],
  );
  t.deepEqual(decodePayloads("camelCaseIdentifierNameHere and SomeOtherLongIdentifier"), []);
});
