// shiftRange: a quoted range moves with the text around a redaction and widens to a label it touches;
// offsets in code points and UTF-8 bytes convert to and from UTF-16.
import test from "ava";
import { shiftRange } from "./shift-range.js";
import { fromUtf16, toUtf16, unitOfQuote } from "./text-offsets.js";

const before = "Contact jo.smith@example.com for details about Jo.";
const after = "Contact [REDACTED:email] for details about Jo.";
const cite = (text: string, from = 0) => [before.indexOf(text, from), before.indexOf(text, from) + text.length] as const;
const quote = (r: [number, number] | undefined) => (r ? after.slice(r[0], r[1]) : undefined);

test("a range before, after or around a redaction keeps its text; one on the value quotes the label", (t) => {
  t.deepEqual(shiftRange(before, after, ...cite("Contact")), [0, 7]);
  t.is(quote(shiftRange(before, after, ...cite("for details"))), "for details");
  t.is(quote(shiftRange(before, after, ...cite("Jo.", 40))), "Jo.");
  t.is(quote(shiftRange(before, after, ...cite("jo.smith@example.com"))), "[REDACTED:email]");
  t.is(quote(shiftRange(before, after, ...cite("Contact jo.smith@example.com for"))), "Contact [REDACTED:email] for");
  t.is(quote(shiftRange(before, after, ...cite("smith@example"))), "[REDACTED:email]", "a boundary inside the value widens to the label");
  t.is(quote(shiftRange(before, after, ...cite("example.com for"))), "[REDACTED:email] for");
});

test("several redactions, adjacent labels, a value at either end, a literal label in the text", (t) => {
  const b = "Mail ann@example.com or call 415-555-0100 now; email ann again.";
  const a = "Mail [REDACTED:email] or call [REDACTED:phone] now; email ann again.";
  const r = (text: string) => {
    const s = b.indexOf(text);
    const x = shiftRange(b, a, s, s + text.length)!;
    return a.slice(x[0], x[1]);
  };
  t.is(r("or call"), "or call");
  t.is(r("415-555-0100"), "[REDACTED:phone]");
  t.is(r("now; email ann again."), "now; email ann again.");
  t.is(r("ann@example.com or call 415"), "[REDACTED:email] or call [REDACTED:phone]");
  const adjacent = shiftRange("x a@b.co415-555-0100 y", "x [REDACTED:email][REDACTED:phone] y", 2, 20)!;
  t.deepEqual(adjacent, [2, 34]);
  t.deepEqual(shiftRange("a@b.co is it", "[REDACTED:email] is it", 7, 9), [17, 19]);
  t.deepEqual(shiftRange("it is a@b.co", "it is [REDACTED:email]", 0, 5), [0, 5]);
  t.deepEqual(shiftRange("see [REDACTED:x] and a@b.co", "see [REDACTED:x] and [REDACTED:email]", 4, 16), [4, 16]);
  t.deepEqual(shiftRange("same", "same", 1, 3), [1, 3]);
  t.is(shiftRange("one text", "another [REDACTED:email]", 0, 3), undefined, "not a redaction of it: cannot be placed");
});

test("linear: 2,000 redactions in 100 KB place 1,000 quotes quickly", (t) => {
  const value = "jo@example.com";
  const b = Array.from({ length: 2000 }, (_, i) => `Line ${i} mail ${value} now.`).join(" ");
  const a = b.split(value).join("[REDACTED:email]");
  const started = process.hrtime.bigint();
  for (let i = 0; i < 1000; i++) {
    const s = b.indexOf(`Line ${i * 2} `);
    const x = shiftRange(b, a, s, s + 10)!;
    t.is(a.slice(x[0], x[1]), b.slice(s, s + 10));
  }
  t.log(`${Number(process.hrtime.bigint() - started) / 1e6} ms for 1,000 quotes`);
});

test("offset units: code points and UTF-8 bytes to UTF-16 and back; the unit a quote is counted in", (t) => {
  const text = "😀😀 Write to jo@x.io";
  const at16 = text.indexOf("Write");
  t.is(toUtf16(text, 3, "codepoints"), at16);
  t.is(toUtf16(text, 9, "utf8"), at16);
  t.is(fromUtf16(text, at16, "codepoints"), 3);
  t.is(fromUtf16(text, at16, "utf8"), 9);
  t.is(unitOfQuote(text, 3, 8, "Write", ["utf16", "codepoints", "utf8"]), "codepoints");
  t.is(unitOfQuote(text, at16, at16 + 5, "Write", ["utf16", "codepoints"]), "utf16");
  t.is(unitOfQuote(text, 0, 2, "nope", ["utf16", "codepoints"]), undefined);
});
