// maskSpans: same-length stars keep offsets valid; redact inserts typed placeholders.

import test from "ava";
import { detectPii } from "./detect-pii.js";
import { maskSpans } from "./mask.js";

const text = "Email jane@example.com or call +1 415 555 0132; SSN 512-44-7890.";

test("star keeps length and offsets", (t) => {
  const f = detectPii(text);
  t.is(f.length, 3);
  const masked = maskSpans(text, f, "star");
  t.is(masked.length, text.length);
  t.is(masked, "Email **************** or call ***************; SSN ***********.");
  for (const x of f) t.is(masked.slice(x.start, x.end), "*".repeat(x.end - x.start));
});

test("redact replaces spans by [REDACTED:<type>]", (t) => {
  t.is(maskSpans(text, detectPii(text), "redact"), "Email [REDACTED:email] or call [REDACTED:phone]; SSN [REDACTED:ssn].");
});

test("no findings returns the text unchanged; unsorted and overlapping input: stars cover the union, labels one per entity", (t) => {
  t.is(maskSpans(text, [], "redact"), text);
  const s = "abcdefghij";
  const out = maskSpans(
    s,
    [
      { entityType: "email", start: 6, end: 8 },
      { entityType: "ssn", start: 1, end: 3 },
      { entityType: "phone", start: 2, end: 5 },
    ],
    "star",
  );
  t.is(out, "a****f**ij", "every character some span covers is masked");
  const spans = [
    { entityType: "ssn", start: 1, end: 3 },
    { entityType: "phone", start: 2, end: 5 },
  ];
  t.is(maskSpans(s, spans, "redact"), "a[REDACTED:ssn]defghij", "an overlapping span gets no second label");
  t.is(maskSpans("card 4111-1111-1111-1111 end", [{ entityType: "x", start: 5, end: 14 }, { entityType: "y", start: 10, end: 24 }], "star"), "card ******************* end");
});

test("surrogate pairs: offsets are UTF-16 code units", (t) => {
  const s = "🙂🙂 mail a@b.io";
  const f = detectPii(s);
  t.is(s.slice(f[0]!.start, f[0]!.end), "a@b.io");
  t.is(maskSpans(s, f, "star"), "🙂🙂 mail ******");
});
