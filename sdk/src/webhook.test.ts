// X-Idp-Signature helpers against the Stripe test vector (research/building-blocks.md §4) and the
// negative vectors: changed body, stale and future timestamps, missing t, uppercase hex, spaces,
// v0 only, and rotation (several v1 entries, several secrets).
import test, { type ExecutionContext } from "ava";
import { createHmac } from "node:crypto";
import { computeSignature, constructWebhookEvent, parseSignatureHeader, signWebhook, verifyWebhook, WebhookSignatureError } from "./webhook.js";

const secret = "whsec_test_secret";
const body = '{"id":"evt_1","type":"user.created"}';
const t0 = 1700000000;
const vector = "f05b1ef15f6e243adcc340e544948703c6d81cf305301168ffc9986284c88f05";

test("the Stripe vector: same digest as the reference, and it verifies", async (t) => {
  t.is(await computeSignature(secret, t0, body), vector);
  t.is(createHmac("sha256", secret).update(`${t0}.${body}`).digest("hex"), vector);
  t.is(await signWebhook({ payload: body, secret, timestamp: t0 }), `t=${t0},v1=${vector}`);
  await t.notThrowsAsync(verifyWebhook({ payload: body, header: `t=${t0},v1=${vector}`, secret, nowSeconds: t0 + 10 }));
  await t.notThrowsAsync(verifyWebhook({ payload: new TextEncoder().encode(body), header: `t=${t0},v1=${vector}`, secret, nowSeconds: t0 }));
  t.deepEqual(await constructWebhookEvent({ payload: body, header: `t=${t0},v1=${vector}`, secret, nowSeconds: t0 }), { id: "evt_1", type: "user.created" });
});

const rejects = async (t: ExecutionContext, header: string | undefined, opts: { payload?: string; now?: number; secret?: string | string[] } = {}) => {
  await t.throwsAsync(verifyWebhook({ payload: opts.payload ?? body, header, secret: opts.secret ?? secret, nowSeconds: opts.now ?? t0 }), { instanceOf: WebhookSignatureError });
};

test("negative vectors are rejected", async (t) => {
  await rejects(t, `t=${t0},v1=${vector}`, { payload: body.replace("evt_1", "evt_2") });
  await rejects(t, `t=${t0},v1=${vector}`, { now: t0 + 301 });
  await rejects(t, `t=${t0},v1=${vector}`, { now: t0 - 301 });
  await rejects(t, `v1=${vector}`);
  await rejects(t, `t=${t0},v1=${vector.toUpperCase()}`);
  await rejects(t, `t=${t0}, v1=${vector}`);
  await rejects(t, `t=${t0},v0=${vector}`);
  await rejects(t, `t=${t0},t=${t0},v1=${vector}`);
  await rejects(t, `t=abc,v1=${vector}`);
  await rejects(t, `t=${t0},v1=${vector.slice(0, 62)}`);
  await rejects(t, undefined);
  await rejects(t, "");
  await rejects(t, `t=${t0},v1=${vector}`, { secret: "whsec_other" });
});

test("boundaries of the 5-minute window are accepted", async (t) => {
  await t.notThrowsAsync(verifyWebhook({ payload: body, header: `t=${t0},v1=${vector}`, secret, nowSeconds: t0 + 300 }));
  await t.notThrowsAsync(verifyWebhook({ payload: body, header: `t=${t0},v1=${vector}`, secret, nowSeconds: t0 - 300 }));
});

test("rotation: any v1 entry and any of several secrets may match", async (t) => {
  const other = await computeSignature("whsec_old", t0, body);
  await t.notThrowsAsync(verifyWebhook({ payload: body, header: `t=${t0},v1=${other},v1=${vector}`, secret, nowSeconds: t0 }));
  await t.notThrowsAsync(verifyWebhook({ payload: body, header: `t=${t0},v1=${other}`, secret: [secret, "whsec_old"], nowSeconds: t0 }));
  const both = await signWebhook({ payload: body, secret: ["whsec_new", secret], timestamp: t0 });
  t.deepEqual(parseSignatureHeader(both).signatures, [await computeSignature("whsec_new", t0, body), vector]);
  await t.notThrowsAsync(verifyWebhook({ payload: body, header: both, secret, nowSeconds: t0 }));
});

test("t is signed as its text: a header with leading zeros verifies only against a signature over those zeros", async (t) => {
  const padded = `00${t0}`;
  const overText = createHmac("sha256", secret).update(`${padded}.${body}`).digest("hex");
  await t.notThrowsAsync(verifyWebhook({ payload: body, header: `t=${padded},v1=${overText}`, secret, nowSeconds: t0 }));
  await rejects(t, `t=${padded},v1=${vector}`); // the digest over the number without its zeros
  t.is(await computeSignature(secret, padded, body), overText);
  t.deepEqual(parseSignatureHeader(`t=${padded},v1=${overText}`), { timestamp: t0, timestampText: padded, signatures: [overText] });
});

test("rotation with an empty slot: the empty secret is skipped, the real one still verifies; no secret at all is a TypeError", async (t) => {
  const header = `t=${t0},v1=${vector}`;
  await t.notThrowsAsync(verifyWebhook({ payload: body, header, secret: ["", secret], nowSeconds: t0 }));
  await rejects(t, header, { secret: ["", "other"] });
  await t.throwsAsync(verifyWebhook({ payload: body, header, secret: "", nowSeconds: t0 }), { instanceOf: TypeError, message: /no signing secret/ });
  await t.throwsAsync(signWebhook({ payload: body, secret: "" }), { instanceOf: TypeError });
});

test("signWebhook refuses a timestamp that is not whole seconds (its header would not parse)", async (t) => {
  await t.throwsAsync(signWebhook({ payload: body, secret, timestamp: t0 + 0.5 }), { instanceOf: TypeError });
  await t.throwsAsync(signWebhook({ payload: body, secret, timestamp: Date.now() /* ms, not s */ }), { instanceOf: TypeError, message: /whole unix seconds/ });
  const header = await signWebhook({ payload: body, secret, timestamp: t0 });
  t.is(parseSignatureHeader(header).timestamp, t0);
});
