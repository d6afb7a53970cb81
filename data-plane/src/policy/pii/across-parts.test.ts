// PII split across two text parts is found (it was a one-step bypass of PII block policies: the parts
// are scanned joined with "\n\n", the model reads them one after the other).
import test from "ava";
import { detectPii } from "./detect-pii.js";
import { withFindingsAcrossParts } from "./across-parts.js";

/** The findings of parts as the proxy scans them: "\n\n"-joined text, then across the junctions. */
function scan(parts: string[]) {
  const text = parts.join("\n\n");
  return { text, found: withFindingsAcrossParts(text, parts, detectPii(text)) };
}

/** Each finding's covered text with the junctions' "\n\n" taken out (what the model reads). */
const values = (r: { text: string; found: { start: number; end: number; entityType: string }[] }) =>
  r.found.map((f) => [f.entityType, r.text.slice(f.start, f.end).replaceAll("\n\n", "")]);

const SPLITS: [string, string[], string][] = [
  ["ssn", ["My SSN is 512-44", "-7890, thanks."], "512-44-7890"],
  ["ssn", ["My SSN is 512-", "44-7890"], "512-44-7890"],
  ["credit_card", ["card 4111 1111", " 1111 1111 please"], "4111 1111 1111 1111"],
  ["credit_card", ["card 41111111", "11111111"], "4111111111111111"],
  ["email", ["write to jane.doe@exam", "ple.com today"], "jane.doe@example.com"],
  ["email", ["write to jane.doe", "@example.com today"], "jane.doe@example.com"],
  ["iban", ["IBAN GB82 WEST 1234", " 5698 7654 32"], "GB82 WEST 1234 5698 7654 32"],
  ["api_key", ["token ghp_1234567890abcdefghij", "klmnopqrstuvwxyzAB ok"], "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB"],
  ["phone", ["call (415) 555", "-2671 tonight"], "(415) 555-2671"],
];

for (const [type, parts, value] of SPLITS) {
  test(`a ${type} split across parts is found, with offsets into the joined text: ${JSON.stringify(parts)}`, (t) => {
    const alone = parts.join("\n\n");
    t.false(
      detectPii(alone).some((f) => f.entityType === type && f.start < parts[0]!.length && f.end > parts[0]!.length),
      "the \"\\n\\n\" form alone does not see it whole (else this case tests nothing)",
    );
    const r = scan(parts);
    t.deepEqual(values(r), [[type, value]]);
    const f = r.found[0]!;
    t.true(f.start < parts[0]!.length && f.end > parts[0]!.length + 2, "it covers the junction");
  });
}

test("findings within one part are kept as they were; a value split across messages further apart is found at its own junction", (t) => {
  const parts = ["You are a helpful assistant.", "SSN 512-44-7890 and card 4111 1111 1111 1111", "e-mail jane@x", "ample.com"];
  const r = scan(parts);
  t.deepEqual(values(r), [
    ["ssn", "512-44-7890"],
    ["credit_card", "4111 1111 1111 1111"],
    ["email", "jane@xample.com"],
  ]);
});

test("what is found across a junction never displaces a finding of either part: two addresses side by side stay two", (t) => {
  const parts = ["I am ann@example.com", "carl@example.com", "e-mail jane.", "doe@example.com"];
  const r = scan(parts);
  t.deepEqual(values(r), [
    ["email", "ann@example.com"],
    ["email", "carl@example.com"],
    ["email", "doe@example.com"],
  ]);
});

test("a value next to a junction is not lost nor lengthened by digits of the next part", (t) => {
  const parts = ["my SSN is 512-44-7890", "5 items in the cart"];
  const r = scan(parts);
  t.deepEqual(values(r), [["ssn", "512-44-7890"]], "the \"\\n\\n\" form's finding stays; the joined digits make nothing new");
});

test("parts that join into nothing add nothing and return the findings as given", (t) => {
  const parts = ["Hello there.", "How are you?", "Order 5 items", "by 3pm"];
  const text = parts.join("\n\n");
  const found = detectPii(text);
  t.is(withFindingsAcrossParts(text, parts, found), found);
});

test("a text that is not the parts joined by \"\\n\\n\" is left as it is (nothing guessed)", (t) => {
  const parts = ["SSN 512-44", "-7890"];
  const text = parts.join("\n");
  const found = detectPii(text);
  t.is(withFindingsAcrossParts(text, parts, found), found);
});
