// Per-entity behaviour of detectPii: exact spans on positives, nothing on hard negatives, options, ordering.

import test from "ava";
import { detectPii } from "./detect-pii.js";
import type { PiiFinding, PiiType } from "./types.js";

/** Returns [type, matched text] pairs, which pins exact spans in a readable way. */
function found(text: string, types?: readonly PiiType[]): [string, string][] {
  return detectPii(text, types === undefined ? undefined : { types }).map((f) => [f.entityType, text.slice(f.start, f.end)]);
}

const positives: readonly [PiiType, string, string][] = [
  ["ssn", "My SSN is 512-44-7890, thanks.", "512-44-7890"],
  ["ssn", "social security number 512 44 7890", "512 44 7890"],
  ["ssn", "ssn: 512447890", "512447890"],
  ["credit_card", "card 4111 1111 1111 1111 exp 12/27", "4111 1111 1111 1111"],
  ["credit_card", "pan=5500-0000-0000-0004;", "5500-0000-0000-0004"],
  ["credit_card", "Amex 3782 822463 10005.", "3782 822463 10005"],
  ["credit_card", "number 4242424242424242 works", "4242424242424242"],
  ["email", "write to jane.doe+news@mail.example.co.uk today", "jane.doe+news@mail.example.co.uk"],
  ["email", "<ops@acme.io>", "ops@acme.io"],
  ["email", "schreiben Sie an müller@example.de bitte", "müller@example.de"],
  ["email", "contacto: josé.garcía@example.es.", "josé.garcía@example.es"],
  ["email", "mail jane.doe@exämple.de now", "jane.doe@exämple.de"],
  ["email", "связь: иван@пример.com", "иван@пример.com"],
  ["phone", "call +1 (415) 555-0132 now", "+1 (415) 555-0132"],
  ["phone", "office 020 7946 0958.", "020 7946 0958"],
  ["phone", "Handy 0151 23456789", "0151 23456789"],
  ["phone", "appelez le 01 42 68 53 00", "01 42 68 53 00"],
  ["phone", "India +91 98765 43210", "+91 98765 43210"],
  ["phone", "phone 4155550132", "4155550132"],
  ["ip_address", "from 192.168.1.20:443", "192.168.1.20"],
  ["ip_address", "subnet 10.0.0.0/8 only", "10.0.0.0/8"],
  ["ip_address", "v6 2001:db8:85a3::8a2e:370:7334 ok", "2001:db8:85a3::8a2e:370:7334"],
  ["ip_address", "mapped ::ffff:192.0.2.128 here", "::ffff:192.0.2.128"],
  ["iban", "IBAN DE89 3704 0044 0532 0130 00 please", "DE89 3704 0044 0532 0130 00"],
  ["iban", "to GB82WEST12345698765432.", "GB82WEST12345698765432"],
  ["iban", "IBAN DE89 3704 0044 0532 0130 00 2 days ago", "DE89 3704 0044 0532 0130 00"],
  ["iban", "iban gb82 west 1234 5698 7654 32 thanks", "gb82 west 1234 5698 7654 32"],
  ["iban", "IBAN GB82-WEST-1234-5698-7654-32.", "GB82-WEST-1234-5698-7654-32"],
  ["credit_card", "card 4111.1111.1111.1111 exp 12/29", "4111.1111.1111.1111"],
  ["us_bank_routing", "routing number 021000021", "021000021"],
  ["us_passport", "passport number 583214761", "583214761"],
  ["us_passport", "Passport: C03005988", "C03005988"],
  ["api_key", "key AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE"],
  ["api_key", "token ghp_R8mN2kQ4xV7bT1cZ9wL3pH6yJ0sD5fG2aE4u", "ghp_R8mN2kQ4xV7bT1cZ9wL3pH6yJ0sD5fG2aE4u"],
  ["api_key", "OPENAI_API_KEY=sk-proj-9fKx2LmQ7vT4bN8wR1yZ3cD6hJ0pA5sE", "sk-proj-9fKx2LmQ7vT4bN8wR1yZ3cD6hJ0pA5sE"],
  ["api_key", "x-api-key: sk-ant-api03-Xq7Lm2Nv9Rt4Kp8Wz1Yb6Cd3Fh0Jg5Ss2Ee7Uu9", "sk-ant-api03-Xq7Lm2Nv9Rt4Kp8Wz1Yb6Cd3Fh0Jg5Ss2Ee7Uu9"],
  ["api_key", "xoxp-2291047711-4412881930021-Gk7Pq2Lm9Xv4", "xoxp-2291047711-4412881930021-Gk7Pq2Lm9Xv4"],
  ["api_key", "AIzaSyD3x9Kq2LmN8vR4tW1yZ7bC6hJ0pA5sE2f", "AIzaSyD3x9Kq2LmN8vR4tW1yZ7bC6hJ0pA5sE2f"],
  ["api_key", "rk_live_51HqLmX2eZvKYlo2C9s8Tq4Rw", "rk_live_51HqLmX2eZvKYlo2C9s8Tq4Rw"],
  ["api_key", "glpat-4Rk9Lm2Qx7Vb1Tz8Wn3Y", "glpat-4Rk9Lm2Qx7Vb1Tz8Wn3Y"],
  ["api_key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"],
  ["api_key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAK==\n-----END RSA PRIVATE KEY-----", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAK==\n-----END RSA PRIVATE KEY-----"],
  // cut before its END line (max_tokens, or a stream still arriving): to the end of the text
  ["api_key", "key:\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQ", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQ"],
  ["date_of_birth", "DOB: 03/14/1985", "03/14/1985"],
  ["date_of_birth", "born on July 4, 1990 in Ohio", "July 4, 1990"],
  ["date_of_birth", "Geburtsdatum 12.08.1979", "12.08.1979"],
];

for (const [type, text, value] of positives) {
  test(`${type} positive: ${text}`, (t) => {
    t.deepEqual(found(text), [[type, value]]);
  });
}

const negatives: readonly [PiiType, string][] = [
  ["ssn", "SSN 000-12-3456 is invalid"],
  ["ssn", "SSN 666-12-3456 is invalid"],
  ["ssn", "ITIN 912-70-3456"],
  ["ssn", "example 123-45-6789"],
  ["ssn", "zip 94043-1351"],
  ["ssn", "ref 512447890 without context"],
  ["credit_card", "order 4111 1111 1111 1112"],
  ["credit_card", "tracking 7489273511028836"],
  ["credit_card", "id 1234567812345670"],
  ["email", "logo@2x.png"],
  ["email", "root@localhost"],
  ["email", "git@github.com:acme/api.git"],
  ["email", "user@host.internal"],
  ["phone", "at 2024-03-18 14:05:33"],
  ["phone", "created_at=1711460733"],
  ["phone", "order 123-456-7890"],
  ["phone", "ISBN 978-3-16-148410-0"],
  ["phone", "revenue 1,250,000"],
  ["ip_address", "version 1.2.3.4"],
  ["ip_address", "v1.2.3.4"],
  ["ip_address", "bad 256.1.1.1"],
  ["ip_address", "OID 1.3.6.1.4.1.311"],
  ["ip_address", "at 12:30:45"],
  ["ip_address", "mac 00:1a:2b:3c:4d:5e"],
  ["ip_address", "std::vector and Foo::bar and dead::beef"],
  ["iban", "IBAN DE89 3704 0044 0532 0130 01"],
  ["iban", "XX89370400440532013000"],
  ["iban", "gb82 west 1234 5698 7654 33"],
  ["credit_card", "build 4111.1111.1111.1112"],
  ["credit_card", "mixed 4111.1111-1111 1111"],
  ["us_bank_routing", "routing number 021000022"],
  ["us_bank_routing", "order 021000021"],
  ["us_passport", "invoice 583214761"],
  ["us_passport", "passport 1234567"],
  ["api_key", "sk-learn-compatible-estimator-interface"],
  ["api_key", "replace sk-... with your key"],
  ["api_key", "commit 9fceb02d0ae598e95dc970b74767f19372d61af8"],
  ["api_key", "AKIAEXAMPLE is the prefix"],
  ["date_of_birth", "meeting on 03/14/2021"],
  ["date_of_birth", "DOB: 13/32/1990"],
];

for (const [type, text] of negatives) {
  test(`${type} hard negative: ${text}`, (t) => {
    t.deepEqual(found(text), []);
  });
}

test("types option restricts the search", (t) => {
  const text = "mail jane@example.com, card 4111 1111 1111 1111";
  t.deepEqual(found(text, ["email"]), [["email", "jane@example.com"]]);
  t.deepEqual(found(text, ["credit_card"]), [["credit_card", "4111 1111 1111 1111"]]);
  t.deepEqual(found(text, []), []);
});

test("minScore option: weak context-less matches surface only when asked", (t) => {
  const text = "ref 512447890";
  t.deepEqual(detectPii(text), []);
  const weak = detectPii(text, { minScore: 0.01 });
  t.deepEqual(weak.map((f) => [f.entityType, f.score]), [["ssn", 0.05]]);
});

test("bare digit runs are phones only next to a phone word", (t) => {
  t.deepEqual(found("id 4155550132"), []);
  t.deepEqual(detectPii("id 4155550132", { minScore: 0 }).filter((f) => f.entityType === "phone"), []);
  t.deepEqual(found("call me on 4155550132"), [["phone", "4155550132"]]);
});

test("findings are sorted, non-overlapping, with UTF-16 offsets", (t) => {
  const text = "😀 Résumé: ✉ jane@example.com — IBAN DE89 3704 0044 0532 0130 00 — ☎ +44 20 7946 0958 — 10.0.0.1";
  const f: PiiFinding[] = detectPii(text);
  t.deepEqual(
    f.map((x) => [x.entityType, text.slice(x.start, x.end)]),
    [
      ["email", "jane@example.com"],
      ["iban", "DE89 3704 0044 0532 0130 00"],
      ["phone", "+44 20 7946 0958"],
      ["ip_address", "10.0.0.1"],
    ],
  );
  for (let i = 1; i < f.length; i++) t.true(f[i]!.start >= f[i - 1]!.end);
  for (const x of f) t.true(x.score >= 0.4 && x.score <= 1);
});

test("overlaps: IBAN digits are not also a card; SSN context beats a national phone shape", (t) => {
  t.deepEqual(found("IBAN GB82 WEST 1234 5698 7654 32"), [["iban", "GB82 WEST 1234 5698 7654 32"]]);
  t.deepEqual(found("ssn 068 50 3883 for the tax return"), [["ssn", "068 50 3883"]]);
});

test("context boost raises scores", (t) => {
  const plain = detectPii("host 10.0.0.1")[0]!; // "from" is no context word: "from 1.2.3.4 to 1.2.3.5" bumps versions
  const bare = detectPii("see 10.0.0.1")[0]!;
  t.true(plain.score > bare.score);
  t.deepEqual(detectPii(""), []);
});

test("bare and spaced SSNs take a context word right after them too", (t) => {
  const ssn = (text: string) => detectPii(text).filter((f) => f.entityType === "ssn").map((f) => text.slice(f.start, f.end));
  t.deepEqual(ssn("589316325 is my social security number"), ["589316325"]);
  t.deepEqual(ssn("589 31 6325 (SSN)"), ["589 31 6325"]);
  t.deepEqual(ssn("589316325 was the order number; the form asked for an SSN"), [], "a context word far after it does not count");
});

test("routing numbers written with dashes are checked as nine digits", (t) => {
  const routing = (text: string) => detectPii(text).filter((f) => f.entityType === "us_bank_routing").map((f) => text.slice(f.start, f.end));
  t.deepEqual(routing("Routing: 0210-0002-1"), ["0210-0002-1"]);
  t.deepEqual(routing("ABA routing number 021-000-021"), ["021-000-021"]);
  t.deepEqual(routing("Routing: 0210-0002-2"), [], "checksum");
  t.deepEqual(routing("Ticket 021-000-021 was escalated"), [], "needs a context word");
});
