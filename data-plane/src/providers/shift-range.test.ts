// shiftRange: a cited range moves with the text around a redaction and widens to a label it touches.
import test from "ava";
import { shiftRange } from "./shift-range.js";

const before = "Contact jo.smith@example.com for details about Jo.";
const after = "Contact [REDACTED:email] for details about Jo.";
const cite = (text: string, from = 0) => [before.indexOf(text, from), before.indexOf(text, from) + text.length] as const;
const quote = (r: [number, number]) => after.slice(r[0], r[1]);

test("a range before, after or around a redaction keeps its text; one on the value quotes the label", (t) => {
  t.deepEqual(shiftRange(before, after, ...cite("Contact")), [0, 7]);
  t.is(quote(shiftRange(before, after, ...cite("for details"))), "for details");
  t.is(quote(shiftRange(before, after, ...cite("Jo.", 40))), "Jo.");
  t.is(quote(shiftRange(before, after, ...cite("jo.smith@example.com"))), "[REDACTED:email]");
  t.is(quote(shiftRange(before, after, ...cite("Contact jo.smith@example.com for"))), "Contact [REDACTED:email] for");
  t.is(quote(shiftRange(before, after, ...cite("smith@example"))), "[REDACTED:email]", "a boundary inside the value widens to the label");
  t.is(quote(shiftRange(before, after, ...cite("example.com for"))), "[REDACTED:email] for");
});

test("two redactions; letters a label shares with its value do not split it; unchanged text is unchanged", (t) => {
  const b = "Mail ann@example.com or call 415-555-0100 now; email ann again.";
  const a = "Mail [REDACTED:email] or call [REDACTED:phone] now; email ann again.";
  const r = (text: string) => {
    const s = b.indexOf(text);
    const [x, y] = shiftRange(b, a, s, s + text.length);
    return a.slice(x, y);
  };
  t.is(r("or call"), "or call");
  t.is(r("415-555-0100"), "[REDACTED:phone]");
  t.is(r("now; email ann again."), "now; email ann again.");
  t.is(r("ann@example.com or call 415"), "[REDACTED:email] or call [REDACTED:phone]");
  t.deepEqual(shiftRange("same", "same", 1, 3), [1, 3]);
});
