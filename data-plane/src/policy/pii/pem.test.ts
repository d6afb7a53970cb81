// PEM private keys inside JSON (literal "\n" escapes, GCP service-account files) and legacy encrypted
// PEM with RFC 1421 header lines: the whole key is one api_key finding.

import test from "ava";
import { detectPii, maskSpans } from "./index.js";

const BODY = ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj", "MZGnJ0yxpA3Ca4Ft5rVWvYJo2sX+/bN8BXk1oH7a9ydZqTn6Fh8TfnNJpqMhB4=="];
const PEM = `-----BEGIN PRIVATE KEY-----\n${BODY.join("\n")}\n-----END PRIVATE KEY-----`;
const LEGACY = `-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F17F5316E2BAC89\n\n${BODY.join("\n")}\n-----END RSA PRIVATE KEY-----`;

function keys(text: string): string[] {
  return detectPii(text).filter((f) => f.entityType === "api_key").map((f) => text.slice(f.start, f.end));
}

test("a PEM key with JSON \\n escapes is found whole", (t) => {
  const escaped = PEM.replace(/\n/g, "\\n");
  const text = `{"type": "service_account", "private_key_id": "abc", "private_key": "${escaped}\\n", "client_email": "svc@proj.iam.gserviceaccount.com"}`;
  t.deepEqual(keys(text), [escaped]);
  const crlf = PEM.replace(/\n/g, "\\r\\n");
  t.deepEqual(keys(`{"private_key": "${crlf}"}`), [crlf]);
  const redacted = maskSpans(text, detectPii(text), "redact");
  t.false(redacted.includes("MIIE"), redacted);
});

test("a legacy encrypted PEM with Proc-Type/DEK-Info headers is found whole (also CRLF and JSON-escaped)", (t) => {
  t.deepEqual(keys(`key:\n${LEGACY}\n`), [LEGACY]);
  const crlf = LEGACY.replace(/\n/g, "\r\n");
  t.deepEqual(keys(`key:\r\n${crlf}\r\n`), [crlf]);
  const escaped = LEGACY.replace(/\n/g, "\\n");
  t.deepEqual(keys(`{"key": "${escaped}"}`), [escaped]);
});

test("a PEM key cut after its headers or inside an escaped body still reaches the end of the text", (t) => {
  const cut = LEGACY.slice(0, LEGACY.indexOf("\n\n") + 10);
  t.deepEqual(keys(cut), [cut]);
  const escapedCut = PEM.replace(/\n/g, "\\n").slice(0, 80);
  t.deepEqual(keys(`{"private_key": "${escapedCut}`), [escapedCut]);
});
