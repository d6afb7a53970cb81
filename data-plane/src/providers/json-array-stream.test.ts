// JsonArrayStream: elements of a streamed JSON array come out whole, whatever the chunking.
import test from "ava";
import { JsonArrayStream } from "./json-array-stream.js";

test("yields each element as it closes, with braces and quotes inside strings, for any split", (t) => {
  const elements = [{ a: 1, s: "brace } and [bracket] and \"quote\"" }, { b: [1, { c: "x" }] }, { d: "é✓" }];
  const text = `[${elements.map((e) => JSON.stringify(e)).join("\r\n,\r\n")}]`;
  const bytes = new TextEncoder().encode(text);
  for (const size of [1, 2, 3, 7, bytes.length]) {
    const got: unknown[] = [];
    const stream = new JsonArrayStream((s) => got.push(JSON.parse(s)));
    for (let i = 0; i < bytes.length; i += size) stream.push(bytes.subarray(i, i + size));
    stream.end();
    t.deepEqual(got, elements, `size ${size}`);
  }
});

test("a truncated array yields the complete elements only", (t) => {
  const got: unknown[] = [];
  const stream = new JsonArrayStream((s) => got.push(JSON.parse(s)));
  stream.push('[{"a":1},\n{"b":2},{"c":');
  stream.end();
  t.deepEqual(got, [{ a: 1 }, { b: 2 }]);
});

test("closed: only the outer array's own closing ] closes it (not one in a string or a nested array)", (t) => {
  const whole = new JsonArrayStream(() => undefined);
  whole.push('[{"a":"]"},{"b":[1,[2]]}');
  t.false(whole.closed, "every element came, the array did not close");
  whole.push("\r\n]");
  whole.end();
  t.true(whole.closed);
  const cut = new JsonArrayStream(() => undefined);
  cut.push('[{"a":1},{"b":');
  cut.end();
  t.false(cut.closed);
});
