// Reconnect pacing: after a working Sync stream is lost the sidecar retries within 0.5 s for a while
// (a control plane back from a restart hears from it at once), else the usual backoff up to 5 s.
import test from "ava";
import { backoffMs, FAST_RECONNECT_WINDOW_MS, syncReconnectMs } from "./backoff.js";

const range = (f: () => number) => {
  let lo = Infinity;
  let hi = 0;
  for (let i = 0; i < 2000; i++) {
    const v = f();
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  return [lo, hi] as const;
};

test("within the window after a working stream was lost, retries come 25–500 ms apart, however many fail", (t) => {
  const [lo1, hi1] = range(() => syncReconnectMs(1, 0));
  t.true(lo1 >= 25 && hi1 < 50, `first retry ${lo1}–${hi1} ms`);
  for (const attempt of [5, 10, 100]) {
    const [lo, hi] = range(() => syncReconnectMs(attempt, FAST_RECONNECT_WINDOW_MS - 1));
    t.true(lo >= 250 && hi < 500, `attempt ${attempt}: ${lo}–${hi} ms`);
  }
});

test("at start and once the window has passed, the usual backoff grows to 5 s", (t) => {
  for (const since of [undefined, FAST_RECONNECT_WINDOW_MS, 10 * FAST_RECONNECT_WINDOW_MS]) {
    const [lo, hi] = range(() => syncReconnectMs(10, since));
    t.true(lo >= 2500 && hi < 5000, `since ${since}: ${lo}–${hi} ms`);
  }
  const [lo, hi] = range(() => backoffMs(1));
  t.true(lo >= 100 && hi < 200);
});
