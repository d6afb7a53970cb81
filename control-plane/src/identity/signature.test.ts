// The webhook signature verifier against the Stripe test vector (research/building-blocks.md §4) and
// the negative vectors listed there, and the timestamp signed as the text the header carries.
import test from "ava";
import { createHmac } from "node:crypto";
import { computeSignature, parseSignatureHeader, signatureHeader, verifySignature } from "./signature.js";

const SECRET = "whsec_test_secret";
const T = 1700000000;
const BODY = Buffer.from('{"id":"evt_1","type":"user.created"}');
const DIGEST = "f05b1ef15f6e243adcc340e544948703c6d81cf305301168ffc9986284c88f05";

test("the Stripe vector: digest and acceptance", (t) => {
  t.is(computeSignature(SECRET, T, BODY), DIGEST);
  t.deepEqual(verifySignature(`t=${T},v1=${DIGEST}`, BODY, SECRET, T), { ok: true, timestamp: T });
  t.is(signatureHeader(SECRET, T, BODY), `t=${T},v1=${DIGEST}`);
});

test("one byte of the body changed is rejected", (t) => {
  const tampered = Buffer.from(BODY);
  tampered[10] = tampered[10]! ^ 1;
  t.deepEqual(verifySignature(`t=${T},v1=${DIGEST}`, tampered, SECRET, T), { ok: false, reason: "no_matching_signature" });
  t.deepEqual(verifySignature(`t=${T},v1=${DIGEST}`, BODY, "whsec_other", T), { ok: false, reason: "no_matching_signature" });
});

test("the 300 s window holds in both directions", (t) => {
  const h = `t=${T},v1=${DIGEST}`;
  t.true(verifySignature(h, BODY, SECRET, T + 300).ok);
  t.true(verifySignature(h, BODY, SECRET, T - 300).ok);
  t.deepEqual(verifySignature(h, BODY, SECRET, T + 301), { ok: false, reason: "timestamp_out_of_tolerance" });
  t.deepEqual(verifySignature(h, BODY, SECRET, T - 301), { ok: false, reason: "timestamp_out_of_tolerance" });
});

test("malformed headers: missing t, non-integer t, duplicate t, no v1, v0 only, spaces, empty", (t) => {
  for (const h of [`v1=${DIGEST}`, `t=17e8,v1=${DIGEST}`, `t=${T},t=${T},v1=${DIGEST}`, `t=${T}`, `t=${T},v0=${DIGEST}`, `t=${T}, v1=${DIGEST}`, "garbage", `t=-${T},v1=${DIGEST}`]) {
    t.false(verifySignature(h, BODY, SECRET, T).ok, h);
  }
  t.deepEqual(verifySignature(undefined, BODY, SECRET, T), { ok: false, reason: "missing" });
  t.deepEqual(verifySignature("", BODY, SECRET, T), { ok: false, reason: "missing" });
  t.is(parseSignatureHeader("t=1,v1"), "malformed");
});

test("uppercase hex, short and long digests never match (and never throw)", (t) => {
  for (const d of [DIGEST.toUpperCase(), DIGEST.slice(0, 62), `${DIGEST}00`, "zz".repeat(32), ""]) {
    t.deepEqual(verifySignature(`t=${T},v1=${d}`, BODY, SECRET, T), { ok: false, reason: "no_matching_signature" }, d);
  }
});

test("rotation: two v1 entries, either one valid, in either position", (t) => {
  const other = computeSignature("whsec_old_secret", T, BODY);
  t.true(verifySignature(`t=${T},v1=${other},v1=${DIGEST}`, BODY, SECRET, T).ok);
  t.true(verifySignature(`t=${T},v1=${DIGEST},v1=${other}`, BODY, SECRET, T).ok);
  t.true(verifySignature(signatureHeader(["whsec_old_secret", SECRET], T, BODY), BODY, SECRET, T).ok);
  t.false(verifySignature(`t=${T},v1=${other},v0=${DIGEST}`, BODY, SECRET, T).ok);
});

test("the digest covers the timestamp's text as sent: leading zeros are signed, the window uses the value", (t) => {
  const text = `00${T}`;
  const literal = computeSignature(SECRET, text, BODY);
  t.not(literal, DIGEST);
  // The HMAC input is `<t as sent>.<body>`, written out here without the module's helpers.
  t.is(literal, createHmac("sha256", SECRET).update(`${text}.`).update(BODY).digest("hex"));
  t.deepEqual(verifySignature(`t=${text},v1=${literal}`, BODY, SECRET, T), { ok: true, timestamp: T });
  // A header whose t was rewritten (zeros added) no longer matches the digest made over the original text.
  t.deepEqual(verifySignature(`t=${text},v1=${DIGEST}`, BODY, SECRET, T), { ok: false, reason: "no_matching_signature" });
  t.deepEqual(verifySignature(`t=0${T},v1=${literal}`, BODY, SECRET, T), { ok: false, reason: "no_matching_signature" });
  // The ±300 s window is judged on the numeric value.
  t.true(verifySignature(`t=${text},v1=${literal}`, BODY, SECRET, T + 300).ok);
  t.deepEqual(verifySignature(`t=${text},v1=${literal}`, BODY, SECRET, T + 301), { ok: false, reason: "timestamp_out_of_tolerance" });
  t.deepEqual(parseSignatureHeader(`t=${text},v1=${literal}`), { timestamp: T, timestampText: text, v1: [literal] });
  t.is(signatureHeader(SECRET, text, BODY), `t=${text},v1=${literal}`);
});
