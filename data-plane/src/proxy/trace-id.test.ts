import test from "ava";
import { decodeTime } from "ulid";
import { newTraceId } from "./trace-id.js";

test("trace ids are trc_ + a ULID whose time is the request's millisecond", (t) => {
  const ms = Date.UTC(2026, 10, 21, 8, 0, 0, 123);
  const id = newTraceId(ms);
  t.regex(id, /^trc_[0-9A-HJKMNP-TV-Z]{26}$/);
  t.is(decodeTime(id.slice(4)), ms);
});

test("ids increase strictly, within a millisecond and across a clock step back", (t) => {
  const base = Date.UTC(2027, 0, 1);
  const ids = [newTraceId(base), newTraceId(base), newTraceId(base), newTraceId(base + 1), newTraceId(base - 50), newTraceId(base + 2)];
  for (let i = 1; i < ids.length; i++) t.true(ids[i]! > ids[i - 1]!, `${ids[i - 1]} < ${ids[i]}`);
  t.is(new Set(ids).size, ids.length);
});

test("the random part differs between milliseconds", (t) => {
  const base = Date.UTC(2028, 0, 1);
  const a = newTraceId(base).slice(14);
  const b = newTraceId(base + 1).slice(14);
  t.not(a, b);
});
