// A rewritten body keeps the number literals JSON.parse cannot hold (integers beyond 2^53, exponents);
// everything else is written as JSON.stringify writes it.
import test from "ava";
import { stringifyKeepingNumbers } from "./json-keeping-numbers.js";

const BIG = "12345678901234567891";

/** The rewritten text of `original` after `change` (applied to its parse). */
function rewrite(original: string, change: (v: Record<string, unknown>) => void = () => {}): string {
  const v = JSON.parse(original.replace(/^\uFEFF/, "")) as Record<string, unknown>;
  change(v);
  return stringifyKeepingNumbers(v, original);
}

test("an integer beyond 2^53 elsewhere in a redacted body is written as sent, at any depth", (t) => {
  const original = `{"model":"gpt-4o","seed":${BIG},"messages":[{"role":"user","content":"mail jane@example.com"},{"role":"assistant","tool_calls":[{"input":{"order_id":${BIG},"ids":[1,${BIG}9,-${BIG}]}}]}]}`;
  const out = rewrite(original, (v) => {
    (v.messages as { content: string }[])[0]!.content = "mail [REDACTED:email]";
  });
  t.is(out, original.replace("mail jane@example.com", "mail [REDACTED:email]"));
  t.not(JSON.stringify(JSON.parse(original)), original, "plain JSON.stringify would have changed it");
});

test("exponent literals are kept; a number the rewrite changed is written as its new value", (t) => {
  t.is(rewrite(`{"a":1e400,"b":2.5E3,"c":-1e-7}`), `{"a":1e400,"b":2.5E3,"c":-1e-7}`);
  t.is(rewrite(`{"a":${BIG},"b":7}`, (v) => (v.a = 42)), `{"a":42,"b":7}`);
  // an element removed before it: the literal's path now holds another value, which is written as JSON.stringify would
  t.is(rewrite(`{"xs":[${BIG},98765432109876543210]}`, (v) => (v.xs as unknown[]).shift()), `{"xs":[${String(Number("98765432109876543210"))}]}`);
});

test("keys added, removed and repeated; escaped keys; a top-level literal", (t) => {
  t.is(
    rewrite(`{"model":"x","stream":true,"seed":${BIG}}`, (v) => {
      v.stream_options = { include_usage: true };
      delete v.model;
    }),
    `{"stream":true,"seed":${BIG},"stream_options":{"include_usage":true}}`,
  );
  // JSON.parse keeps the last of repeated keys: so does the rewrite
  t.is(rewrite(`{"a":${BIG},"a":1}`), `{"a":1}`);
  t.is(rewrite(`{"a":1,"a":${BIG}}`), `{"a":${BIG}}`);
  t.is(rewrite(`{"a\\"b":{"c\\u0041":${BIG}}}`), `{"a\\"b":{"cA":${BIG}}}`);
  t.is(stringifyKeepingNumbers(JSON.parse(BIG), BIG), BIG);
  t.is(rewrite(`\uFEFF {"n" : ${BIG} }`), `{"n":${BIG}}`);
});

test("texts without such literals give JSON.stringify's text, also when a string looks like one", (t) => {
  const samples = [
    `{"content":"card 4111111111111111 and 3e5 in a string","n":[1,2.5,-0,1.0,10.50],"t":true,"f":false,"z":null}`,
    `[{"a":{}},[],"x\\"\\\\y",12345678901234]`,
    `{"text":"1234567890123456789012"}`,
  ];
  let seed = 7;
  const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  const gen = (depth: number): unknown => {
    const k = rnd(depth > 3 ? 4 : 6);
    if (k === 0) return rnd(1000) - 500;
    if (k === 1) return `s${"0123456789".repeat(rnd(3))}e${rnd(9)}`;
    if (k === 2) return rnd(2) === 0;
    if (k === 3) return null;
    if (k === 4) return Array.from({ length: rnd(4) }, () => gen(depth + 1));
    return Object.fromEntries(Array.from({ length: rnd(4) }, (_, i) => [rnd(2) ? `k${i}` : String(rnd(20)), gen(depth + 1)]));
  };
  for (let i = 0; i < 300; i++) samples.push(JSON.stringify(gen(0), null, rnd(2) ? 2 : undefined));
  for (const s of samples) t.is(stringifyKeepingNumbers(JSON.parse(s), s), JSON.stringify(JSON.parse(s)), s);
  // undefined members and array holes are written as JSON.stringify writes them, also on a literal's path
  const v = JSON.parse(`{"a":[${BIG},2],"b":${BIG}}`) as { a: unknown[]; b?: unknown; c?: unknown };
  v.a[1] = undefined;
  v.c = undefined;
  t.is(stringifyKeepingNumbers(v, `{"a":[${BIG},2],"b":${BIG}}`), `{"a":[${BIG},null],"b":${BIG}}`);
});
