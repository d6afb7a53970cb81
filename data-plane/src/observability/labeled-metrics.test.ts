// The hot path's counters and histograms render on /metrics exactly as prom-client's own would for the
// same updates (names, label order, buckets, +Inf, _sum, _count), so swapping them changed nothing a
// Prometheus scraper or dashboard sees.
import test from "ava";
import { Counter, Histogram, Registry } from "prom-client";
import { LabeledCounter, LabeledHistogram } from "./labeled-metrics.js";

const BUCKETS = [0.001, 0.01, 0.1, 1];

test("a labelled counter and histogram render the same text as prom-client's for the same updates", async (t) => {
  const ref = new Registry();
  const ours = new Registry();
  const refCounter = new Counter({ name: "x_requests_total", help: "requests", labelNames: ["provider", "outcome", "code"], registers: [ref] });
  const refHist = new Histogram({ name: "x_latency_seconds", help: "latency", labelNames: ["provider", "streamed"], buckets: BUCKETS, registers: [ref] });
  const refSingle = new Counter({ name: "x_cost_total", help: "cost", labelNames: ["provider"], registers: [ref] });
  const counter = new LabeledCounter({ name: "x_requests_total", help: "requests", labelNames: ["provider", "outcome", "code"], registers: [ours] });
  const hist = new LabeledHistogram({ name: "x_latency_seconds", help: "latency", labelNames: ["provider", "streamed"], buckets: BUCKETS, registers: [ours] });
  const single = new LabeledCounter({ name: "x_cost_total", help: "cost", labelNames: ["provider"], registers: [ours] });

  const updates: [string, string, string, number][] = [
    ["openai", "success", "none", 0.0004],
    ["openai", "success", "none", 0.02],
    ["anthropic", "error", "upstream_500", 0.001],
    ["openai", "blocked", "policy_violation", 3],
    ["google", "success", "none", 0.5],
    ["openai", "success", "none", 0.1],
  ];
  for (const [provider, outcome, code, seconds] of updates) {
    refCounter.inc({ provider, outcome, code });
    counter.inc(provider, outcome, code);
    const streamed = String(seconds > 0.05);
    refHist.observe({ provider, streamed }, seconds);
    hist.observe(seconds, provider, streamed);
    refSingle.inc({ provider }, seconds * 10);
    single.inc(provider, "", "", seconds * 10);
  }
  refCounter.inc({ provider: "cohere", outcome: "success", code: "none" }, 5);
  counter.inc("cohere", "success", "none", 5);

  const text = await ours.metrics();
  t.is(text, await ref.metrics());
  t.regex(text, /x_latency_seconds_bucket\{le="0.01",provider="openai",streamed="false"\} 1\n/);
  t.regex(text, /x_requests_total\{provider="openai",outcome="success",code="none"\} 3/);
});

test("values that are not finite are not recorded; more than three labels are refused", (t) => {
  const r = new Registry();
  const h = new LabeledHistogram({ name: "y_seconds", help: "y", labelNames: ["a"], buckets: BUCKETS, registers: [r] });
  h.observe(Number.NaN, "x");
  h.observe(Number.POSITIVE_INFINITY, "x");
  t.deepEqual(h.get().values, []);
  t.throws(() => new LabeledCounter({ name: "z_total", help: "z", labelNames: ["a", "b", "c", "d"], registers: [r] }), { message: /at most three labels/ });
});
