// Keyset cursors: round trip, and times no row can have are refused as 400s (not passed on as an Invalid Date).
import test from "ava";
import { MAX_CURSOR_MS, decodeCursor, encodeCursor } from "./cursor.js";
import { isAppError } from "../errors/app-error.js";

const ID = "agt_01HZZZZZZZZZZZZZZZZZZZZZZZ";

test("a cursor round-trips up to the last millisecond of the bound", (t) => {
  for (const ms of [0, Date.parse("2026-11-22T10:00:00.123Z"), MAX_CURSOR_MS]) t.deepEqual(decodeCursor(encodeCursor({ t: ms, id: ID })), { t: ms, id: ID });
});

test("times past the bound are a bad_request, including those a Date cannot hold", (t) => {
  for (const ms of [MAX_CURSOR_MS + 1, 8_640_000_000_000_001, Number.MAX_SAFE_INTEGER]) {
    const e = t.throws(() => decodeCursor(encodeCursor({ t: ms, id: ID })));
    t.true(isAppError(e) && e.code === "bad_request", String(ms));
  }
});
