// E-mail: every TLD of the IANA root zone (tlds.ts), IDN TLDs, RFC 5322 specials "'" and "&" in the
// local part; file names, package specs and code tokens stay rejected.

import test from "ava";
import { detectPii, maskSpans } from "./index.js";
import { EMAIL_TLDS } from "./tlds.js";

function emails(text: string): string[] {
  return detectPii(text, { types: ["email"] }).map((f) => text.slice(f.start, f.end));
}

const REAL = [
  "jobs@acme.careers", "anna@fit.coach", "office@grace.church", "hi@smith.family", "info@relief.ngo", "hello@jane.photography",
  "me@jane.lol", "info@firma.swiss", "info@firma.bayern", "info@firma.africa", "me@jane.cool", "me@jane.fyi",
  "post@cwmni.cymru", "info@firme.quebec", "me@jane.wtf", "a@b.international", "info@пример.рф", "info@xn--e1afmkfd.xn--p1ai",
  "o'brien@example.ie", "sales&marketing@acme.com", "jane.doe@example.com",
];

test("addresses under real gTLDs, IDN TLDs and with ' or & in the local part are found whole", (t) => {
  for (const e of REAL) {
    for (const text of [`Contact: ${e}`, `{"email": "${e}"}`, `mail ${e}.`]) {
      t.deepEqual(emails(text), [e], text);
      t.is(maskSpans(text, detectPii(text), "redact"), text.replace(e, "[REDACTED:email]"), text);
    }
  }
});

test("a quoting ' or & before the address is not part of it", (t) => {
  t.deepEqual(emails("{'email': 'jane@example.com'}"), ["jane@example.com"]);
  t.deepEqual(emails("'o'brien@example.ie'"), ["o'brien@example.ie"]);
  t.deepEqual(emails("&jane@example.com"), ["jane@example.com"]);
});

test("file names, package specs, code tokens and internal hosts are not addresses", (t) => {
  for (const text of ["background: url(logo@2x.png)", "npm i pkg@1.2.3", "user@host.js", "see util@helpers.ts", "user@localhost", "x@host.local", "admin@internal", "import '@scope/pkg@1.2.3'"]) {
    t.deepEqual(emails(text), [], text);
  }
});

test("EMAIL_TLDS is the root zone: ~1,400 TLDs, IDN ones in Unicode and punycode, no file extensions", (t) => {
  t.true(EMAIL_TLDS.size > 1400, String(EMAIL_TLDS.size));
  for (const tld of ["com", "careers", "international", "рф", "xn--p1ai", "swiss"]) t.true(EMAIL_TLDS.has(tld), tld);
  for (const tld of ["png", "js", "ts", "local", "internal", "localhost", "jpg"]) t.false(EMAIL_TLDS.has(tld), tld);
});
